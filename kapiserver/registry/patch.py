"""Applying PATCH bodies: JSON patch (RFC 6902), merge patch (RFC 7386), strategic merge.

Strategic merge follows ``k8s.io/apimachinery/pkg/util/strategicpatch`` for what built-in
kinds need: maps merge recursively, ``null`` deletes, lists are replaced unless the
kind declares a merge key for them (``MergeKeys``), primitive lists declared ``merge`` are
unioned, and the directives ``$patch: replace|delete|merge``, ``$retainKeys``,
``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>`` are honoured.

Server-side apply bodies (``application/apply-patch+yaml``) are configurations, not
patches: ``decode_apply_patch`` reads them; ``fieldmanager.apply`` merges them.
"""

from __future__ import annotations

import copy
import json
import re

import jsonpatch
import yaml

from ..apimachinery.field_errors import go_float, go_quote
from ..runtime.gotypes import json_kind

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

#: ObjectMeta's strategies, shared by every kind: finalizers merge as a set,
#: ownerReferences by uid.
META_MERGE_KEYS = {"metadata.finalizers": "", "metadata.ownerReferences": "uid"}


#: Bodies nesting deeper than this are refused as they are read (``exceeded max depth``,
#: as Go's decoders refuse 10000): kapiserver's object walkers recurse, and no Kubernetes
#: object comes near it.
MAX_DEPTH = 200


def check_depth(value, limit: int = MAX_DEPTH) -> None:
    """``ValueError`` when ``value`` nests lists and maps deeper than ``limit`` (walked
    without recursion)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            raise ValueError("exceeded max depth")
        stack.extend((child, depth + 1) for child in children
                     if isinstance(child, (dict, list)))


def _deep(text) -> bool:
    """Whether ``text`` may nest deeper than ``MAX_DEPTH`` (it has that many brackets)."""
    opening = (b"[", b"{") if isinstance(text, bytes) else ("[", "{")
    return text.count(opening[0]) + text.count(opening[1]) > MAX_DEPTH


def load_json(text, **kwargs):
    """``json.loads``, with nesting past ``MAX_DEPTH`` a ``ValueError``, never Python's
    ``RecursionError``."""
    try:
        value = json.loads(text, **kwargs)
    except RecursionError:
        raise ValueError("exceeded max depth") from None
    if _deep(text):
        check_depth(value)
    return value


def load_yaml(text):
    """``yaml.safe_load``, with nesting past ``MAX_DEPTH`` a ``ValueError``."""
    try:
        value = yaml.safe_load(text)
    except RecursionError:
        raise ValueError("exceeded max depth") from None
    if _deep(text):
        check_depth(value)
    return value


class PatchError(ValueError):
    """The patch could not be applied; ``invalid`` when it was well-formed (422 vs 400)."""

    def __init__(self, message: str, invalid: bool = False):
        super().__init__(message)
        self.invalid = invalid


def decode_patch_json(body: bytes) -> tuple[object, list[str]]:
    """A JSON patch body and the fields it sets twice in one object, as sigs.k8s.io/json's
    strict mode names them (the dotted path of object keys: ``metadata.labels.a``).
    The later value wins. Raises ``ValueError`` for malformed JSON."""
    repeated: list[tuple[int, str]] = []

    def pairs(items):
        # A plain dict: the patched object keeps these, and cel-cpp binds no dict subclass.
        obj = {}
        for key, value in items:
            if key in obj:
                repeated.append((id(obj), key))
            obj[key] = value
        return obj

    document = load_json(body, object_pairs_hook=pairs)
    if not repeated:
        return document, []
    paths: dict[int, str] = {}

    def walk(value, path: str) -> None:
        if isinstance(value, dict):
            paths[id(value)] = path
            for key, child in value.items():
                walk(child, f"{path}.{key}" if path else key)
        elif isinstance(value, list):
            for child in value:
                walk(child, path)

    walk(document, "")
    duplicates = []
    for owner, key in repeated:
        prefix = paths.get(owner, "")
        duplicates.append(f"{prefix}.{key}" if prefix else key)
    return document, duplicates


def apply_json_patch(obj: dict, body) -> dict:
    if not isinstance(body, list):
        raise PatchError("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    try:
        return jsonpatch.JsonPatch(body).apply(obj)
    except jsonpatch.JsonPatchTestFailed as err:
        raise PatchError(str(err), invalid=True) from None
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as err:
        raise PatchError(str(err), invalid=True) from None
    except (TypeError, KeyError) as err:
        raise PatchError(f"invalid JSON patch: {err}") from None


def apply_merge_patch(target, patch):
    """RFC 7386: objects merge, ``null`` removes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = apply_merge_patch(result.get(key), value)
    return result


def apply_strategic_merge_patch(target: dict, patch: dict, merge_keys: dict) -> dict:
    """Strategic merge of ``patch`` into ``target``; ``merge_keys`` maps dotted list paths
    to their merge key (``""`` for a primitive list merged as a set)."""
    if not isinstance(patch, dict):
        raise PatchError("strategic merge patch must be a JSON object")
    return _merge_map(target, patch, "", {**META_MERGE_KEYS, **merge_keys})


def _merge_map(target, patch: dict, path: str, keys: dict):
    directive = patch.get("$patch")
    if directive == "delete":
        return None
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    result = dict(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key in ("$patch", "$retainKeys") or key.startswith("$setElementOrder/"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            if isinstance(result.get(field), list):
                result[field] = [v for v in result[field] if v not in value]
            continue
        child = f"{path}.{key}" if path else key
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            merged = _merge_map(result.get(key), value, child, keys)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        elif isinstance(value, list) and child in keys:
            result[key] = _merge_list(result.get(key) or [], value, child, keys)
        else:
            result[key] = copy.deepcopy(value)
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_list(target: list, patch: list, path: str, keys: dict) -> list:
    key = keys[path]
    if not key:  # a primitive list merged as a set
        result = list(target)
        for value in patch:
            if value not in result:
                result.append(value)
        return result
    if any(isinstance(i, dict) and i.get("$patch") == "replace" for i in patch):
        return [copy.deepcopy(i) for i in patch
                if not (isinstance(i, dict) and i.get("$patch") == "replace")]
    result = [copy.deepcopy(i) for i in target]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError(f"map: {item} does not contain declared merge key: {key}")
        index = next((n for n, existing in enumerate(result)
                      if isinstance(existing, dict) and existing.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if index is not None:
                result.pop(index)
            continue
        if index is None:
            result.append({k: v for k, v in item.items() if k != "$patch"})
        else:
            result[index] = _merge_map(result[index], item, path, keys)
    return result


# -- server-side apply bodies ---------------------------------------------------------------

class _ApplyLoader(yaml.SafeLoader):
    """YAML as ``sigs.k8s.io/yaml`` (goyaml.v2) reads it: timestamps stay strings, numbers
    are Go's (``1.5e3`` is a float, ``1:30`` a string), ``y``/``n`` are booleans."""


_ApplyLoader.yaml_implicit_resolvers = {}
for _tag, _pattern, _first in (
        ("tag:yaml.org,2002:bool",
         r"^(?:y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE"
         r"|on|On|ON|off|Off|OFF)$", "yYnNtTfFoO"),
        ("tag:yaml.org,2002:int",
         r"^[-+]?(?:0b[01_]+|0o?[0-7_]+|0x[0-9a-fA-F_]+|0|[1-9][0-9_]*)$", "-+0123456789"),
        ("tag:yaml.org,2002:float",
         r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
         r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$", "-+0123456789."),
        ("tag:yaml.org,2002:null", r"^(?:~|null|Null|NULL|)$", ["~", "n", "N", ""]),
        ("tag:yaml.org,2002:merge", r"^(?:<<)$", "<")):
    _ApplyLoader.add_implicit_resolver(_tag, re.compile(_pattern), list(_first))


def _construct_int(loader, node):
    text = loader.construct_scalar(node).replace("_", "")
    sign = -1 if text.startswith("-") else 1
    digits = text.lstrip("+-")
    if len(digits) > 1 and digits[0] == "0" and digits[1] in "01234567":
        return sign * int(digits, 8)  # Go reads a leading 0 as octal
    return sign * int(digits, 0)


def _construct_bool(loader, node):
    return loader.construct_scalar(node).lower() in ("y", "yes", "true", "on")


_ApplyLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_ApplyLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)


def _go_key(value) -> str:
    # %#v of a decoded map key
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return go_quote(str(value))


def _duplicates(loader: _ApplyLoader, node, out: list[str]) -> None:
    # goyaml.v2's strict decoding: a key set twice in one map is reported at the line of
    # its second value, after the errors inside that value.
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _duplicates(loader, item, out)
    elif isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value_node in node.value:
            _duplicates(loader, value_node, out)
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = loader.construct_object(key_node, deep=True)
            marker = (type(key).__name__, key)
            if marker in seen:
                out.append(f"line {value_node.start_mark.line + 1}: key {_go_key(key)} "
                           "already set in map")
            seen.add(marker)


#: PyYAML's wording of the problems goyaml words differently.
_GO_YAML_WORDING = {"mapping values are not allowed here":
                    "mapping values are not allowed in this context"}


def _yaml_problem(err: Exception) -> str:
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        line = f"line {mark.line + 1}: " if mark is not None else ""
        return line + _GO_YAML_WORDING.get(err.problem, err.problem or err.context)
    return str(err)


def _compose(text: str) -> tuple[_ApplyLoader, object]:
    # The first document only, as goyaml.v2's Unmarshal reads it.
    loader = _ApplyLoader(text)
    return loader, loader.get_node() if loader.check_node() else None


def decode_apply_patch(body: bytes) -> tuple[dict, list[str]]:
    """The applied configuration of an ``application/apply-patch+yaml`` body (YAML, or
    JSON, which is YAML), and the keys set twice in one map, as goyaml.v2's strict mode
    reports them (``line 10: key "paused" already set in map``). A later key wins.

    Raises ``PatchError`` worded as upstream's ``error decoding YAML: ...``.
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise PatchError(f"error decoding YAML: error converting YAML to JSON: yaml: "
                         f"invalid leading UTF-8 octet: {err}") from None
    repeated = []

    def pairs(items):
        keys = [key for key, _ in items]
        if len(set(keys)) != len(keys):
            repeated.append(True)
        return dict(items)

    try:
        # JSON is YAML: read it exactly as JSON, then find repeated keys' lines in its
        # YAML form (a raw tab can only be whitespace there, which YAML refuses).
        obj = load_json(text, object_pairs_hook=pairs)
        node_text = text.replace("\t", " ") if repeated else None
    except ValueError as err:
        if str(err) == "exceeded max depth":
            raise PatchError("error decoding YAML: exceeded max depth") from None
        node_text = text
        obj = None
    duplicates: list[str] = []
    if node_text is not None:
        try:
            loader, node = _compose(node_text)
            if obj is None:
                obj = loader.construct_document(node) if node is not None else None
            if node is not None:
                _duplicates(loader, node, duplicates)
            if obj is not None and _deep(text):
                check_depth(obj)
        except RecursionError:
            raise PatchError("error decoding YAML: exceeded max depth") from None
        except (yaml.YAMLError, ValueError) as err:
            if str(err) == "exceeded max depth":
                raise PatchError("error decoding YAML: exceeded max depth") from None
            # valid JSON that PyYAML cannot read only goes without its repeats reported
            if obj is None:
                raise PatchError("error decoding YAML: error converting YAML to JSON: yaml: "
                                 + _yaml_problem(err)) from None
    if obj is None:
        return {}, duplicates
    obj = _string_keys(obj)
    if not isinstance(obj, dict):
        raise PatchError("error decoding YAML: error unmarshaling JSON: while decoding JSON: "
                         f"json: cannot unmarshal {json_kind(obj)} into Go value of type "
                         "map[string]interface {}")
    return obj, duplicates


def _string_keys(value):
    # sigs.k8s.io/yaml's JSON conversion: keys YAML read as numbers or booleans (``y``,
    # ``on``, ``1``) become their text, Go-formatted
    if isinstance(value, dict):
        return {_key_text(key): _string_keys(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_string_keys(item) for item in value]
    return value


def _key_text(key) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float):
        return go_float(float(f"{key:.7g}"))  # strconv.FormatFloat(key, 'g', -1, 32)
    if key is None:
        return "null"
    return str(key)
