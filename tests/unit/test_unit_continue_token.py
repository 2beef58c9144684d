"""Continue tokens (``registry.store``): what a list writes reads back; anything else a
client sends is a 400, never a 500."""

import base64
import json

import pytest

from kapiserver import errors
from kapiserver.registry.store import decode_continue, encode_continue


def token(value) -> str:
    raw = value if isinstance(value, bytes) else json.dumps(value).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_a_token_reads_back():
    assert decode_continue(encode_continue(42, "ns/name\x00")) == (42, "ns/name\x00")


@pytest.mark.parametrize("sent", [
    "abc", "%%%", "eyJ2Ijo", token([]), token("s"), token(1), token(None), token(b"\xff\xfe"),
    token({"v": 1}), token({"v": "x"}), token({"v": "meta.k8s.io/v1"}),
    token({"v": "meta.k8s.io/v1", "rv": "x", "start": "a"}),
    token({"v": "meta.k8s.io/v1", "rv": [], "start": "a"}),
])
def test_a_token_that_is_no_continue_object_is_a_bad_request(sent):
    with pytest.raises(errors.BadRequest) as caught:
        decode_continue(sent)
    assert caught.value.message == ("continue key is not valid: encoded continue token is "
                                    "invalid")


@pytest.mark.parametrize("sent", [
    token({"v": "meta.k8s.io/v1", "rv": -1, "start": "a"}),
    token({"v": "meta.k8s.io/v1", "rv": 1, "start": "../../x"}),
    token({"v": "meta.k8s.io/v1", "rv": 1, "start": "/etc"}),
])
def test_a_token_out_of_bounds_is_a_bad_request(sent):
    with pytest.raises(errors.BadRequest) as caught:
        decode_continue(sent)
    assert caught.value.message == "continue key is not valid: invalid continue token"
