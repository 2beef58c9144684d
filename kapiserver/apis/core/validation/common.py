"""What every pod-spec validator shares: reading decoded JSON safely, and upstream's small
validators of names, paths and file modes (``pkg/apis/core/validation``).

Objects arrive as decoded JSON; a member of the wrong JSON type reads as Go's zero value
(the codec refuses such input before validation runs, so this is only a safety net).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ....apimachinery import validation as apivalidation
from ....apimachinery.field_errors import FieldError, FieldPath

FILE_MODE_ERROR_MSG = "must be a number between 0 and 0777 (octal), both inclusive"
IS_NOT_POSITIVE_ERROR_MSG = "must be greater than zero"
IS_NEGATIVE_ERROR_MSG = apivalidation.IS_NEGATIVE_ERROR_MSG
FIELD_IMMUTABLE_ERROR_MSG = apivalidation.FIELD_IMMUTABLE_ERROR_MSG
INT32_MAX = (1 << 31) - 1

NameFn = Callable[[str, bool], list]


# -- reading decoded JSON -----------------------------------------------------------------

def s(obj: dict, key: str) -> str:
    """A string member, "" when missing."""
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def i(obj: dict, key: str) -> int:
    """An integer member, 0 when missing."""
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def opt_int(obj: dict, key: str) -> int | None:
    """An integer pointer member: ``None`` when missing (or not an integer)."""
    value = obj.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def opt_str(obj: dict, key: str) -> str | None:
    """A string pointer member: ``None`` when missing."""
    value = obj.get(key)
    return value if isinstance(value, str) else None


def b(obj: dict, key: str) -> bool:
    """A bool member, false when missing."""
    return obj.get(key) is True


def opt_bool(obj: dict, key: str) -> bool | None:
    """A bool pointer member: ``None`` when missing."""
    value = obj.get(key)
    return value if isinstance(value, bool) else None


def lst(obj: dict, key: str) -> list:
    """A list member, [] when missing."""
    value = obj.get(key)
    return value if isinstance(value, list) else []


def d(obj: dict, key: str) -> dict:
    """An object member (a struct held by value), {} when missing."""
    value = obj.get(key)
    return value if isinstance(value, dict) else {}


def opt(obj: dict, key: str) -> dict | None:
    """An object pointer member: ``None`` when missing (nil)."""
    value = obj.get(key)
    return value if isinstance(value, dict) else None


def dicts(value: Any) -> list[dict]:
    """The members of a list of structs, each non-object read as its zero value (so
    indexes stay those the client sent)."""
    if not isinstance(value, list):
        return []
    return [item if isinstance(item, dict) else {} for item in value]


def strs(value: Any) -> list[str]:
    """A ``[]string``: non-strings read as ""."""
    if not isinstance(value, list):
        return []
    return [item if isinstance(item, str) else "" for item in value]


def str_map(value: Any) -> dict:
    """A ``map[string]string``: non-string values read as ""."""
    if not isinstance(value, dict):
        return {}
    return {k: v if isinstance(v, str) else "" for k, v in value.items()}


def byte_len(value: str) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes."""
    return len(value.encode("utf-8", "surrogatepass"))


# -- upstream's small validators --------------------------------------------------------------

def invalid_each(path: FieldPath, value: Any, messages: Iterable[str]) -> list[FieldError]:
    """One ``Invalid`` per message, the pattern of upstream's ``for _, msg := range``."""
    return [FieldError.invalid(path, value, msg) for msg in messages]


def validate_dns1123_label(value: str, path: FieldPath) -> list[FieldError]:
    """``ValidateDNS1123Label``."""
    return invalid_each(path, value, apivalidation.is_dns1123_label(value))


def validate_dns1123_subdomain(value: str, path: FieldPath) -> list[FieldError]:
    """``ValidateDNS1123Subdomain``."""
    return invalid_each(path, value, apivalidation.is_dns1123_subdomain(value))


def validate_qualified_name(value: str, path: FieldPath) -> list[FieldError]:
    """``ValidateQualifiedName``."""
    return invalid_each(path, value, apivalidation.is_qualified_name(value))


def validate_name(name_fn: NameFn, value: str, path: FieldPath,
                  prefix: bool = False) -> list[FieldError]:
    """A name checked by one of upstream's ``ValidateNameFunc`` (``ValidateSecretName``…)."""
    return invalid_each(path, value, name_fn(value, prefix))


def validate_nonnegative(value: int, path: FieldPath) -> list[FieldError]:
    """``ValidateNonnegativeField``."""
    return [FieldError.invalid(path, value, IS_NEGATIVE_ERROR_MSG)] if value < 0 else []


def validate_file_mode(mode: int | None, path: FieldPath) -> list[FieldError]:
    """A file mode between 0 and 0777 (``defaultMode``, ``mode``)."""
    if mode is not None and not 0 <= mode <= 0o777:
        return [FieldError.invalid(path, mode, FILE_MODE_ERROR_MSG)]
    return []


def validate_path_no_backsteps(target: str, path: FieldPath) -> list[FieldError]:
    """``validatePathNoBacksteps``: no ``..`` element (one error however many)."""
    if ".." in target.split("/"):
        return [FieldError.invalid(path, target, "must not contain '..'")]
    return []


def validate_local_descending_path(target: str, path: FieldPath) -> list[FieldError]:
    """``validateLocalDescendingPath``: relative, and no ``..`` element."""
    errs = []
    if target.startswith("/"):
        errs.append(FieldError.invalid(path, target, "must be a relative path"))
    return errs + validate_path_no_backsteps(target, path)


def validate_local_non_reserved_path(target: str, path: FieldPath) -> list[FieldError]:
    """``ValidateLocalNonReservedPath``: a local descending path not starting with ``..``."""
    errs = validate_local_descending_path(target, path)
    # Not reported again when the check for ".." elements already caught it.
    if target.startswith("..") and not target.startswith("../"):
        errs.append(FieldError.invalid(path, target, "must not start with '..'"))
    return errs
