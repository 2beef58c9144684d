"""Unit tests of the secret strategy: decoding, stringData, per-type keys, the table."""

import base64

import pytest

from kapiserver import errors
from kapiserver.apimachinery.field_errors import aggregate_message
from kapiserver_plugins.core.secrets import SECRETS, SecretStrategy, decode_data

STRATEGY = SecretStrategy(SECRETS)


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def secret(**fields) -> dict:
    return {"metadata": {"name": "s", "namespace": "default"}, **fields}


@pytest.mark.parametrize("data, detail", [
    ({"a": "abc"}, "illegal base64 data at input byte 0"),
    ({"a": "YWJj!"}, "illegal base64 data at input byte 4"),
    ({"a": 12}, "json: cannot unmarshal number into Go struct field Secret.data of type "
                "[]uint8"),
    ("text", "json: cannot unmarshal string into Go struct field Secret.data of type "
             "map[string][]uint8"),
])
def test_data_that_does_not_decode_is_a_bad_request(data, detail):
    with pytest.raises(errors.BadRequest) as err:
        decode_data(secret(data=data))
    assert err.value.message == f'Secret in version "v1" cannot be handled as a Secret: {detail}'


def test_string_data_overwrites_data_and_is_dropped():
    obj = secret(data={"a": b64("old"), "b": b64("kept")}, stringData={"a": "new", "c": ""})
    STRATEGY.prepare_for_create(obj)
    assert obj["data"] == {"a": b64("new"), "b": b64("kept"), "c": ""}
    assert "stringData" not in obj and obj["type"] == "Opaque"
    # Newlines inside base64 are ignored, as Go's decoder ignores them.
    decode_data(secret(data={"a": "YW\nJj"}))


@pytest.mark.parametrize("payload, detail", [
    ("", "unexpected end of JSON input"),
    ("{", "unexpected end of JSON input"),
    ("[1]", "json: cannot unmarshal array into Go value of type map[string]interface {}"),
    ("x", "invalid character 'x' looking for beginning of value"),
])
def test_docker_config_must_be_a_json_object(payload, detail):
    obj = secret(type="kubernetes.io/dockerconfigjson", data={".dockerconfigjson": b64(payload)})
    assert aggregate_message(STRATEGY.validate(obj)) == (
        'data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": ' + detail)
    ok = secret(type="kubernetes.io/dockercfg", data={".dockercfg": b64('{"auths": {}}')})
    assert STRATEGY.validate(ok) == []


def test_type_specific_keys():
    assert STRATEGY.validate(secret(type="kubernetes.io/basic-auth",
                                    data={"password": ""})) == []
    assert aggregate_message(STRATEGY.validate(secret(type="kubernetes.io/ssh-auth",
                                                      data={"ssh-privatekey": ""}))) == \
        "data[ssh-privatekey]: Required value"
    token = secret(type="kubernetes.io/service-account-token")
    token["metadata"]["annotations"] = {"kubernetes.io/service-account.name": "default"}
    assert STRATEGY.validate(token) == []
    assert STRATEGY.validate(secret(type="example.com/custom")) == []


def test_update_rules():
    old = secret(type="Opaque", immutable=True, data={"a": b64("1")})
    old["metadata"]["resourceVersion"] = "5"
    same = secret(type="Opaque", immutable=True, data={"a": "MQ=="})
    same["metadata"]["resourceVersion"] = "5"
    assert STRATEGY.validate_update(same, old) == []
    thawed = secret(type="Opaque", data={"a": b64("1")})
    thawed["metadata"]["resourceVersion"] = "5"
    assert aggregate_message(STRATEGY.validate_update(thawed, old)) == (
        "immutable: Forbidden: field is immutable when `immutable` is set")


def test_table_and_fields():
    obj = secret(type="kubernetes.io/tls", data={"tls.crt": "", "tls.key": ""})
    obj["metadata"]["creationTimestamp"] = None
    assert STRATEGY.table_cells(obj) == ["s", "kubernetes.io/tls", 2, "<unknown>"]
    assert STRATEGY.selectable_fields(obj) == {"metadata.name": "s",
                                               "metadata.namespace": "default",
                                               "type": "kubernetes.io/tls"}
