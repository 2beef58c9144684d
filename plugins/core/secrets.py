"""Secrets: base64 ``data``, ``stringData``, per-type required keys, ``immutable``, their table."""

import base64
import json

from kapiserver import errors
from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import (decode_base64, is_config_map_key,
                                                validate_immutable_field)
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy
from kapiserver.runtime.gotypes import json_kind

SECRETS = ResourceSpec(group="", version="v1", kind="Secret", resource="secrets",
                       singular="secret", namespaced=True, selectable_fields=("type",),
                       storage_version_hash="S6u1pOWzb84=")
#: ``core.MaxSecretSize``: the decoded bytes of all values together.
MAX_SIZE = 1024 * 1024
IMMUTABLE = "field is immutable when `immutable` is set"
REDACTED = "<secret contents redacted>"

OPAQUE = "Opaque"
SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"
DOCKERCFG, DOCKERCFG_KEY = "kubernetes.io/dockercfg", ".dockercfg"
DOCKER_CONFIG_JSON, DOCKER_CONFIG_JSON_KEY = "kubernetes.io/dockerconfigjson", ".dockerconfigjson"
BASIC_AUTH, BASIC_AUTH_KEYS = "kubernetes.io/basic-auth", ("username", "password")
SSH_AUTH, SSH_AUTH_KEY = "kubernetes.io/ssh-auth", "ssh-privatekey"
TLS, TLS_KEYS = "kubernetes.io/tls", ("tls.crt", "tls.key")

TYPE_COLUMN = {"name": "Type", "type": "string", "format": "",
               "description": "Used to facilitate programmatic handling of secret data. More "
                              "info: https://kubernetes.io/docs/concepts/configuration/secret/"
                              "#secret-types",
               "priority": 0}
DATA_COLUMN = {"name": "Data", "type": "string", "format": "",
               "description": "Data contains the secret data. Each key must consist of "
                              "alphanumeric characters, '-', '_' or '.'. The serialized form of "
                              "the secret data is a base64 encoded string, representing the "
                              "arbitrary (possibly non-string) data value here. Described in "
                              "https://tools.ietf.org/html/rfc4648#section-4",
               "priority": 0}


def _decode_error(detail: str) -> errors.BadRequest:
    # What upstream's handler answers when the body does not decode into a v1.Secret.
    return errors.BadRequest(f'Secret in version "v1" cannot be handled as a Secret: {detail}')


def decode_data(obj: dict) -> None:
    """Check ``data`` decodes as ``map[string][]byte``; fold ``stringData`` into it.

    Upstream's decoding: a value that is not base64 fails the request (400) before
    anything else; ``stringData`` overwrites ``data`` keys and is never stored.
    """
    data = obj.get("data")
    if data is not None and not isinstance(data, dict):
        raise _decode_error("json: cannot unmarshal " + json_kind(data) + " into Go struct "
                            "field Secret.data of type map[string][]uint8")
    for value in (data or {}).values():
        if value is None:
            continue
        if not isinstance(value, str):
            raise _decode_error(f"json: cannot unmarshal {json_kind(value)} into Go struct "
                                "field Secret.data of type []uint8")
        try:
            decode_base64(value)
        except ValueError as err:
            raise _decode_error(str(err)) from None
    string_data = obj.pop("stringData", None)
    if string_data is not None and not isinstance(string_data, dict):
        raise _decode_error("json: cannot unmarshal " + json_kind(string_data) + " into Go "
                            "struct field Secret.stringData of type map[string]string")
    for key, value in (string_data or {}).items():
        if value is not None and not isinstance(value, str):
            raise _decode_error(f"json: cannot unmarshal {json_kind(value)} into Go struct "
                                "field Secret.stringData of type string")
        if obj.get("data") is None:
            obj["data"] = {}
        obj["data"][key] = base64.b64encode((value or "").encode()).decode()


def _bytes(value) -> bytes:
    try:
        return decode_base64(value) if isinstance(value, str) else b""
    except ValueError:
        return b""


def _go_json_object_error(raw: bytes) -> str | None:
    """Why ``json.Unmarshal(raw, &map[string]interface{}{})`` fails, worded as Go's errors."""
    text = raw.decode("utf-8", "replace")
    if not text.strip():
        return "unexpected end of JSON input"
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        if err.pos >= len(text.rstrip()):
            return "unexpected end of JSON input"
        return f"invalid character {text[err.pos]!r} looking for beginning of value"
    if value is None or isinstance(value, dict):
        return None
    return ("json: cannot unmarshal " + json_kind(value)
            + " into Go value of type map[string]interface {}")


class SecretStrategy(Strategy):
    """``pkg/registry/core/secret`` strategy and ``ValidateSecret``/``ValidateSecretUpdate``."""

    def apply_defaults(self, obj):
        decode_data(obj)
        if not obj.get("type"):
            obj["type"] = OPAQUE  # SetDefaults_Secret

    def prepare_for_create(self, obj):
        super().prepare_for_create(obj)
        self.apply_defaults(obj)  # idempotent: also covers writes the store does not default

    def prepare_for_update(self, new, old):
        super().prepare_for_update(new, old)
        self.apply_defaults(new)

    def validate(self, obj):
        errs = super().validate(obj)
        data = obj.get("data") or {}
        data_path = FieldPath("data")
        size = 0
        for key, value in data.items():
            errs += [FieldError.invalid(data_path.key(key), key, message)
                     for message in is_config_map_key(key)]
            size += len(_bytes(value))
        if size > MAX_SIZE:
            errs.append(FieldError.too_long(data_path, "", MAX_SIZE))
        secret_type = obj.get("type") or ""
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if secret_type == SERVICE_ACCOUNT_TOKEN:
            if not annotations.get(SERVICE_ACCOUNT_NAME_KEY):
                errs.append(FieldError.required(
                    FieldPath("metadata", "annotations").key(SERVICE_ACCOUNT_NAME_KEY)))
        elif secret_type in (DOCKERCFG, DOCKER_CONFIG_JSON):
            key = DOCKERCFG_KEY if secret_type == DOCKERCFG else DOCKER_CONFIG_JSON_KEY
            if key not in data:
                errs.append(FieldError.required(data_path.key(key)))
            elif (problem := _go_json_object_error(_bytes(data[key]))) is not None:
                errs.append(FieldError.invalid(data_path.key(key), REDACTED, problem))
        elif secret_type == BASIC_AUTH:
            # Either may be empty, but one of them must be there.
            if not any(key in data for key in BASIC_AUTH_KEYS):
                errs += [FieldError.required(data_path.key(key)) for key in BASIC_AUTH_KEYS]
        elif secret_type == SSH_AUTH:
            if not _bytes(data.get(SSH_AUTH_KEY)):
                errs.append(FieldError.required(data_path.key(SSH_AUTH_KEY)))
        elif secret_type == TLS:
            errs += [FieldError.required(data_path.key(key)) for key in TLS_KEYS
                     if key not in data]
        return errs

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_core_object_meta_update

        errs = validate_core_object_meta_update(new.get("metadata") or {},
                                                old.get("metadata") or {})
        errs += validate_immutable_field(new.get("type") or "", old.get("type") or "",
                                         FieldPath("type"))
        if old.get("immutable"):
            if not new.get("immutable"):
                errs.append(FieldError.forbidden(FieldPath("immutable"), IMMUTABLE))
            decoded = ({k: _bytes(v) for k, v in (new.get("data") or {}).items()},
                       {k: _bytes(v) for k, v in (old.get("data") or {}).items()})
            if decoded[0] != decoded[1]:
                errs.append(FieldError.forbidden(FieldPath("data"), IMMUTABLE))
        return errs + self.validate(new)

    def selectable_fields(self, obj):
        fields = super().selectable_fields(obj)
        fields["type"] = obj.get("type") or ""
        return fields

    def table_columns(self):
        return [NAME_COLUMN, TYPE_COLUMN, DATA_COLUMN, AGE_COLUMN]

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), obj.get("type") or "", len(obj.get("data") or {}),
                age(meta.get("creationTimestamp"))]
