"""ConfigMaps: validation of data keys and sizes, ``immutable``, and the NAME/DATA/AGE table."""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.validation import is_config_map_key
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.strategy import Strategy

CONFIGMAPS = ResourceSpec(group="", version="v1", kind="ConfigMap", resource="configmaps",
                          singular="configmap", namespaced=True, short_names=("cm",),
                          storage_version_hash="qFsyl6wFWjQ=")
#: ``core.MaxSecretSize``: data and binaryData together.
MAX_SIZE = 1024 * 1024
IMMUTABLE = "field is immutable when `immutable` is set"
DATA_COLUMN = {"name": "Data", "type": "string", "format": "",
               "description": "Data contains the configuration data. Each key must consist of "
                              "alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 "
                              "byte sequences must use the BinaryData field. The keys stored in "
                              "Data must not overlap with the keys in the BinaryData field, this "
                              "is enforced during validation process.",
               "priority": 0}


class ConfigMapStrategy(Strategy):
    """``pkg/registry/core/configmap`` strategy and ``ValidateConfigMap``."""

    def validate(self, obj):
        errors = super().validate(obj)
        data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
        size = 0
        for field, bag, other, name in (("data", data, binary, "binaryData"),
                                        ("binaryData", binary, data, "data")):
            for key, value in bag.items():
                path = FieldPath(field).key(key)
                for message in is_config_map_key(key):
                    errors.append(FieldError.invalid(path, key, message))
                if key in other:
                    errors.append(FieldError.invalid(path, key,
                                                     f"duplicate of key present in {name}"))
                size += len(value) if isinstance(value, str) else 0
        if size > MAX_SIZE:
            errors.append(FieldError.too_long(FieldPath(""), "", MAX_SIZE))
        return errors

    def validate_update(self, new, old):
        errors = super().validate_update(new, old)
        if old.get("immutable"):
            if not new.get("immutable"):
                errors.append(FieldError.forbidden(FieldPath("immutable"), IMMUTABLE))
            for field in ("data", "binaryData"):
                if new.get(field) != old.get(field):
                    errors.append(FieldError.forbidden(FieldPath(field), IMMUTABLE))
        return errors

    def table_columns(self):
        return [NAME_COLUMN, DATA_COLUMN, AGE_COLUMN]

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        count = len(obj.get("data") or {}) + len(obj.get("binaryData") or {})
        return [meta.get("name", ""), count, age(meta.get("creationTimestamp"))]
