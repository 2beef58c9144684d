"""kubectl's JSONPath (``k8s.io/client-go/util/jsonpath``) as CRDs use it.

``parse(path)`` compiles a path the way upstream compiles a printer column,
``selectableFields`` entry or scale replica path: as the template ``"{" + path + "}"``,
with upstream's grammar (fields, ``['key']``, indexes and slices, ``*``, ``..``, unions,
``[?(@.a == "x")]`` filters, literals) and its error messages. ``find(compiled, obj)``
returns the values of the first result set, missing keys allowed (what every CRD use
reads: ``results[0]``); a path that fails on an object (an index out of range, a filter
comparing incompatible types) finds nothing there, as the table convertor treats it.
``to_text(value)`` prints a value as upstream's ``PrintResults`` does (maps and lists as
JSON, the rest with Go's ``fmt``). The parser is ``parser``, the evaluation ``nodes``.

``range``/``end`` templates parse but never find anything: they make no sense for one
column or field.
"""

from __future__ import annotations

from .nodes import FieldNode, JSONPathError, ListNode
from .parser import Parser
from .text import to_text

__all__ = ["JSONPath", "JSONPathError", "find", "find_results", "parse", "to_text"]


class JSONPath:
    """A compiled path: the template's top-level nodes, and its keys when the path is
    nothing but field names (the common case, looked up without the interpreter)."""

    __slots__ = ("path", "nodes", "fields")

    def __init__(self, path: str, nodes: list):
        self.path = path
        self.nodes = nodes
        self.fields = None
        if len(nodes) == 1 and isinstance(nodes[0], ListNode) and \
                all(type(node) is FieldNode for node in nodes[0].nodes):
            self.fields = tuple(node.name for node in nodes[0].nodes)

    def __repr__(self) -> str:
        return f"JSONPath({self.path!r})"


def parse(path: str) -> JSONPath:
    """Compile ``path`` as upstream compiles a CRD's JSONPath: ``"{" + path + "}"``."""
    return JSONPath(path, Parser("{" + path + "}").parse())


def find_results(compiled: JSONPath, obj, allow_missing_keys: bool = True) -> list[list]:
    """Upstream's ``FindResults``: one list of values per top-level node; raises
    ``JSONPathError`` where upstream's evaluation fails."""
    return [node.eval([obj], allow_missing_keys) for node in compiled.nodes]


def find(compiled: JSONPath, obj) -> list:
    """The values ``compiled`` finds in ``obj`` (its first result set); [] if none."""
    fields = compiled.fields
    if fields is not None:
        value = obj
        for key in fields:
            if not isinstance(value, dict) or key not in value:
                return []
            value = value[key]
        return [value]
    try:
        return compiled.nodes[0].eval([obj], True)
    except JSONPathError:
        return []
