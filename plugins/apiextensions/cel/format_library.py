"""Kubernetes' CEL format library (``apiserver/pkg/cel/library/format.go``; CRD rules since 1.31).

``format.dns1123Label()`` (and the other named formats) is a ``kubernetes.NamedFormat``;
``format.named(name)`` an ``optional_type(kubernetes.NamedFormat)``;
``<format>.validate(text)`` an ``optional_type(list(string))`` holding the validation errors,
or none when ``text`` is valid::

    !format.dns1123Label().validate(self.name).hasValue()

The checker declares the optional results through the environment config (``cel.Type``
cannot spell ``optional_type``). cel-expr-python cannot return an optional from Python, so a
program runs ``format.named(n)`` as ``@format.namedList(n)[?0]`` and ``f.validate(t)`` as
``@format.validateList(f, t)[?0]``: the Python functions answer ``[value]`` or ``[]``, and
cel-cpp's optional index makes ``optional.of(value)`` or ``optional.none()`` of it.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from kapiserver.apimachinery import validation
from kapiserver.apimachinery.field_errors import go_quote

from ..schema.formats import check_format
from . import checked as ast
from .checked import entries
from .library import LibraryError
from .rewrite import (CALL_ARGS, CALL_FUNCTION, CALL_TARGET, EXPR_CALL, ExprRewriter,
                      delimited, number_field, rewrite_checked)

TYPE = "kubernetes.NamedFormat"
NAMED, VALIDATE = "format.named", "validate"
_NAMED_LIST, _VALIDATE_LIST = "@format.namedList", "@format.validateList"
_OPTIONAL_INDEX = "_[?_]"
#: ``cel.MaxNameFormatRegexSize``: what the cost estimate of ``validate`` assumes
MAX_NAME_FORMAT_REGEX_SIZE = 128


def _uri(text: str) -> list[str]:
    """``url.ParseRequestURI``'s error, as the library reports it."""
    error = [f"parse {go_quote(text)}: invalid URI for request"]
    if not text or any(c in text for c in " \t\r\n"):
        return error
    try:
        parts = urlsplit(text)
    except ValueError:
        return error
    if not parts.scheme and not text.startswith("/"):
        return error
    return []


def _strfmt(name: str, message: str):
    return lambda text: [] if check_format(name, text) else [message]


#: ``ConstantFormats``: each name's validation
FORMATS = {
    "dns1123Label": lambda text: validation.name_is_dns_label(text, False),
    "dns1123Subdomain": lambda text: validation.name_is_dns_subdomain(text, False),
    "dns1035Label": lambda text: validation.name_is_dns1035_label(text, False),
    "qualifiedName": validation.is_qualified_name,
    "dns1123LabelPrefix": lambda text: validation.name_is_dns_label(text, True),
    "dns1123SubdomainPrefix": lambda text: validation.name_is_dns_subdomain(text, True),
    "dns1035LabelPrefix": lambda text: validation.name_is_dns1035_label(text, True),
    "labelValue": validation.is_valid_label_value,
    "uri": _uri,
    "uuid": _strfmt("uuid", "does not match the UUID format"),
    "byte": _strfmt("byte", "invalid base64"),
    "date": _strfmt("date", "invalid date"),
    "datetime": _strfmt("datetime", "invalid datetime"),
}


def checker_config_yaml() -> str:
    """The ``functions:`` of the checker's environment config: the optional results."""
    return (
        "functions:\n"
        f'  - name: "{NAMED}"\n'
        "    overloads:\n"
        '      - id: "format-named"\n'
        "        args:\n"
        '          - type_name: "string"\n'
        "        return:\n"
        '          type_name: "optional_type"\n'
        "          params:\n"
        f'            - type_name: "{TYPE}"\n'
        f'  - name: "{VALIDATE}"\n'
        "    overloads:\n"
        '      - id: "format-validate"\n'
        "        target:\n"
        f'          type_name: "{TYPE}"\n'
        "        args:\n"
        '          - type_name: "string"\n'
        "        return:\n"
        '          type_name: "optional_type"\n'
        "          params:\n"
        '            - type_name: "list"\n'
        "              params:\n"
        '                - type_name: "string"\n')


def checker_declarations(cel, named_format) -> list:
    """``format.<name>()`` for each named format."""
    return [cel.FunctionDecl(f"format.{name}", [cel.Overload(f"format.{name}", named_format, [])])
            for name in FORMATS]


def runtime_declarations(cel, rt, wrap) -> list:
    """The constants, and the list-returning functions the rewritten programs call."""
    T = cel.Type
    named_format = T(TYPE)

    def constant(name):
        return lambda: rt.new(TYPE, name)

    def named_list(name):
        return [rt.new(TYPE, name)] if name in FORMATS else []

    def validate_list(named, text):
        validate = FORMATS.get(named.value)
        if validate is None:
            raise LibraryError("no such overload")
        errors = validate(text)
        return [list(errors)] if errors else []

    return [
        *(cel.FunctionDecl(f"format.{name}", [cel.Overload(
            f"format.{name}", named_format, [], impl=wrap(constant(name)))])
          for name in FORMATS),
        cel.FunctionDecl(_NAMED_LIST, [cel.Overload(
            "format_named_list", T.List(T.DYN), [T.STRING], impl=wrap(named_list))]),
        cel.FunctionDecl(_VALIDATE_LIST, [cel.Overload(
            "format_validate_list", T.List(T.DYN), [named_format, T.STRING],
            impl=wrap(validate_list))]),
    ]


class _OptionalResults(ExprRewriter):
    """``format.named(n)`` and ``f.validate(t)`` read through the optional index."""

    def __init__(self, checked: ast.CheckedAST, calls: set[int]):
        super().__init__(checked)
        self.calls = calls

    def node(self, expr_id: int, fs: dict, buf: bytes, shadowed: frozenset) -> bytes | None:
        if expr_id not in self.calls or EXPR_CALL not in fs:
            return None
        self.dropped.add(expr_id)
        call = b""
        for number, value, raw in entries(self.children(buf, shadowed)):
            if number == EXPR_CALL:
                call = value
        function, target, args = "", b"", []
        for number, value, _ in entries(call):
            if number == CALL_FUNCTION:
                function = value.decode()
            elif number == CALL_TARGET:
                target = value
            elif number == CALL_ARGS:
                args.append(value)
        inner_args = ([target] if target else []) + args
        inner = number_field(2, self.new_id()) + delimited(EXPR_CALL, delimited(
            CALL_FUNCTION, (_NAMED_LIST if function == NAMED else _VALIDATE_LIST).encode())
            + b"".join(delimited(CALL_ARGS, a) for a in inner_args))
        zero = number_field(2, self.new_id()) + delimited(3, number_field(3, 0))
        outer = (delimited(CALL_FUNCTION, _OPTIONAL_INDEX.encode())
                 + delimited(CALL_ARGS, inner) + delimited(CALL_ARGS, zero))
        return number_field(2, expr_id) + delimited(EXPR_CALL, outer)


def rewrite(serialized: bytes, checked: ast.CheckedAST) -> bytes:
    """``serialized`` with the optional-returning calls of the library rewritten."""
    calls = set()
    stack = [checked.expr]
    while stack:
        e = stack.pop()
        stack.extend(e.children)
        if e.kind == ast.CALL and (
                (e.value == NAMED and e.target is None and len(e.args) == 1)
                or (e.value == VALIDATE and e.target is not None and len(e.args) == 1
                    and "format-validate" in checked.overloads(e))):
            calls.add(e.id)
    if not calls:
        return serialized
    return rewrite_checked(serialized, _OptionalResults(checked, calls))
