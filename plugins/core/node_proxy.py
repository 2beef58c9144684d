"""``nodes/proxy``: requests passed on to a node's kubelet (``pkg/registry/core/node/rest``).

Where a kubelet listens comes from its Node (``NodeConnectionInfoGetter``): the first
address of the preferred types (``--kubelet-preferred-address-types``' default order:
Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP) and the port the kubelet
reported in ``status.daemonEndpoints`` (10250 when it reported none), over HTTPS without
verifying the kubelet's serving certificate (kube-apiserver's default without
``--kubelet-certificate-authority``). As upstream, only globally routable addresses are
proxied to (``address not allowed`` otherwise), and a kubelet that cannot be reached is
answered with a 500 naming why, in Go's words (``dial tcp 10.0.0.7:10250: connect:
connection refused``); a node without a usable address, ``no preferred addresses found;
known addresses: [...]``.

``connection_info`` is what ``pods/log`` and the other kubelet-bound pod subresources use
to find a pod's kubelet.
"""

from __future__ import annotations

import errno
import http.client
import ipaddress
import os
import socket
import ssl
from dataclasses import dataclass

from kapiserver import errors

from .kind_helpers import as_dict, as_int, as_list, as_str, status_of

#: ``--kubelet-preferred-address-types``' default.
PREFERRED_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")
#: ``--kubelet-port``' default.
KUBELET_PORT = 10250
#: The kubelet transport's dial timeout.
DIAL_TIMEOUT = 30.0
VERBS = ("create", "delete", "get", "patch", "update")
CHUNK = 64 * 1024
_HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
                         "te", "trailer", "transfer-encoding", "upgrade", "host",
                         "content-length", "authorization"))


@dataclass(frozen=True)
class ConnectionInfo:
    """Where a node's kubelet answers."""

    scheme: str
    hostname: str
    port: int


def connection_info(node: dict) -> ConnectionInfo:
    """``NodeConnectionInfoGetter.GetConnectionInfo`` for a stored Node."""
    addresses = [as_dict(a) for a in as_list(status_of(node).get("addresses"))]
    host = None
    for kind in PREFERRED_ADDRESS_TYPES:
        for address in addresses:
            if address.get("type") == kind:
                host = as_str(address.get("address"))
                break
        if host is not None:
            break
    if host is None:
        known = " ".join(f"{{{as_str(a.get('type'))} {as_str(a.get('address'))}}}"
                         for a in addresses)
        raise errors.Unknown(f"no preferred addresses found; known addresses: [{known}]")
    endpoint = as_dict(as_dict(status_of(node).get("daemonEndpoints")).get("kubeletEndpoint"))
    port = as_int(endpoint.get("Port"))
    return ConnectionInfo("https", host, port if port > 0 else KUBELET_PORT)


def _global_unicast(address: str) -> bool:
    """Go's ``IP.IsGlobalUnicast``."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (ip.is_unspecified or ip.is_loopback or ip.is_multicast or ip.is_link_local
                or ip == ipaddress.ip_address("255.255.255.255"))


def check_proxyable(hostname: str) -> None:
    """``isProxyableHostname``: every address the name resolves to is globally routable."""
    try:
        found = {info[4][0] for info in socket.getaddrinfo(hostname, None,
                                                           proto=socket.IPPROTO_TCP)}
    except (socket.gaierror, UnicodeError):
        raise errors.BadRequest(f"lookup {hostname}: no such host") from None
    if not found:
        raise errors.BadRequest("no addresses for hostname")
    if not all(_global_unicast(address) for address in found):
        raise errors.BadRequest("address not allowed")


def _host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def dial_error(err: BaseException, host: str, port: int) -> str:
    """A transport's failure as Go's ``http.Transport`` words it."""
    target = _host_port(host, port)
    if isinstance(err, (socket.timeout, TimeoutError)):
        return f"dial tcp {target}: i/o timeout"
    if isinstance(err, ssl.SSLError):
        reason = (err.reason or str(err)).replace("_", " ").lower()
        return f"remote error: tls: {reason}" if "alert" in reason else f"tls: {reason}"
    if isinstance(err, http.client.HTTPException) or isinstance(err, ConnectionResetError):
        return "EOF"
    if isinstance(err, OSError) and err.errno in (errno.ECONNREFUSED, errno.EHOSTUNREACH,
                                                  errno.ENETUNREACH, errno.ECONNABORTED):
        text = os.strerror(err.errno)
        return f"dial tcp {target}: connect: {text[0].lower() + text[1:]}"
    return str(err)


class NodeProxyHandler:
    """Serves ``nodes/{name}/proxy[/path]`` over the nodes' store."""

    #: ``proxyMethods``, and the ``/{path}`` routes: what OpenAPI describes.
    connect_methods = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
    connect_subpath = True

    def __init__(self, store, server):
        import dataclasses

        self.store = store
        self.server = server
        self.verbs = VERBS
        #: What discovery says of ``nodes/proxy``: ``NodeProxyOptions``.
        self.spec = dataclasses.replace(store.spec, kind="NodeProxyOptions")
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE

    def serve(self, ctx):
        from flask import Response

        info = ctx.info
        if info.verb not in self.verbs:
            raise errors.MethodNotAllowed()
        from kapiserver.endpoints.connect import admit_connect

        admit_connect(ctx, self.spec, "/".join(info.parts[3:]))
        target = connection_info(self.store.get("", info.name))
        check_proxyable(target.hostname)
        request = ctx.request
        path = self._proxied_path(request.path, info.name)
        if request.query_string:
            path += "?" + request.query_string.decode("latin-1")
        headers = [(k, v) for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP]
        body = request.get_data() if request.method not in ("GET", "HEAD") else None
        conn = http.client.HTTPSConnection(target.hostname, target.port, context=self.context,
                                           timeout=DIAL_TIMEOUT)
        try:
            conn.putrequest(request.method, path, skip_accept_encoding=True)
            for key, value in headers:
                conn.putheader(key, value)
            if body is not None:
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            conn.sock.settimeout(None)
            response = conn.getresponse()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            raise errors.Unknown(dial_error(err, target.hostname, target.port)) from None
        out = [(k, v) for k, v in response.getheaders() if k.lower() not in _HOP_BY_HOP]
        return Response(self._stream(conn, response), response.status, headers=out,
                        direct_passthrough=True)

    @staticmethod
    def _proxied_path(request_path: str, name: str) -> str:
        """The path after ``/proxy`` (``/`` when none), trailing slash kept."""
        marker = f"/nodes/{name}/proxy"
        index = request_path.find(marker)
        rest = request_path[index + len(marker):] if index >= 0 else ""
        return rest if rest.startswith("/") else "/" + rest

    @staticmethod
    def _stream(conn, response):
        try:
            while True:
                chunk = response.read1(CHUNK)
                if not chunk:
                    break
                yield chunk
        except (OSError, http.client.HTTPException):
            pass
        finally:
            response.close()
            conn.close()
