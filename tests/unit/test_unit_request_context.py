"""RequestContext: the client certificate read once per connection; header-name prefixes
found in the raw headers or the WSGI environ."""

from types import SimpleNamespace

from kapiserver.endpoints.context import RAW_HEADERS, RequestContext


class Socket:
    """A TLS socket as gunicorn hands it over: counts how often its certificate is read."""

    def __init__(self, der=b"\x30\x00", info=None, error=None):
        self.der, self.error, self.reads = der, error, 0
        self.info = {"subject": ()} if info is None else info

    def getpeercert(self, binary_form=False):
        self.reads += 1
        if self.error is not None:
            raise self.error
        return self.der if binary_form else self.info


def context(environ) -> RequestContext:
    return RequestContext(SimpleNamespace(environ=environ), None, "audit-id")


def test_the_certificate_is_read_once_per_connection():
    sock = Socket(info={"subject": ((("commonName", "dana"),),)})
    for _ in range(3):  # three requests on one connection
        ctx = context({"gunicorn.socket": sock})
        assert ctx.peer_certificate == b"\x30\x00"
        assert ctx.peer_certificate_info == {"subject": ((("commonName", "dana"),),)}
    assert sock.reads == 2  # DER and decoded, once
    other = Socket(der=b"\x30\x01")
    assert context({"gunicorn.socket": other}).peer_certificate == b"\x30\x01"


def test_no_certificate_and_a_failed_read_are_none():
    assert context({}).peer_certificate is None
    assert context({"gunicorn.socket": object()}).peer_certificate_info is None
    anonymous = Socket(der=None, info={})
    ctx = context({"gunicorn.socket": anonymous})
    assert (ctx.peer_certificate, ctx.peer_certificate_info) == (None, None)
    failing = Socket(error=ValueError("handshake not done"))
    for _ in range(2):  # not remembered: read again
        assert context({"gunicorn.socket": failing}).peer_certificate is None
    assert failing.reads == 2


def test_header_prefix_in_raw_headers_and_in_the_environ():
    raw = context({RAW_HEADERS: [("Accept", "*/*"), ("Impersonate-User", "bob")]})
    assert raw.has_header_prefix("impersonate-")
    assert not context({RAW_HEADERS: [("Accept", "*/*")],
                        "HTTP_IMPERSONATE_USER": "x"}).has_header_prefix("impersonate-")
    assert context({"HTTP_IMPERSONATE_EXTRA_SCOPES": "a"}).has_header_prefix("impersonate-")
    assert not context({"HTTP_ACCEPT": "*/*"}).has_header_prefix("impersonate-")
