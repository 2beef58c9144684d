"""The JSON text upstream's patchers make of a JSON or merge patch: ``patchedObjJS``.

kube-apiserver patches the current object's Go JSON with ``gopkg.in/evanphx/json-patch.v4``
and, when the result does not decode into the kind's Go types, quotes that text in its 422
(``patch: Invalid value: "{...}": json: cannot unmarshal ...``). The library keeps every
value it did not look into as the raw bytes it read (the current object's, in Go's field
order; the patch's, as the client wrote them, compacted) and writes the objects it did look
into from Go maps, so with sorted keys: the document itself, each object a merge patch
merged into, every object of a value merge patch added (``pruneNulls`` reads them all),
the containers on a JSON patch operation's path, and whatever a ``test`` compared.
"""

from __future__ import annotations

from typing import Callable

from ..fieldmanager.gojson import go_string
from .godecode import number_text as _go_number_text


class _Node:
    """A value as the library holds it: ``raw`` (written as read), ``doc``/``ary`` (an
    object or list it decoded, holding nodes), or ``text`` (bytes it wrote itself)."""

    __slots__ = ("form", "value")

    def __init__(self, form: str, value):
        self.form, self.value = form, value


def _raw(value) -> _Node:
    return _Node("raw", value)


class _Writer:
    def __init__(self, number_text: Callable):
        self.number_text = number_text

    def value(self, value) -> str:
        """A raw value in its own order, as Go's compacting encoder writes bytes it read."""
        if value is None:
            return "null"
        if value is True:
            return "true"
        if value is False:
            return "false"
        if isinstance(value, str):
            return go_string(value)
        if isinstance(value, (int, float)):
            return self.number_text(value) if isinstance(value, float) else str(value)
        if isinstance(value, list):
            return "[" + ",".join(self.value(item) for item in value) + "]"
        return "{" + ",".join(f"{go_string(key)}:{self.value(item)}"
                              for key, item in value.items()) + "}"

    def node(self, node: _Node | None) -> str:
        if node is None:
            return "null"
        if node.form == "raw":
            return self.value(node.value)
        if node.form == "text":
            return node.value
        if node.form == "ary":
            return "[" + ",".join(self.node(item) for item in node.value) + "]"
        return "{" + ",".join(f"{go_string(key)}:{self.node(node.value[key])}"
                              for key in sorted(node.value)) + "}"


def _into_doc(node: _Node | None) -> dict | None:
    """``lazyNode.intoDoc``: the node decoded as an object (it stays decoded), or None."""
    if node is None:
        return None
    if node.form == "doc":
        return node.value
    if node.form == "raw" and isinstance(node.value, dict):
        node.form, node.value = "doc", {k: _Node("raw", v) if v is not None else None
                                        for k, v in node.value.items()}
        return node.value
    return None


def _into_ary(node: _Node | None) -> list | None:
    if node is None:
        return None
    if node.form == "ary":
        return node.value
    if node.form == "raw" and isinstance(node.value, list):
        node.form, node.value = "ary", [_Node("raw", v) if v is not None else None
                                        for v in node.value]
        return node.value
    return None


def _prune_nulls(node: _Node | None) -> None:
    doc = _into_doc(node)
    if doc is not None:
        for key in [k for k, v in doc.items() if v is None]:
            del doc[key]
        for child in doc.values():
            _prune_nulls(child)
        return
    items = _into_ary(node)
    for child in items or ():
        if child is not None:
            _prune_nulls(child)


def _merge_docs(doc: dict, patch: dict) -> None:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
            continue
        current = doc.get(key)
        if current is None:
            _prune_nulls(value)
            doc[key] = value
            continue
        current_doc = _into_doc(current)
        if current_doc is None:
            _prune_nulls(value)
            doc[key] = value
            continue
        patch_doc = _into_doc(value)
        if patch_doc is None:
            doc[key] = value
            continue
        _merge_docs(current_doc, patch_doc)


def merge_patched(current: dict, patch, number_text: Callable = _go_number_text) -> str:
    """``jsonpatch.MergePatch(current's Go JSON, patch)``'s text (``patch`` decoded)."""
    writer = _Writer(number_text)
    if not isinstance(patch, dict):
        return writer.value(patch)
    root = _raw(current)
    _merge_docs(_into_doc(root), _into_doc(_raw(patch)))
    return writer.node(root)


def json_patched(current: dict, operations: list,
                 number_text: Callable = _go_number_text) -> str:
    """``jsonpatch.Patch.Apply(current's Go JSON)``'s text, for operations that applied."""
    writer = _Writer(number_text)
    root = _raw(current)
    _into_doc(root)
    for operation in operations:
        op = operation.get("op")
        if op == "test":
            parent, key = _find(root, operation.get("path", ""))
            _parse_all(_get(parent, key))
            continue
        if op in ("move", "copy"):
            parent, key = _find(root, operation.get("from", ""))
            node = _get(parent, key)
            if op == "move":
                _remove(parent, key)
            else:
                node = _Node("text", writer.node(node))
        elif op in ("add", "replace"):
            value = operation.get("value")
            node = None if value is None else _raw(value)
        else:  # remove
            parent, key = _find(root, operation.get("path", ""))
            _remove(parent, key)
            continue
        parent, key = _find(root, operation.get("path", ""))
        if op == "replace":
            _remove(parent, key)
        _add(parent, key, node, op == "replace")
    return writer.node(root)


def _parts(pointer: str) -> list[str]:
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]


def _find(root: _Node, pointer: str):
    """The container holding the pointer's last part (decoded on the way), and that part."""
    parts = _parts(pointer)
    node = root
    for part in parts[:-1]:
        child = _get(node, part)
        if child is None:
            return None, parts[-1] if parts else ""
        if _into_ary(child) is None:
            _into_doc(child)
        node = child
    return node, parts[-1] if parts else ""


def _get(parent: _Node | None, key: str):
    if parent is None:
        return None
    if parent.form == "ary":
        try:
            return parent.value[int(key)]
        except (ValueError, IndexError):
            return None
    return parent.value.get(key) if parent.form == "doc" else None


def _remove(parent: _Node | None, key: str) -> None:
    if parent is None:
        return
    if parent.form == "ary":
        try:
            del parent.value[int(key)]
        except (ValueError, IndexError):
            pass
    elif parent.form == "doc":
        parent.value.pop(key, None)


def _add(parent: _Node | None, key: str, node, replacing: bool) -> None:
    if parent is None:
        return
    if parent.form == "ary":
        index = len(parent.value) if key == "-" else int(key)
        parent.value.insert(index, node)
    elif parent.form == "doc":
        parent.value[key] = node


def _parse_all(node: _Node | None) -> None:
    """``lazyNode.equal``: every object and list under the node decoded."""
    doc = _into_doc(node)
    if doc is not None:
        for child in doc.values():
            _parse_all(child)
        return
    for child in _into_ary(node) or ():
        _parse_all(child)
