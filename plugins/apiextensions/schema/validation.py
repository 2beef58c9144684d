"""Validation of custom resources against a CRD version's ``openAPIV3Schema``, worded as upstream.

Mirrors what ``customResourceStrategy.Validate`` runs on a custom resource, in its order:

1. kube-openapi's ``SchemaValidator`` (``k8s.io/kube-openapi/pkg/validation/validate``) on the
   schema as apiextensions converts it (unsupported formats stripped,
   ``x-kubernetes-int-or-string`` as ``type: [integer, string]``), its results turned into
   field errors by ``kubeOpenAPIResultToFieldErrors``
   (``apiextensions-apiserver/pkg/apiserver/validation/validation.go``);
2. ``objectmeta.Validate`` for ``x-kubernetes-embedded-resource`` objects (not the root;
   the ``objectmeta`` module);
3. ``listtype.ValidateListSetsAndMaps`` for ``x-kubernetes-list-type`` set and map (the
   ``listtype`` module).

Go ranges over maps in random order, so upstream's order between sibling properties is not
fixed; here siblings go in sorted order, which is one of upstream's orders.

On update, :func:`validate_openapi_update` is upstream's ``RatchetingSchemaValidator``
(``CRDValidationRatcheting``, on by default since 1.30): the same checks, with the errors
of nodes unchanged since the old object dropped (see the ``correlation`` module).

Values are JSON as Python decodes it: ``int`` stands for Go's ``int64`` (and, past its range,
``float64``), ``float`` for ``float64``. kube-openapi tells them apart, so this code does too
(``1`` and ``1.0`` are different enum values; ``3.0`` is an integer by type).
"""

from __future__ import annotations

import functools
import json
import math
from decimal import Decimal

import re2

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, go_float, go_quote

from .formats import check_format, supported_format

__all__ = ["validate", "validate_openapi", "validate_openapi_update", "has_extensions",
           "go_json"]

_IN = "body"
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1

# Kinds of decoded JSON values, as Go's reflect.Kind tells them apart.
_NIL, _BOOL, _INT, _FLOAT, _STRING, _SLICE, _MAP = range(7)
# The JSON-schema type and format kube-openapi infers for each kind (schemaInfoForType).
_SCHEMA_TYPE = {_BOOL: ("boolean", ""), _INT: ("integer", "int64"), _FLOAT: ("number", "float64"),
                _STRING: ("string", ""), _SLICE: ("array", ""), _MAP: ("object", "")}

# Raw kube-openapi errors, before kubeOpenAPIResultToFieldErrors: (code, name, value, message,
# extra). The message is kept to drop repeats as Result.AddErrors does.
_REQUIRED, _ENUM, _TOO_LONG, _MAX_ITEMS, _TOO_MANY_PROPS, _TYPE, _OTHER, _COMPOSITE = range(8)


def _kind(value) -> int:
    t = type(value)
    if t is str:
        return _STRING
    if t is dict:
        return _MAP
    if t is bool:
        return _BOOL
    if t is int:
        return _INT if _INT64_MIN <= value <= _INT64_MAX else _FLOAT
    if t is float:
        return _FLOAT
    if t is list:
        return _SLICE
    if value is None:
        return _NIL
    if isinstance(value, bool):
        return _BOOL
    if isinstance(value, int):
        return _INT if _INT64_MIN <= value <= _INT64_MAX else _FLOAT
    if isinstance(value, float):
        return _FLOAT
    if isinstance(value, str):
        return _STRING
    if isinstance(value, dict):
        return _MAP
    if isinstance(value, (list, tuple)):
        return _SLICE
    return _STRING


def _go_value(value):
    """The value Go holds for ``value``: ints past int64 are float64."""
    if type(value) is int and not _INT64_MIN <= value <= _INT64_MAX:
        return float(value)
    return value


def _deep_equal(a, b) -> bool:
    """``reflect.DeepEqual`` of two decoded JSON values (an int64 never equals a float64)."""
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return False
    if ka == _MAP:
        return len(a) == len(b) and all(k in b and _deep_equal(v, b[k]) for k, v in a.items())
    if ka == _SLICE:
        return len(a) == len(b) and all(_deep_equal(x, y) for x, y in zip(a, b))
    if ka == _FLOAT:
        return float(a) == float(b)
    return a == b


def _is_json_integer(f: float) -> bool:
    """``swag.IsFloat64AJSONInteger``."""
    if math.isnan(f) or math.isinf(f) or not -(2.0 ** 53) <= f <= 2.0 ** 53:
        return False
    if f == math.trunc(f):
        return True
    if f < 0:
        return False
    g = float(math.trunc(f))
    diff = abs(f - g)
    if g == 0 or diff < 5e-324:
        return diff < 1e-9 * 5e-324
    return diff / min(abs(f) + abs(g), 1.7976931348623157e308) < 1e-9


def go_json(value) -> str:
    """``json.Marshal`` of a decoded JSON value: sorted keys, Go's float and string forms."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    k = _kind(value)
    if k == _INT:
        return str(value)
    if k == _FLOAT:
        f = float(value)
        if f == 0:
            return "-0" if math.copysign(1.0, f) < 0 else "0"
        exp = abs(f)
        if exp < 1e-6 or exp >= 1e21:
            text = repr(f).replace("e-0", "e-").replace("e+0", "e+")
            if "e" in text and "e-" not in text and "e+" not in text:
                text = text.replace("e", "e+")
            mantissa, _, e = text.partition("e")
            if mantissa.endswith(".0"):
                mantissa = mantissa[:-2]
            return f"{mantissa}e{e}"
        text = format(Decimal(repr(f)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    if k == _STRING:
        text = json.dumps(value, ensure_ascii=False)
        return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))
    if k == _MAP:
        return "{" + ",".join(f"{go_json(str(key))}:{go_json(value[key])}"
                              for key in sorted(value)) + "}"
    if k == _SLICE:
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return json.dumps(value)


def _number_text(value) -> str:
    """``%v`` of an int64 or float64."""
    value = _go_value(value)
    return go_float(value) if isinstance(value, float) else str(value)


def _index(path: FieldPath | None, i: int) -> FieldPath:
    return path.index(i) if path is not None else _root_subscript(str(i))


def _key(path: FieldPath | None, key: str) -> FieldPath:
    return path.key(key) if path is not None else _root_subscript(key)


def _root_subscript(subscript: str) -> FieldPath:
    # A nil *field.Path subscripted prints as "[k]"; FieldPath("") would print "[][k]".
    root = FieldPath("")
    root.subscript = subscript
    return root


# -- patterns ----------------------------------------------------------------------------------

@functools.cache
def _re2_options():
    """Go's ``regexp`` is RE2: its syntax (``\\pL``, ``[[:alpha:]]``) and its meaning (``\\d``
    and ``\\w`` are ASCII, ``$`` ends the text), which Python's ``re`` does not share."""
    options = re2.Options()
    options.log_errors = False  # a refused pattern is an answer, not a log line
    return options


@functools.lru_cache(maxsize=1024)
def _compile(pattern: str):
    """The pattern compiled by RE2, or None when RE2 refuses it (then it is not enforced:
    a CRD whose pattern Go cannot compile is refused when it is written)."""
    try:
        return re2.compile(pattern, _re2_options())
    except re2.error:
        return None


# -- kube-openapi's SchemaValidator ------------------------------------------------------------

def _types(s: dict) -> tuple:
    t = s.get("type")
    if t and type(t) is str:
        return _INT_OR_STRING if s.get("x-kubernetes-int-or-string") else (t,)
    if s.get("x-kubernetes-int-or-string"):
        return _INT_OR_STRING
    return tuple(t) if t else ()


_INT_OR_STRING = ("integer", "string")


def _type_error(name: str, type_name: str, value: str) -> tuple:
    message = f"{name} in {_IN} must be of type {type_name}: {go_quote(value)}"
    return (_TYPE, name, value, message, None)


def _check(s: dict, data, name: str, out: list, corr=None) -> int:
    """``SchemaValidator.Validate``: append raw errors to ``out``; return the match count.

    ``corr`` (a ``correlation.Correlated``, on update) makes the properties and items below
    ratchet (see :func:`_ratchet`); this node's own errors are its caller's to ratchet."""
    if data is None:
        # Only the type and enum checks run on null (SchemaValidator.Validate).
        types = _types(s)
        matched = 1
        if types and "null" not in types and not s.get("nullable"):
            out.append(_type_error(name, ",".join(types), "null"))
            matched = 0
        _enum(s, None, name, out)
        return matched
    kind = _kind(data)
    count = 1
    types = _types(s)
    fmt = s.get("format")
    if fmt:
        fmt = supported_format(fmt)
    if types or fmt:
        count += 1 + _type_check(types, fmt, data, kind, name, out)
    if "anyOf" in s or "oneOf" in s or "allOf" in s or "not" in s:
        count += 1 + _schema_props(s, data, name, out)
    else:
        count += 2
    if kind == _STRING:
        count += 1
        _string(s, data, name, out)
        if fmt:
            count += 1
            if not check_format(fmt, data):
                out.append(_type_error(name, fmt, data))
    elif kind == _INT or kind == _FLOAT:
        count += 2
        _number(s, _go_value(data), kind, name, out)
    elif kind == _SLICE:
        count += 1 + _slice(s, data, name, out, corr)
    count += 1
    if "enum" in s:
        _enum(s, data, name, out)
    if kind == _MAP:
        count += 1 + _object(s, data, name, out, corr)
    return count


def _ratchet(s: dict, data, name: str, out: list, corr) -> int:
    """``ratchetingValueValidator.Validate``: validate a node whose old value correlates
    (``corr``; None validates as on create) and drop every error of its subtree when it is
    unchanged. The errors of a node that does not correlate (a set item, a new key) are its
    parent's, so they ratchet with the nearest node that does."""
    if corr is None:
        return _check(s, data, name, out)
    start = len(out)
    count = _check(s, data, name, out, corr)
    if len(out) > start and corr.equal():
        del out[start:]
    return count


def _type_check(types: tuple, fmt: str, data, kind: int, name: str, out: list) -> int:
    """``typeValidator.Validate``; 1 when it passes, 0 after adding its error."""
    sch_type, inferred = _SCHEMA_TYPE[kind]
    float_int = (kind == _FLOAT and "integer" in types and _is_json_integer(float(data)))
    int_float = kind == _INT and "number" in types
    if (kind != _STRING and kind != _SLICE and fmt
            and not (sch_type in types or inferred == fmt or float_int or int_float)):
        out.append(_type_error(name, fmt, inferred))
        return 0
    if fmt and (kind == _STRING or kind == _SLICE) and not ("number" in types
                                                            or "integer" in types):
        return 1
    if not (sch_type in types or float_int or int_float):
        out.append(_type_error(name, ",".join(types), sch_type))
        return 0
    return 1


def _string(s: dict, data: str, name: str, out: list) -> None:
    """``stringValidator``: the first of maxLength, minLength, pattern that fails."""
    max_length = s.get("maxLength")
    if max_length is not None and len(data) > max_length:
        out.append((_TOO_LONG, name, data,
                    f"{name} in {_IN} should be at most {max_length} chars long", max_length))
        return
    min_length = s.get("minLength")
    if min_length is not None and len(data) < min_length:
        out.append((_OTHER, name, data,
                    f"{name} in {_IN} should be at least {min_length} chars long", None))
        return
    pattern = s.get("pattern")
    if pattern:
        compiled = _compile(pattern)
        if compiled is not None and compiled.search(data) is None:
            out.append((_OTHER, name, data, f"{name} in {_IN} should match '{pattern}'", None))


def _number(s: dict, data, kind: int, name: str, out: list) -> None:
    """``numberValidator``: multipleOf, minimum, maximum, in that order.

    For an int64 value the bounds are converted to int64 first (``MaximumNativeType``), as
    upstream does, so a fractional bound is truncated."""
    is_int = kind == _INT
    multiple_of = s.get("multipleOf")
    if multiple_of is not None:
        factor = float(multiple_of)
        if is_int and int(factor) != 0:
            ifactor = int(factor)
            if ifactor < 0:
                out.append((_OTHER, name, ifactor,
                            f"factor MultipleOf declared for {name} must be positive: {ifactor}",
                            None))
            elif data % ifactor:
                out.append((_OTHER, name, data,
                            f"{name} in {_IN} should be a multiple of {ifactor}", None))
        else:
            value = float(data)
            if factor < 0:
                out.append((_OTHER, name, factor, "factor MultipleOf declared for "
                            f"{name} must be positive: {go_float(factor)}", None))
            else:
                if factor == 0:
                    mult = math.nan
                else:
                    mult = (1 / factor * value) if factor < 1 else value / factor
                if not _is_json_integer(mult):
                    out.append((_OTHER, name, data, f"{name} in {_IN} should be a multiple of "
                                f"{go_float(factor)}", None))
    minimum = s.get("minimum")
    if minimum is not None:
        exclusive = bool(s.get("exclusiveMinimum"))
        bound = _bound(minimum, is_int)
        if data < bound or (exclusive and data <= bound):
            word = "greater than" if exclusive else "greater than or equal to"
            out.append((_OTHER, name, data,
                        f"{name} in {_IN} should be {word} {_number_text(bound)}", None))
    maximum = s.get("maximum")
    if maximum is not None:
        exclusive = bool(s.get("exclusiveMaximum"))
        bound = _bound(maximum, is_int)
        if data > bound or (exclusive and data >= bound):
            word = "less than" if exclusive else "less than or equal to"
            out.append((_OTHER, name, data,
                        f"{name} in {_IN} should be {word} {_number_text(bound)}", None))


def _bound(value, is_int: bool):
    f = float(value)
    if is_int and math.isfinite(f):
        return int(f)  # Go's int64(float64) truncates toward zero
    return f


def _slice(s: dict, data: list, name: str, out: list, corr=None) -> int:
    """``schemaSliceValidator``: items first, then minItems, maxItems, uniqueItems."""
    count = 0
    items = s.get("items")
    if isinstance(items, dict):
        if corr is None:
            for i, item in enumerate(data):
                count += _check(items, item, f"{name}[{i}]", out)
        else:
            for i, item in enumerate(data):
                count += _ratchet(items, item, f"{name}[{i}]", out, corr.index(i))
    size = len(data)
    min_items = s.get("minItems")
    if min_items is not None and size < min_items:
        out.append((_OTHER, name, size,
                    f"{name} in {_IN} should have at least {min_items} items", None))
    max_items = s.get("maxItems")
    if max_items is not None and size > max_items:
        out.append((_MAX_ITEMS, name, size,
                    f"{name} in {_IN} should have at most {max_items} items", max_items))
    if s.get("uniqueItems"):
        for i in range(1, size):
            if any(_deep_equal(data[i], data[j]) for j in range(i)):
                out.append((_OTHER, name, None, f"{name} in {_IN} shouldn't contain duplicates",
                            None))
                break
    return count + 1


def _enum_match(data, value) -> bool:
    """One enum value against the data as ``basicCommonValidator`` compares them: the data
    converted to the enum value's Go type when Go can convert it, then DeepEqual."""
    kd, ke = _kind(data), _kind(value)
    if kd == _NIL or ke == _NIL:
        return False
    if kd == ke:
        return _deep_equal(data, value)
    if kd == _INT and ke == _FLOAT:
        return float(data) == float(value)
    if kd == _FLOAT and ke == _INT:
        f = float(data)
        return math.isfinite(f) and int(f) == value
    if kd == _INT and ke == _STRING:
        # Go converts an integer to the string of that rune (U+FFFD when invalid).
        char = chr(data) if 0 <= data <= 0x10FFFF and not 0xD800 <= data <= 0xDFFF else "\ufffd"
        return char == value
    return False


def _enum(s: dict, data, name: str, out: list) -> None:
    enum = s.get("enum")
    if not enum:
        return
    for value in enum:
        if _enum_match(data, value):
            return
    out.append((_ENUM, name, data, f"{name} in {_IN} should be one of {go_json(enum)}", enum))


def _object(s: dict, data: dict, name: str, out: list, corr=None) -> int:
    """``objectValidator``: min/maxProperties, extra keys, properties, then required."""
    size = len(data)
    min_props = s.get("minProperties")
    if min_props is not None and size < min_props:
        out.append((_OTHER, name, size,
                    f"{name} in {_IN} should have at least {min_props} properties", None))
    max_props = s.get("maxProperties")
    if max_props is not None and size > max_props:
        out.append((_TOO_MANY_PROPS, name, size,
                    f"{name} in {_IN} should have at most {max_props} properties", max_props))
    count = 0
    props = s.get("properties") or {}
    additional = s.get("additionalProperties")
    if additional is False:
        for key in sorted(data):
            if key not in props:
                out.append((_OTHER, name, key,
                            f"{name}.{key} in {_IN} is a forbidden property", None))
    elif isinstance(additional, dict):
        for key in sorted(data):
            if key not in props:
                if corr is None:
                    count += _check(additional, data[key], f"{name}.{key}", out)
                else:
                    count += _ratchet(additional, data[key], f"{name}.{key}", out,
                                      _property(corr, name, key))
    if props:
        prefix = name + "." if name else ""
        for key in sorted(props) if len(props) > 1 else props:
            if key in data:
                if corr is None:
                    count += _check(props[key], data[key], prefix + key, out)
                else:
                    count += _ratchet(props[key], data[key], prefix + key, out,
                                      _property(corr, name, key))
    for key in s.get("required") or ():
        if key not in data:
            out.append((_REQUIRED, f"{name}.{key}", None, f"{name}.{key} in {_IN} is required",
                        None))
    return count


def _property(corr, name: str, key: str):
    """The correlation of property or map key ``key``; at the root (``name`` is "")
    ``kind`` and ``apiVersion`` never correlate: both objects were converted to the same
    version, so a change there is not visible (upstream's ``isTypeMetaField``)."""
    if not name and (key == "kind" or key == "apiVersion"):
        return None
    return corr.key(key)


def _schema_props(s: dict, data, name: str, out: list) -> int:
    """``schemaPropsValidator``: anyOf, oneOf, allOf, not."""
    any_of, one_of, all_of, not_ = s.get("anyOf"), s.get("oneOf"), s.get("allOf"), s.get("not")
    if not (any_of or one_of or all_of or not_):
        return 1
    count = 0
    if any_of:
        best, success = None, None
        for sub in any_of:
            errs = []
            n = _check(sub, data, name, errs)
            if not errs:
                best, success = None, n
                break
            if best is None or n > best[0]:
                best = (n, errs)
        if success is None:
            out.append((_COMPOSITE, name, None,
                        f"{go_quote(name)} must validate at least one schema (anyOf)", None))
        if best is not None:
            out.extend(best[1])
            count += best[0]
        elif success is not None:
            count += success
    if one_of:
        best, first, valid = None, None, 0
        for sub in one_of:
            errs = []
            n = _check(sub, data, name, errs)
            if not errs:
                valid += 1
                best = None
                if first is None:
                    first = n
                continue
            if valid == 0 and (best is None or n > best[0]):
                best = (n, errs)
        if valid != 1:
            extra = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
            out.append((_COMPOSITE, name, None, f"{go_quote(name)} must validate one and only "
                        f"one schema (oneOf). {extra}", None))
            if best is not None:
                out.extend(best[1])
                count += best[0]
        elif first is not None:
            count += first
    if all_of:
        valid = 0
        for sub in all_of:
            errs = []
            count += _check(sub, data, name, errs)
            if not errs:
                valid += 1
            out.extend(errs)
        if valid != len(all_of):
            extra = ". None validated" if valid == 0 else ""
            out.append((_COMPOSITE, name, None,
                        f"{go_quote(name)} must validate all the schemas (allOf){extra}", None))
    if isinstance(not_, dict):
        errs = []
        _check(not_, data, name, errs)
        if not errs:
            out.append((_COMPOSITE, name, None,
                        f"{go_quote(name)} must not validate the schema (not)", None))
    return count + 1


def _enum_values(enum: list) -> list[str]:
    return [v if isinstance(v, str) else go_json(v) for v in enum]


def _to_field_errors(raw: list, path: FieldPath | None) -> list[FieldError]:
    """``kubeOpenAPIResultToFieldErrors``, after ``Result.AddErrors`` dropped repeats."""
    errs, seen = [], set()
    for code, name, value, message, extra in raw:
        if message in seen:
            continue
        seen.add(message)
        if code == _COMPOSITE:
            errs.append(FieldError.invalid(path, "", message))
            continue
        if name and name != ".":
            child = name[1:] if name.startswith(".") else name
            err_path = path.child(child) if path is not None else FieldPath(child)
        else:
            err_path = path
        if code == _ENUM:
            errs.append(FieldError.not_supported(err_path, _go_value(value),
                                                 _enum_values(extra)))
            continue
        if value is None:
            value = ""
        if code == _REQUIRED:
            errs.append(FieldError.required(err_path, ""))
        elif code == _TOO_LONG:
            errs.append(FieldError.too_long(err_path, value, extra))
        elif code == _MAX_ITEMS or code == _TOO_MANY_PROPS:
            errs.append(FieldError.too_many(err_path, value, extra))
        elif code == _TYPE:
            errs.append(FieldError.type_invalid(err_path, value, message))
        else:
            errs.append(FieldError.invalid(err_path, _go_value(value), message))
    return errs


def validate_openapi(schema: dict, obj, path: FieldPath | None = None) -> list[FieldError]:
    """kube-openapi's schema validation alone, as ``ValidateCustomResource`` reports it."""
    if not schema:
        return []
    raw = []
    _check(schema, obj, "", raw)
    return _to_field_errors(raw, path) if raw else []


def validate_openapi_update(schema: dict, obj, old, path: FieldPath | None = None,
                            correlated=None) -> list[FieldError]:
    """kube-openapi's schema validation of an update, ratcheted as upstream's
    ``RatchetingSchemaValidator.ValidateUpdate``: an error is dropped when the node it was
    raised at (for ``required``, ``maxProperties`` and the like, the object holding the
    field; for ``anyOf`` and friends, the node declaring them) is unchanged and correlates
    with the old object (``correlated``: the ``correlation.Correlated`` of ``obj``, built
    when not given).

    An update that validates cleanly is validated once, as a create is; only one with
    errors is walked again with its old value."""
    if not schema:
        return []
    raw = []
    _check(schema, obj, "", raw)
    if not raw:
        return []
    if correlated is None:
        from .correlation import Correlated

        correlated = Correlated(obj, old, schema)
    raw = []
    _ratchet(schema, obj, "", raw, correlated)
    return _to_field_errors(raw, path) if raw else []


def _has_extensions(schema) -> bool:
    """Whether any node of ``schema`` is an embedded resource or a set or map list."""
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-embedded-resource") or schema.get(
            "x-kubernetes-list-type") in ("set", "map"):
        return True
    props = schema.get("properties")
    if isinstance(props, dict) and any(_has_extensions(v) for v in props.values()):
        return True
    return _has_extensions(schema.get("items")) or _has_extensions(
        schema.get("additionalProperties"))


def has_extensions(schema) -> bool:
    """Whether any node of ``schema`` is an embedded resource or a set or map list (the
    checks after schema validation have work to do)."""
    return _has_extensions(schema)


def validate(schema: dict, obj, path: FieldPath | None = None,
             extensions: bool | None = None) -> list[FieldError]:
    """Errors of ``obj`` (the whole custom resource, or any value when ``path`` is given)
    against ``schema``, in upstream's order: schema validation, embedded resources, list
    types. ``extensions``: ``has_extensions(schema)``, when the caller knows it."""
    from .listtype import validate_list_types
    from .objectmeta import validate_embedded_resources

    if not schema:
        return []
    errs = validate_openapi(schema, obj, path)
    if extensions is None:
        extensions = _has_extensions(schema)
    if extensions:
        errs += validate_embedded_resources(schema, obj, path)
        errs += validate_list_types(schema, obj, path)
    return errs
