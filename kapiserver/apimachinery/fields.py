"""Field selectors: parse and match them as upstream's ``k8s.io/apimachinery/pkg/fields``.

The grammar is upstream's ``fields.ParseSelector``: comma-separated ``field=value``,
``field==value`` or ``field!=value`` terms, ``\\,`` ``\\=`` and ``\\\\`` escaping a comma, an
equals sign and a backslash in values. ``check_supported`` answers what upstream's API
server answers when a resource cannot select on a field (its field-label conversion).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import NamedTuple

from .field_errors import go_quote
from .labels import SelectorError

__all__ = ["FieldRequirement", "FieldSelector", "SelectorError", "check_supported",
           "escape_value", "object_meta_fields", "parse", "unescape_value"]

# Checked in this order, so that "a==b" is not read as "a" "=" "=b" (upstream's order).
_TERM_OPERATORS = ("!=", "==", "=")
_OBJECT_META_FIELDS = frozenset({"metadata.name", "metadata.namespace"})

# Built-in kinds whose group registers its own field-label conversion function
# (scheme.AddFieldLabelConversionFunc in k8s.io/kubernetes/pkg/apis/core/v1) and so answers
# "field label not supported: <field>"; every other built-in kind falls back to
# runtime.DefaultMetaV1FieldSelectorConversion and its "is not a known field selector".
_KINDS_WITH_FIELD_LABEL_CONVERSION = frozenset({
    "Event", "Namespace", "Node", "Pod", "ReplicationController", "Secret", "Service"})


class FieldRequirement(NamedTuple):
    """One term: ``operator`` is ``"="`` (for ``=`` and ``==``) or ``"!="``."""

    field: str
    operator: str
    value: str

    def matches(self, fields: Mapping[str, str]) -> bool:
        # A field the object does not have reads as "" (fields.Set.Get).
        equal = fields.get(self.field, "") == self.value
        return equal if self.operator == "=" else not equal

    def __str__(self) -> str:
        return f"{self.field}{self.operator}{escape_value(self.value)}"


class FieldSelector:
    """An AND of field requirements, in upstream's order (the terms sorted as text)."""

    __slots__ = ("_requirements",)

    def __init__(self, requirements: Iterable[FieldRequirement] = ()):
        self._requirements = tuple(FieldRequirement(*r) for r in requirements)

    @property
    def requirements(self) -> tuple[FieldRequirement, ...]:
        return self._requirements

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (``Everything``)."""
        return not self._requirements

    def matches(self, fields: Mapping[str, str]) -> bool:
        return all(r.matches(fields) for r in self._requirements)

    def requires_exact_match(self, field: str) -> str | None:
        """The value an ``=`` term requires of ``field`` (the first such term), or None."""
        for r in self._requirements:
            if r.field == field and r.operator == "=":
                return r.value
        return None

    def transform(self, fn: Callable[[str, str], tuple[str, str]]) -> FieldSelector:
        """upstream's ``Transform``: ``fn(field, value)`` renames fields or rewrites values.

        A term ``fn`` turns into ``("", "")`` is dropped; whatever ``fn`` raises propagates.
        """
        terms = []
        for field, operator, value in self._requirements:
            new_field, new_value = fn(field, value)
            if new_field or new_value:
                terms.append(FieldRequirement(new_field, operator, new_value))
        return FieldSelector(terms)

    def __str__(self) -> str:
        return ",".join(str(r) for r in self._requirements)

    def __len__(self) -> int:
        return len(self._requirements)

    def __iter__(self) -> Iterator[FieldRequirement]:
        return iter(self._requirements)

    def __eq__(self, other) -> bool:
        return isinstance(other, FieldSelector) and other._requirements == self._requirements

    def __hash__(self) -> int:
        return hash(self._requirements)

    def __repr__(self) -> str:
        return f"FieldSelector({str(self)!r})"


def escape_value(value: str) -> str:
    """upstream's ``EscapeValue``: backslash-escape ``\\``, ``,`` and ``=``."""
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def unescape_value(value: str) -> str:
    """upstream's ``UnescapeValue``; raise ``SelectorError`` with its messages."""
    if not any(ch in value for ch in "\\,="):
        return value
    out, in_slash = [], False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                raise SelectorError(
                    f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # upstream formats the rune with %v: its code point, in decimal ("61" for "=").
            raise SelectorError(
                f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        raise SelectorError("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_terms(selector: str) -> list[str]:
    """The comma-separated terms; an escaped comma stays in its term, backslash and all."""
    if not selector:
        return []
    terms, start, in_slash = [], 0, False
    for i, ch in enumerate(selector):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(selector[start:i])
            start = i + 1
    terms.append(selector[start:])
    return terms


def _split_term(term: str) -> tuple[str, str, str] | None:
    """``(lhs, operator, raw rhs)`` at the first operator in ``term``, or None."""
    for i in range(len(term)):
        for operator in _TERM_OPERATORS:
            if term.startswith(operator, i):
                return term[:i], operator, term[i + len(operator):]
    return None


def parse(selector: str) -> FieldSelector:
    """upstream's ``fields.ParseSelector``; raise ``SelectorError`` with upstream's message."""
    requirements = []
    # upstream sorts the raw terms (sort.StringSlice) before reading them.
    for term in sorted(_split_terms(selector)):
        if not term:
            continue
        split = _split_term(term)
        if split is None:
            raise SelectorError(f"invalid selector: '{selector}'; can't understand '{term}'")
        field, operator, raw = split
        requirements.append(FieldRequirement(field, "!=" if operator == "!=" else "=",
                                             unescape_value(raw)))
    return FieldSelector(requirements)


def check_supported(selector: FieldSelector, supported: Collection[str], kind: str, *,
                    default_conversion: bool | None = None) -> None:
    """Raise ``SelectorError`` as upstream does for the first field ``kind`` cannot select on.

    ``supported`` are the fields the resource serves. Upstream's wording depends on the
    field-label conversion of the kind: the scheme's default one (``metadata.name`` and
    ``metadata.namespace`` only, even for cluster-scoped kinds) says ``"spec.foo" is not a
    known field selector: only "metadata.name", "metadata.namespace"``; a kind's own one, and
    every custom resource's, says ``field label not supported: spec.foo``. By default the
    default conversion is assumed for a kind that has no conversion function upstream and
    no field besides the ``metadata`` ones; custom resources pass
    ``default_conversion=False``.
    """
    allowed = set(supported)
    if default_conversion is None:
        default_conversion = (kind not in _KINDS_WITH_FIELD_LABEL_CONVERSION
                              and allowed <= _OBJECT_META_FIELDS)
    if default_conversion:
        allowed |= _OBJECT_META_FIELDS
    # Upstream converts the terms in the selector's (sorted) order and stops at the first.
    for requirement in selector.requirements:
        if requirement.field in allowed:
            continue
        if default_conversion:
            raise SelectorError(f"{go_quote(requirement.field)} is not a known field selector: "
                                'only "metadata.name", "metadata.namespace"')
        raise SelectorError(f"field label not supported: {requirement.field}")


def object_meta_fields(obj: Mapping, namespaced: bool) -> dict[str, str]:
    """upstream's ``generic.ObjectMetaFieldsSet``: the ``metadata`` fields an object offers."""
    meta = obj.get("metadata") or {}
    fields = {"metadata.name": meta.get("name") or ""}
    if namespaced:
        fields["metadata.namespace"] = meta.get("namespace") or ""
    return fields
