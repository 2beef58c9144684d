"""Applying PATCH bodies: JSON patch (RFC 6902), merge patch (RFC 7386), strategic merge.

Strategic merge follows ``k8s.io/apimachinery/pkg/util/strategicpatch`` for what built-in
kinds need: maps merge recursively, ``null`` deletes, lists are replaced unless the
kind declares a merge key for them (``MergeKeys``), primitive lists declared ``merge`` are
unioned, and the directives ``$patch: replace|delete|merge``, ``$retainKeys``,
``$deleteFromPrimitiveList/<field>`` and ``$setElementOrder/<field>`` are honoured.
"""

from __future__ import annotations

import copy

import jsonpatch

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

#: ObjectMeta's strategies, shared by every kind: finalizers merge as a set,
#: ownerReferences by uid.
META_MERGE_KEYS = {"metadata.finalizers": "", "metadata.ownerReferences": "uid"}


class PatchError(ValueError):
    """The patch could not be applied; ``invalid`` when it was well-formed (422 vs 400)."""

    def __init__(self, message: str, invalid: bool = False):
        super().__init__(message)
        self.invalid = invalid


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
