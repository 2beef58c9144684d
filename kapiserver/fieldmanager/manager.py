"""The field manager a request writes as: its ``fieldManager`` parameter or its User-Agent.

Mirrors ``managerOrUserAgent`` and ``prefixFromUserAgent`` of
``k8s.io/apiserver/pkg/endpoints/handlers`` and ``ValidateFieldManager`` of
``k8s.io/apimachinery/pkg/apis/meta/v1/validation``, which upstream runs inside
``ValidateCreateOptions``/``ValidateUpdateOptions``/``ValidatePatchOptions``: a bad
parameter is a 422 ``Invalid`` naming ``CreateOptions.meta.k8s.io`` (or ``UpdateOptions``,
``PatchOptions``) with the name ``""``.
"""

from __future__ import annotations

from .. import errors as status_errors
from ..apimachinery.field_errors import FieldError, FieldPath, invalid_status

#: upstream's ``FieldManagerMaxLength``, in bytes.
FIELD_MANAGER_MAX_LENGTH = 128
#: The group of the ``*Options`` kinds named in the 422.
OPTIONS_GROUP = "meta.k8s.io"


class InvalidFieldManager(status_errors.Invalid):
    """The 422 upstream answers a bad ``fieldManager``: ``CreateOptions.meta.k8s.io ""
    is invalid: fieldManager: ...``. ``field_errors`` lets a caller fold them into the
    other option errors (``dryRun``, ``fieldValidation``) of one ``Invalid``, as upstream's
    ``Validate*Options`` does."""

    def __init__(self, field_errors: list[FieldError], options_kind: str = "CreateOptions"):
        status = invalid_status(options_kind, OPTIONS_GROUP, "", field_errors)
        super().__init__(status["message"], status["details"])
        self.field_errors = field_errors
        self.options_kind = options_kind


def _is_print(ch: str) -> bool:
    # Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and ASCII space,
    # which is what str.isprintable() accepts; a lone surrogate is U+FFFD to Go.
    return ch.isprintable() or 0xD800 <= ord(ch) <= 0xDFFF


def _utf8_len(ch: str) -> int:
    return 3 if 0xD800 <= ord(ch) <= 0xDFFF else len(ch.encode())


def validate_field_manager(field_manager: str,
                           path: FieldPath | None = None) -> list[FieldError]:
    """upstream's ``ValidateFieldManager``: at most 128 bytes, every character printable.

    Positions are byte offsets, as Go's ``range`` over a string gives them.
    """
    path = path or FieldPath("fieldManager")
    errors = []
    if sum(_utf8_len(ch) for ch in field_manager) > FIELD_MANAGER_MAX_LENGTH:
        errors.append(FieldError.too_long(path, field_manager, FIELD_MANAGER_MAX_LENGTH))
    offset = 0
    for ch in field_manager:
        if not _is_print(ch):
            errors.append(FieldError.invalid(
                path, field_manager,
                f"invalid character U+{ord(ch):04X} (at position {offset})"))
        offset += _utf8_len(ch)
    return errors


def prefix_from_user_agent(user_agent: str) -> str:
    """upstream's ``prefixFromUserAgent``: the User-Agent up to its first ``/``, without
    unprintable characters, cut to 128 bytes (``kubectl/v1.32.4 (linux/amd64)`` is
    ``kubectl``)."""
    out, size = [], 0
    for ch in user_agent.split("/", 1)[0]:
        if not _is_print(ch):
            continue
        width = _utf8_len(ch)
        if size + width > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append("\ufffd" if 0xD800 <= ord(ch) <= 0xDFFF else ch)
        size += width
    return "".join(out)


def manager_name(field_manager_param: str, user_agent: str, *,
                 options_kind: str = "CreateOptions") -> str:
    """The manager a non-apply write records: ``fieldManager`` when given, else the
    User-Agent's prefix (``managerOrUserAgent``); ``""`` when both are empty.

    Raises ``InvalidFieldManager`` (a 422 ``errors.Invalid``) for a parameter upstream
    refuses, naming ``options_kind``: ``CreateOptions``, ``UpdateOptions`` or
    ``PatchOptions``.
    """
    field_manager_param = field_manager_param or ""
    errors = validate_field_manager(field_manager_param)
    if errors:
        raise InvalidFieldManager(errors, options_kind)
    return field_manager_param or prefix_from_user_agent(user_agent or "")
