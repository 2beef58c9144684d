"""``cmp.Diff`` of github.com/google/go-cmp v0.6.0, as Kubernetes 1.32 prints it in errors.

kube-apiserver explains a refused pod update with ``cmp.Diff(oldPod.Spec, newPodSpec)`` of
the internal ``core.PodSpec``: a pseudo-Go literal, unchanged fields elided, ``-``/``+``
lines for what differs. Clients show that text verbatim, so this module reproduces go-cmp's
comparison tree, its edit script for slices, and its reporter (verbosity levels, column
alignment, ellipses, the ``... // 2 identical fields`` comments), over values built from
JSON with the Go type layout of :mod:`kapiserver.apis.core.gotypes`.

go-cmp deliberately varies two things between processes: the indentation uses regular or
no-break spaces (U+00A0), and slices are aligned searching forward or backward first.
kube-apiserver's answer in the reference transcripts uses no-break spaces; this module does
too, and searches forward first (go-cmp's deterministic mode). Long strings and slices of
numbers get go-cmp's specialised chunked diff (``strings.Join({...}, "")``, and
triple-quoted blocks for lined text).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ...apimachinery.field_errors import go_quote

#: A missing slice element or map entry (an invalid ``reflect.Value``).
MISSING = object()

NUM_CONTEXT_RECORDS = 2
MAX_VERBOSITY_PRESET = 6
MAX_COLUMN_LENGTH = 80

DIFF_UNKNOWN = 0
DIFF_IDENTICAL = ord(" ")
DIFF_REMOVED = ord("-")
DIFF_INSERTED = ord("+")

EMIT_TYPE, ELIDE_TYPE, AUTO_TYPE = 0, 1, 2

STRUCT, PTR, SLICE, MAP, STRING, INT, BOOL, FLOAT, LEAF = (
    "struct", "ptr", "slice", "map", "string", "int", "bool", "float", "leaf")
_COMPOSITE = (STRUCT, SLICE, MAP)


# -- types ----------------------------------------------------------------------------------

class GoType:
    """A Go type: its kind, its name as ``%v`` of a ``reflect.Type`` prints it
    (``core.Container``, ``[]core.Container``, ``*int64``), whether it is named, and its
    parts. ``LEAF`` types compare with an ``Equal`` method and format with ``fmt``."""

    __slots__ = ("kind", "name", "named", "elem", "key", "fields", "stringer", "equal",
                 "format_leaf", "is_zero_leaf")

    def __init__(self, kind: str, name: str, named: bool = False, elem: GoType | None = None,
                 key: GoType | None = None, stringer: bool = False):
        self.kind, self.name, self.named = kind, name, named
        self.elem, self.key = elem, key
        self.fields: list[tuple[str, GoType]] = []
        self.stringer = stringer
        self.equal = None
        self.format_leaf = None
        self.is_zero_leaf = None

    def __repr__(self) -> str:
        return f"GoType({self.name})"


def is_zero(t: GoType, value: Any) -> bool:
    """``reflect.Value.IsZero``."""
    kind = t.kind
    if kind == STRUCT:
        return all(is_zero(ft, v) for (_, ft), v in zip(t.fields, value))
    if kind in (PTR, SLICE, MAP):
        return value is None
    if kind == LEAF:
        return t.is_zero_leaf(value)
    return not value


def semantic_equal(t: GoType, x: Any, y: Any) -> bool:
    """``apiequality.Semantic.DeepEqual``: a nil and an empty slice or map are equal, leaves
    (quantities) compare with their ``Equal``; pointers and everything else as Go does."""
    kind = t.kind
    if kind == STRUCT:
        return all(semantic_equal(ft, a, b) for (_, ft), a, b in zip(t.fields, x, y))
    if kind == SLICE:
        x, y = x or [], y or []
        return len(x) == len(y) and all(semantic_equal(t.elem, a, b) for a, b in zip(x, y))
    if kind == MAP:
        x, y = x or {}, y or {}
        return x.keys() == y.keys() and all(semantic_equal(t.elem, x[k], y[k]) for k in x)
    if kind == PTR:
        if x is None or y is None:
            return x is None and y is None
        return semantic_equal(t.elem, x, y)
    if kind == LEAF:
        return t.equal(x, y)
    return x == y


# -- the comparison tree (report_value.go) ----------------------------------------------------

@dataclass(eq=False)
class Node:
    """go-cmp's ``valueNode``."""

    type: GoType
    vx: Any
    vy: Any
    num_same: int = 0
    num_diff: int = 0
    num_compared: int = 0
    num_children: int = 0
    max_depth: int = 0
    records: list = field(default_factory=list)  # (key, Node); key None for slice elements
    value: Node | None = None

    def report(self, equal: bool, by_method: bool = False) -> None:
        if equal:
            self.num_same += 1
        else:
            self.num_diff += 1
        if by_method:
            self.num_compared += 1

    def add(self, child: Node) -> None:
        # valueNode.PopStep
        self.num_same += child.num_same
        self.num_diff += child.num_diff
        self.num_compared += child.num_compared
        self.num_children += child.num_children + 1
        self.max_depth = max(self.max_depth, child.max_depth + 1)


def compare(t: GoType, x: Any, y: Any) -> Node:
    """``state.compareAny``: the comparison tree of ``x`` and ``y`` of type ``t``."""
    node = Node(t, x, y)
    kind = t.kind
    if x is MISSING or y is MISSING:
        node.report(x is MISSING and y is MISSING)
    elif kind == LEAF:
        node.report(t.equal(x, y), by_method=True)
    elif kind == STRUCT:
        for (name, field_type), fx, fy in zip(t.fields, x, y):
            child = compare(field_type, fx, fy)
            node.records.append((name, child))
            node.add(child)
    elif kind in (SLICE, MAP, PTR) and (x is None or y is None):
        node.report(x is None and y is None)
    elif kind == SLICE:
        _compare_slice(node, t, x, y)
    elif kind == MAP:
        for key in sorted(set(x) | set(y)):
            child = compare(t.elem, x.get(key, MISSING), y.get(key, MISSING))
            node.records.append((key, child))
            node.add(child)
    elif kind == PTR:
        child = compare(t.elem, x, y)
        node.value = child
        node.add(child)
    else:
        node.report(x == y)
    return node


def _compare_slice(node: Node, t: GoType, x: list, y: list) -> None:
    cache: dict = {}

    def pair(ix: int, iy: int) -> Node:
        found = cache.get((ix, iy))
        if found is None:
            found = cache[(ix, iy)] = compare(t.elem, x[ix], y[iy])
        return found

    edits = difference(len(x), len(y), lambda ix, iy: pair(ix, iy))
    ix = iy = 0
    for edit in edits:
        if edit == UNIQUE_X:
            child = compare(t.elem, x[ix], MISSING)
            ix += 1
        elif edit == UNIQUE_Y:
            child = compare(t.elem, MISSING, y[iy])
            iy += 1
        else:
            child = pair(ix, iy)
            ix += 1
            iy += 1
        node.records.append((None, child))
        node.add(child)


# -- the edit script (internal/diff) -----------------------------------------------------------

IDENTITY, UNIQUE_X, UNIQUE_Y, MODIFIED = 0, 1, 2, 3


def _equal(result: Node) -> bool:
    return result.num_diff == 0


def _similar(result: Node) -> bool:
    return result.num_same + 1 >= result.num_diff


def _zigzag(x: int) -> int:
    if x & 1:
        x = ~x
    return x >> 1


class _Path:
    __slots__ = ("dir", "x", "y", "es")

    def __init__(self, direction: int, x: int, y: int):
        self.dir, self.x, self.y, self.es = direction, x, y, []

    def append(self, edit: int) -> None:
        self.es.append(edit)
        if edit in (IDENTITY, MODIFIED):
            self.x += self.dir
            self.y += self.dir
        elif edit == UNIQUE_X:
            self.x += self.dir
        else:
            self.y += self.dir

    def connect(self, dx: int, dy: int, f) -> None:
        if self.dir > 0:
            while dx > self.x and dy > self.y:
                r = f(self.x, self.y)
                if _equal(r):
                    self.append(IDENTITY)
                elif _similar(r):
                    self.append(MODIFIED)
                elif dx - self.x >= dy - self.y:
                    self.append(UNIQUE_X)
                else:
                    self.append(UNIQUE_Y)
            while dx > self.x:
                self.append(UNIQUE_X)
            while dy > self.y:
                self.append(UNIQUE_Y)
        else:
            while self.x > dx and self.y > dy:
                r = f(self.x - 1, self.y - 1)
                if _equal(r):
                    self.append(IDENTITY)
                elif _similar(r):
                    self.append(MODIFIED)
                elif self.y - dy >= self.x - dx:
                    self.append(UNIQUE_Y)
                else:
                    self.append(UNIQUE_X)
            while self.x > dx:
                self.append(UNIQUE_X)
            while self.y > dy:
                self.append(UNIQUE_Y)


def difference(nx: int, ny: int, f) -> list[int]:
    """``diff.Difference``: a decent (not minimal) edit script, searching forward first."""
    fwd, rev = _Path(1, 0, 0), _Path(-1, nx, ny)
    fwd_fx, fwd_fy = 0, 0
    rev_fx, rev_fy = nx, ny
    budget = 4 * (nx + ny)
    forward = True
    while True:
        if fwd_fx >= rev_fx or fwd_fy >= rev_fy or budget == 0:
            break
        if forward:
            stop1 = stop2 = False
            i = 0
            while not (stop1 and stop2) and budget > 0:
                z = _zigzag(i)
                px, py = fwd_fx + z, fwd_fy - z
                if px >= rev.x or py < fwd.y:
                    stop1 = True
                elif py >= rev.y or px < fwd.x:
                    stop2 = True
                elif _equal(f(px, py)):
                    fwd.connect(px, py, f)
                    fwd.append(IDENTITY)
                    while fwd.x < rev.x and fwd.y < rev.y:
                        if not _equal(f(fwd.x, fwd.y)):
                            break
                        fwd.append(IDENTITY)
                    fwd_fx, fwd_fy = fwd.x, fwd.y
                    stop1 = stop2 = True
                else:
                    budget -= 1
                i += 1
            if rev.x - fwd_fx >= rev.y - fwd_fy:
                fwd_fx += 1
            else:
                fwd_fy += 1
        else:
            stop1 = stop2 = False
            i = 0
            while not (stop1 and stop2) and budget > 0:
                z = _zigzag(i)
                px, py = rev_fx - z, rev_fy + z
                if fwd.x >= px or rev.y < py:
                    stop1 = True
                elif fwd.y >= py or rev.x < px:
                    stop2 = True
                elif _equal(f(px - 1, py - 1)):
                    rev.connect(px, py, f)
                    rev.append(IDENTITY)
                    while fwd.x < rev.x and fwd.y < rev.y:
                        if not _equal(f(rev.x - 1, rev.y - 1)):
                            break
                        rev.append(IDENTITY)
                    rev_fx, rev_fy = rev.x, rev.y
                    stop1 = stop2 = True
                else:
                    budget -= 1
                i += 1
            if rev_fx - fwd.x >= rev_fy - fwd.y:
                rev_fx -= 1
            else:
                rev_fy -= 1
        forward = not forward
    fwd.connect(rev.x, rev.y, f)
    return fwd.es + rev.es[::-1]


# -- text (report_text.go) ----------------------------------------------------------------------

class TextLine(str):
    """``textLine``: one line of text, a leaf of the text tree."""

    __slots__ = ()

    def length(self) -> int:
        return len(self.encode("utf-8"))

    def equal(self, other) -> bool:
        return isinstance(other, TextLine) and str.__eq__(self, other)

    def compact(self, out: list, d: int):
        out.append(str(self))
        return self

    def expand(self, out: list, d: int, n: int) -> None:
        out.append(str(self))


TEXT_NIL = TextLine("nil")
TEXT_ELLIPSIS = TextLine("...")


@dataclass(eq=False)
class TextWrap:
    """``textWrap``: a prefix and suffix around a node."""

    prefix: str
    value: Any
    suffix: str = ""

    def length(self) -> int:
        return len(self.prefix.encode()) + self.value.length() + len(self.suffix.encode())

    def equal(self, other) -> bool:
        return (isinstance(other, TextWrap) and self.prefix == other.prefix
                and self.suffix == other.suffix and self.value.equal(other.value))

    def compact(self, out: list, d: int):
        start = len(out)
        out.append(self.prefix)
        self.value = self.value.compact(out, d)
        out.append(self.suffix)
        if isinstance(self.value, TextLine):
            return TextLine("".join(out[start:]))
        return self

    def expand(self, out: list, d: int, n: int) -> None:
        out.append(self.prefix)
        self.value.expand(out, d, n)
        out.append(self.suffix)

    def __str__(self) -> str:
        out: list[str] = []
        node = self.compact(out, DIFF_UNKNOWN)
        text = [_indent(0, DIFF_UNKNOWN)]
        node.expand(text, DIFF_UNKNOWN, 0)
        text.append("\n")
        return "".join(text)


@dataclass(eq=False)
class Record:
    """``textRecord``."""

    value: Any
    diff: int = 0
    key: str = ""
    elide_comma: bool = False
    comment: Any = None


class DiffStats:
    """``diffStats``: what a ``...`` stands for."""

    __slots__ = ("name", "ignored", "identical", "removed", "inserted", "modified")

    def __init__(self, name: str, ignored=0, identical=0, removed=0, inserted=0, modified=0):
        self.name = name
        self.ignored, self.identical = ignored, identical
        self.removed, self.inserted, self.modified = removed, inserted, modified

    def counts(self) -> tuple:
        return (self.ignored, self.identical, self.removed, self.inserted, self.modified)

    def is_zero(self) -> bool:
        return not any(self.counts())

    def num_diff(self) -> int:
        return self.removed + self.inserted + self.modified

    def append(self, other: DiffStats) -> DiffStats:
        return DiffStats(self.name, *(a + b for a, b in zip(self.counts(), other.counts())))

    def __eq__(self, other) -> bool:
        return (isinstance(other, DiffStats) and self.name == other.name
                and self.counts() == other.counts())

    def __str__(self) -> str:
        labels = ("ignored", "identical", "removed", "inserted", "modified")
        parts = [f"{n} {label}" for n, label in zip(self.counts(), labels) if n > 0]
        total = sum(self.counts())
        name = self.name
        if total > 1:
            name += "s"
            if name.endswith("ys"):
                name = name[:-2] + "ies"
        if not parts:
            return ""
        if len(parts) <= 2:
            return " and ".join(parts) + " " + name
        return ", ".join(parts[:-1]) + ", and " + parts[-1] + " " + name


class TextList(list):
    """``textList``: comma-separated records, on one line or several."""

    def append_ellipsis(self, stats: DiffStats | None = None) -> None:
        has_stats = stats is not None and not stats.is_zero()
        if not self or not self[-1].value.equal(TEXT_ELLIPSIS):
            self.append(Record(TEXT_ELLIPSIS, elide_comma=True,
                               comment=stats if has_stats else None))
        elif has_stats:
            self[-1].comment = self[-1].comment.append(stats)

    def length(self) -> int:
        total = 0
        for index, record in enumerate(self):
            total += len(record.key.encode())
            if record.key:
                total += 2
            total += record.value.length()
            if index < len(self) - 1:
                total += 2
        return total

    def equal(self, other) -> bool:
        if not isinstance(other, TextList) or len(self) != len(other):
            return False
        return all(a.diff == b.diff and a.key == b.key and a.value.equal(b.value)
                   and a.comment == b.comment for a, b in zip(self, other))

    def compact(self, out: list, d: int):
        records = [Record(r.value, r.diff, r.key, r.elide_comma, r.comment) for r in self]
        start = len(out)
        multi_line = False
        for index, record in enumerate(records):
            if record.diff in (DIFF_INSERTED, DIFF_REMOVED):
                multi_line = True
            out.append(record.key)
            if record.key:
                out.append(": ")
            record.value = record.value.compact(out, d | record.diff)
            if not isinstance(record.value, TextLine):
                multi_line = True
            if record.comment is not None:
                multi_line = True
            if index < len(records) - 1:
                out.append(", ")
        text = "".join(out[start:])
        if d in (DIFF_INSERTED, DIFF_REMOVED) and len(text.encode()) > MAX_COLUMN_LENGTH:
            multi_line = True
        if not multi_line:
            return TextLine(text)
        return TextList(records)

    def _align(self, skip, length) -> list[int]:
        start = end = longest = 0
        lens = [0] * len(self)
        for index, record in enumerate(self):
            if skip(record):
                for j in range(start, min(end, len(self))):
                    lens[j] = longest - length(self[j])
                start, end, longest = index + 1, index + 1, 0
            else:
                longest = max(longest, length(record))
                end = index + 1
        for j in range(start, min(end, len(self))):
            lens[j] = longest - length(self[j])
        return lens

    def expand(self, out: list, d: int, n: int) -> None:
        key_lens = self._align(lambda r: r.key == "" or not isinstance(r.value, TextLine),
                               lambda r: len(r.key))
        value_lens = self._align(lambda r: not isinstance(r.value, TextLine)
                                 or r.value.equal(TEXT_ELLIPSIS) or r.comment is None,
                                 lambda r: len(r.value))
        simple = bool(self) and all(r.diff == 0 and r.key == "" and isinstance(r.value, TextLine)
                                    and r.comment is None for r in self)
        if simple:
            n += 1
            batch = ""
            for record in self:
                line = str(record.value)
                if len((batch + line).encode()) + 2 > MAX_COLUMN_LENGTH and batch:
                    out.append("\n" + _indent(n, d) + batch.rstrip(" "))
                    batch = ""
                batch += line + ", "
            if batch:
                out.append("\n" + _indent(n, d) + batch.rstrip(" "))
            n -= 1
            out.append("\n" + _indent(n, d))
            return
        n += 1
        for index, record in enumerate(self):
            out.append("\n" + _indent(n, d | record.diff))
            if record.key:
                out.append(record.key + ": ")
            out.append(" " * key_lens[index])
            record.value.expand(out, d | record.diff, n)
            if not record.elide_comma:
                out.append(",")
            out.append(" " * value_lens[index])
            if record.comment is not None:
                out.append(" // " + str(record.comment))
        n -= 1
        out.append("\n" + _indent(n, d))


def _indent(n: int, d: int) -> str:
    # go-cmp's appendIndent in its no-break-space variant (see the module docstring).
    if d == DIFF_REMOVED:
        lead = "-\u00a0"
    elif d == DIFF_INSERTED:
        lead = "+\u00a0"
    else:
        lead = "\u00a0\u00a0"
    return lead + "\t" * n


# -- formatting (report_compare.go, report_reflect.go) -------------------------------------------

@dataclass(frozen=True)
class Options:
    """``formatOptions``."""

    diff_mode: int = DIFF_UNKNOWN
    type_mode: int = EMIT_TYPE
    avoid_stringer: bool = False
    verbosity_level: int = 0
    limit_verbosity: bool = False

    def with_(self, **changes) -> Options:
        values = dict(diff_mode=self.diff_mode, type_mode=self.type_mode,
                      avoid_stringer=self.avoid_stringer, verbosity_level=self.verbosity_level,
                      limit_verbosity=self.limit_verbosity)
        values.update(changes)
        return Options(**values)

    def with_verbosity(self, level: int) -> Options:
        return self.with_(verbosity_level=level, limit_verbosity=True)

    def verbosity(self) -> int:
        return min(max(self.verbosity_level, 0), 16)


def _verbosity_preset(opts: Options, i: int) -> Options:
    return opts.with_(verbosity_level=opts.verbosity() + 2 * i,
                      avoid_stringer=opts.avoid_stringer or i > 0)


def format_type(opts: Options, t: GoType, s):
    """``FormatType``."""
    if opts.type_mode == AUTO_TYPE:
        if t.kind not in _COMPOSITE:
            return s
        if isinstance(s, TextLine) and s.equal(TEXT_NIL):
            return s
        if opts.diff_mode == DIFF_IDENTICAL:
            return s
    elif opts.type_mode == ELIDE_TYPE:
        return s
    name = t.name
    if not t.named and t.kind == PTR:
        name = "(" + name + ")"
    return TextWrap(name, _wrap_parens(s))


def _wrap_parens(s):
    if isinstance(s, TextWrap):
        has_parens = s.prefix.startswith("(") and s.suffix.endswith(")")
        has_braces = s.prefix.startswith("{") and s.suffix.endswith("}")
        if has_parens or has_braces:
            return s
    return TextWrap("(", s, ")")


def format_string(s: str) -> str:
    """``formatString``: quoted, or back-quoted when that is shorter and printable."""
    quoted = go_quote(s)
    raw = s.encode("utf-8", "surrogatepass")
    if len(quoted.encode("utf-8", "surrogatepass")) == len(raw) + 2:
        return quoted
    if all((ch.isprintable() or ch == "\t") and ch not in "`\n" for ch in s):
        return "`" + s + "`"
    return quoted


def _format_string_node(opts: Options, prefix: str, s: str):
    max_len = len(s.encode("utf-8", "surrogatepass"))
    max_lines = s.count("\n") + 1
    if opts.limit_verbosity:
        max_len = (1 << opts.verbosity()) << 5
        max_lines = (1 << opts.verbosity()) << 2
    lines = s[:-1].split("\n") if s.endswith("\n") else s.split("\n")
    triple = len(lines) >= 4 and opts.diff_mode in (DIFF_REMOVED, DIFF_INSERTED)
    index = 0
    while index < len(lines) and triple:
        line = lines[index]
        line = line[:-1] if line.endswith("\r") else line
        line = line[1:] if line.startswith("\r") else line
        lines[index] = line
        unprefixed = line[len(prefix):] if line.startswith(prefix) else line
        triple = (not unprefixed.startswith('"""') and not line.startswith("...")
                  and all(ch.isprintable() or ch == "\t" for ch in line)
                  and len(line.encode("utf-8", "surrogatepass")) <= max_len)
        index += 1
    if triple:
        records = TextList([Record(TextLine(prefix + '"""'), opts.diff_mode, elide_comma=True)])
        for index, line in enumerate(lines):
            elided = len(lines) - index
            if index == max_lines - 1 and elided > 1:
                records.append(Record(TEXT_ELLIPSIS, opts.diff_mode, elide_comma=True,
                                      comment=f"{elided} elided lines"))
                break
            records.append(Record(TextLine(line), opts.diff_mode, elide_comma=True))
        records.append(Record(TextLine(prefix + '"""'), opts.diff_mode, elide_comma=True))
        return TextWrap("(", records, ")")
    raw = s.encode("utf-8", "surrogatepass")
    if len(raw) > max_len + 3:
        cut = raw[:max_len].decode("utf-8", "replace")
        return TextLine(prefix + format_string(cut) + "...")
    return TextLine(prefix + format_string(s))


def format_value(opts: Options, t: GoType, v: Any):
    """``FormatValue``: a value by reflection, types elided or not as the mode says."""
    if v is MISSING:
        return None
    if not opts.avoid_stringer and t.stringer:
        return _format_string_node(opts, "s", t.stringer(v) if callable(t.stringer) else v)
    skip_type = False
    kind = t.kind
    if kind == BOOL:
        out = TextLine("true" if v else "false")
    elif kind == INT:
        out = TextLine(str(v))
    elif kind == FLOAT:
        out = TextLine(repr(v))
    elif kind == STRING:
        out = _format_string_node(opts, "", v)
    elif kind == LEAF:
        return t.format_leaf(opts, v)  # it prints its type itself, if it has one to print
    elif kind == STRUCT:
        records = TextList()
        max_len = len(t.fields)
        inner = opts
        if opts.limit_verbosity:
            max_len = ((1 << opts.verbosity()) >> 1) << 2
            inner = opts.with_(verbosity_level=opts.verbosity_level - 1)
        for (name, field_type), fv in zip(t.fields, v):
            if is_zero(field_type, fv):
                continue
            if len(records) == max_len:
                records.append_ellipsis()
                break
            text = format_value(inner.with_(type_mode=AUTO_TYPE), field_type, fv)
            records.append(Record(text, key=name))
        out = TextWrap("{", records, "}")
    elif kind == SLICE:
        if v is None:
            out = TEXT_NIL
        else:
            out = _format_items(opts, t, [(None, item) for item in v])
    elif kind == MAP:
        if v is None:
            out = TEXT_NIL
        else:
            out = _format_items(opts, t, sorted(v.items()))
    elif kind == PTR:
        if v is None:
            out = TEXT_NIL
        else:
            if not t.named:
                skip_type = True  # the value prints the type
            out = TextWrap("&", format_value(opts, t.elem, v))
    else:
        raise TypeError(f"{t.name} kind not handled")
    return out if skip_type else format_type(opts, t, out)


def _format_items(opts: Options, t: GoType, items: list) -> TextWrap:
    max_len = len(items)
    inner = opts
    if opts.limit_verbosity:
        max_len = ((1 << opts.verbosity()) >> 1) << 2
        inner = opts.with_(verbosity_level=opts.verbosity_level - 1)
    records = TextList()
    for key, item in items:
        if len(records) == max_len:
            records.append_ellipsis()
            break
        text = format_value(inner.with_(type_mode=ELIDE_TYPE), t.elem, item)
        records.append(Record(text, key="" if key is None else format_map_key(t.key, key)))
    return TextWrap("{", records, "}")


def format_map_key(t: GoType, key: Any) -> str:
    """``formatMapKey``: a map key on one line."""
    opts = Options(diff_mode=DIFF_IDENTICAL, type_mode=ELIDE_TYPE,
                   verbosity_level=MAX_VERBOSITY_PRESET, limit_verbosity=True)
    node = format_value(opts, t, key)
    out: list[str] = []
    node = node.compact(out, DIFF_IDENTICAL)
    text = [_indent(0, DIFF_UNKNOWN)]
    node.expand(text, DIFF_UNKNOWN, 0)
    return "".join(text).strip()


def format_diff(opts: Options, node: Node):
    """``FormatDiff``: the text tree of a comparison tree."""
    if opts.diff_mode == DIFF_IDENTICAL:
        opts = opts.with_verbosity(1)
    elif opts.verbosity() < 3:
        opts = opts.with_verbosity(3)
    if can_format_diff_slice(opts, node):
        return format_diff_slice(opts, node)
    t = node.type
    if node.max_depth == 0:
        mode = opts.diff_mode
        if mode in (DIFF_UNKNOWN, DIFF_IDENTICAL):
            if node.num_diff == 0:
                outx = format_value(opts, t, node.vx)
                outy = format_value(opts, t, node.vy)
                return outx if outx.length() < outy.length() else outy
            records = TextList()
            elided = opts.with_(type_mode=ELIDE_TYPE)
            outx = format_value(elided, t, node.vx)
            outy = format_value(elided, t, node.vy)
            i = 0
            while i <= MAX_VERBOSITY_PRESET and outx is not None and outy is not None \
                    and outx.equal(outy):
                preset = _verbosity_preset(opts, i).with_(type_mode=ELIDE_TYPE)
                outx = format_value(preset, t, node.vx)
                outy = format_value(preset, t, node.vy)
                i += 1
            if outx is not None:
                records.append(Record(outx, DIFF_REMOVED))
            if outy is not None:
                records.append(Record(outy, DIFF_INSERTED))
            return format_type(opts.with_(type_mode=EMIT_TYPE), t, records)
        if mode == DIFF_REMOVED:
            return format_value(opts, t, node.vx)
        return format_value(opts, t, node.vy)
    if t.kind in (STRUCT, SLICE, MAP):
        out = _format_diff_list(opts, node.records, t)
        return format_type(opts, t, out)
    if t.kind == PTR:
        return TextWrap("&", format_diff(opts, node.value))
    raise TypeError(f"{t.name} cannot have children")


def _format_key(t: GoType, key) -> str:
    if t.kind == STRUCT:
        return key
    if t.kind == SLICE:
        return ""
    return format_map_key(t.key, key)


def _coalesce(name: str, records: list) -> list[DiffStats]:
    groups: list[DiffStats] = []
    previous = 0
    for _, node in records:
        if node.num_diff == 0:
            case = 1
        else:
            case = 2
        if case != previous:
            groups.append(DiffStats(name))
            previous = case
        stats = groups[-1]
        if case == 1:
            stats.identical += 1
        elif node.vy is MISSING:
            stats.removed += 1
        elif node.vx is MISSING:
            stats.inserted += 1
        else:
            stats.modified += 1
    return groups


def _format_diff_list(opts: Options, records: list, t: GoType):
    if t.kind == STRUCT:
        name, opts = "field", opts.with_(type_mode=AUTO_TYPE)
    elif t.kind == SLICE:
        name, opts = "element", opts.with_(type_mode=ELIDE_TYPE)
    else:
        name, opts = "entry", opts.with_(type_mode=ELIDE_TYPE)
    max_len = -1
    if opts.limit_verbosity:
        if opts.diff_mode == DIFF_IDENTICAL:
            max_len = ((1 << opts.verbosity()) >> 1) << 2
        else:
            max_len = (1 << opts.verbosity()) << 1
        opts = opts.with_(verbosity_level=opts.verbosity_level - 1)

    if opts.diff_mode in (DIFF_IDENTICAL, DIFF_REMOVED, DIFF_INSERTED):
        out = TextList()
        deferred = False
        for key, node in records:
            if len(out) == max_len:
                deferred = True
                break
            if t.kind == STRUCT:
                if opts.diff_mode == DIFF_IDENTICAL:
                    zero = is_zero(node.type, node.vx) or is_zero(node.type, node.vy)
                elif opts.diff_mode == DIFF_REMOVED:
                    zero = is_zero(node.type, node.vx)
                else:
                    zero = is_zero(node.type, node.vy)
                if zero:
                    continue
            text = format_diff(opts, node)
            if text is not None:
                out.append(Record(text, key=_format_key(t, key)))
        if deferred:
            out.append_ellipsis()
        return TextWrap("{", out, "}")

    out = TextList()
    num_diffs = 0
    groups = _coalesce(name, records)
    max_group = DiffStats(name)
    remaining = list(records)
    for index, stats in enumerate(groups):
        if max_len >= 0 and num_diffs >= max_len:
            max_group = max_group.append(stats)
            continue
        if stats.num_diff() == 0:
            lo = hi = 0
            equal = stats.ignored + stats.identical
            while lo < NUM_CONTEXT_RECORDS and lo + hi < equal and index != 0:
                lo += 1
            while hi < NUM_CONTEXT_RECORDS and lo + hi < equal and index != len(groups) - 1:
                hi += 1
            if equal - (lo + hi) == 1 and stats.ignored == 0:
                hi += 1  # no point eliding a single record
            identical = opts.with_(diff_mode=DIFF_IDENTICAL)
            for key, node in remaining[:lo]:
                out.append(Record(format_diff(identical, node), key=_format_key(t, key)))
            if equal > lo + hi:
                stats.identical -= lo + hi
                out.append_ellipsis(stats)
            for key, node in remaining[equal - hi:equal]:
                out.append(Record(format_diff(identical, node), key=_format_key(t, key)))
            remaining = remaining[equal:]
            continue
        for key, node in remaining[:stats.num_diff()]:
            if can_format_diff_slice(opts, node):
                out.append(Record(format_diff_slice(opts, node), key=_format_key(t, key)))
            elif node.num_children == node.max_depth:
                outx = format_diff(opts.with_(diff_mode=DIFF_REMOVED), node)
                outy = format_diff(opts.with_(diff_mode=DIFF_INSERTED), node)
                i = 0
                while i <= MAX_VERBOSITY_PRESET and outx is not None and outy is not None \
                        and outx.equal(outy):
                    preset = _verbosity_preset(opts, i)
                    outx = format_diff(preset.with_(diff_mode=DIFF_REMOVED), node)
                    outy = format_diff(preset.with_(diff_mode=DIFF_INSERTED), node)
                    i += 1
                if outx is not None:
                    out.append(Record(outx, DIFF_REMOVED, _format_key(t, key)))
                if outy is not None:
                    out.append(Record(outy, DIFF_INSERTED, _format_key(t, key)))
            else:
                out.append(Record(format_diff(opts, node), key=_format_key(t, key)))
        remaining = remaining[stats.num_diff():]
        num_diffs += stats.num_diff()
    if not max_group.is_zero():
        out.append_ellipsis(max_group)
    return TextWrap("{", out, "}")


# -- long strings and slices of numbers (report_slices.go) -----------------------------------------

_INT_BITS = {"int8": 8, "uint8": 8, "byte": 8, "int16": 16, "uint16": 16, "int32": 32,
             "uint32": 32}


def can_format_diff_slice(opts: Options, node: Node) -> bool:
    """``CanFormatDiffSlice``: a differing string of 32 bytes or more, or a differing
    slice of numbers or bools (mostly different, or of 32 elements or more)."""
    if opts.diff_mode != DIFF_UNKNOWN or node.num_diff == 0:
        return False
    x, y, t = node.vx, node.vy, node.type
    if x is MISSING or y is MISSING or node.num_compared > 1:
        return False
    if node.num_compared == 1 and t.named:
        return False
    if t.kind == STRING:
        return len(_bytes(x)) >= 32 and len(_bytes(y)) >= 32
    if t.kind != SLICE or t.elem.kind not in (INT, BOOL, FLOAT) or x is None or y is None:
        return False
    if not x or not y:
        return False
    if node.num_diff > node.num_same:
        return True
    return len(x) >= 32 and len(y) >= 32


def _bytes(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _text(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def _bool_script(x, y) -> list[int]:
    # diff.Difference with diff.BoolResult: equal is {NumSame: 1}, unequal {NumDiff: 2}
    same, different = _Result(1, 0), _Result(0, 2)
    return difference(len(x), len(y), lambda ix, iy: same if x[ix] == y[iy] else different)


class _Result:
    __slots__ = ("num_same", "num_diff")

    def __init__(self, num_same: int, num_diff: int):
        self.num_same, self.num_diff = num_same, num_diff


def _dist(edits: list[int]) -> int:
    return sum(1 for e in edits if e != IDENTITY)


def _is_print_or_space(ch: str) -> bool:
    return ch.isprintable() or ch.isspace()


def format_diff_slice(opts: Options, node: Node):
    """``FormatDiffSlice``: a chunked diff of two strings or slices of numbers."""
    t, x, y = node.type, node.vx, node.vy
    records = None
    delim = ""
    mostly_text = False
    if t.kind == STRING:
        bx, by = _bytes(x), _bytes(y)
        total = valid = lines = last_line = max_line = 0
        index = 0
        for ch in x + y:
            total += 1
            if _is_print_or_space(ch) and ch != "\ufffd" and not 0xDC80 <= ord(ch) <= 0xDCFF:
                valid += 1
            if ch == "\n":
                max_line = max(max_line, index - last_line)
                last_line = index + 1
                lines += 1
            index += len(_bytes(ch))
        pure_text = valid == total
        mostly_text = valid > math.floor(0.90 * total)
        lined = pure_text and lines >= 4 and max_line <= 1024
        if lined:
            lx, ly = x.split("\n"), y.split("\n")
            es_lines, es_bytes = _bool_script(lx, ly), _bool_script(bx, by)
            efficiency_lines = _dist(es_lines) / len(es_lines)
            efficiency_bytes = _dist(es_bytes) / len(es_bytes)
            expansion = len(_bytes(go_quote(x + y))) / (len(bx) + len(by))
            lined = efficiency_lines < 4 * efficiency_bytes or expansion > 1.1
        if lined:
            records = _format_diff_chunks(opts, lx, ly, 1, "line",
                                          lambda v, d: Record(TextLine(format_string(v[0])), d))
            delim = "\n"
            triple = _triple_quoted(opts, records, t)
            if triple is not None:
                return triple
        elif mostly_text:
            records = _format_diff_chunks(
                opts, bx, by, 64, "byte",
                lambda v, d: Record(TextLine(format_string(_text(bytes(v)))), d))
        else:
            records = _format_diff_chunks(
                opts, bx, by, 16, "byte",
                lambda v, d: Record(TextLine(", ".join(f"0x{b:02x}" for b in v)), d,
                                    comment=f"{chr(d)}|{_ascii(bytes(v))}|"))
    else:
        kind = t.elem.kind
        if kind == BOOL:
            chunk = 16
        else:
            chunk = {8: 16, 16: 12, 32: 8}.get(_INT_BITS.get(t.elem.name, 64), 8)
        records = _format_diff_chunks(
            opts, x, y, chunk, t.elem.name.split(".")[-1] if not t.elem.named else kind,
            lambda v, d: Record(TextLine(", ".join(_primitive(t.elem, e) for e in v)), d))
    out = TextWrap("{", records, "}")
    if not mostly_text:
        if t.kind == STRING:
            opts = opts.with_(type_mode=EMIT_TYPE)
        return format_type(opts, t, out)
    out = TextWrap("strings.Join(", out, f", {go_quote(delim)})")
    if t.named:
        out = format_type(opts, t, out)
    return out


def _primitive(t: GoType, value) -> str:
    if t.kind == BOOL:
        return "true" if value else "false"
    if t.kind == FLOAT:
        return repr(value)
    return str(value)


def _ascii(data: bytes) -> str:
    return "".join(chr(b) if 0x20 <= b <= 0x7E else "." for b in data)


def _triple_quoted(opts: Options, records: TextList, t: GoType):
    # The """ block of lined text, unless a line would make it ambiguous.
    triple = True
    removed: set[str] = set()
    inserted: set[str] = set()
    block = TextList([Record(TextLine('"""'), elide_comma=True)])
    for record in records:
        if not record.value.equal(TEXT_ELLIPSIS):
            line = _unquote(str(record.value))
            line = line[:-1] if line.endswith("\r") else line
            line = line[1:] if line.startswith("\r") else line
            normalized = "".join(ch for ch in line if not ch.isspace())
            triple = (not line.startswith('"""') and not line.startswith("...")
                      and all(ch.isprintable() or ch == "\t" for ch in line))
            if record.diff == DIFF_REMOVED:
                triple = triple and normalized not in inserted
                removed.add(normalized)
            elif record.diff == DIFF_INSERTED:
                triple = triple and normalized not in removed
                inserted.add(normalized)
            if not triple:
                break
            record = Record(TextLine(line), record.diff, record.key, True, record.comment)
        if record.diff not in (DIFF_REMOVED, DIFF_INSERTED):
            removed, inserted = set(), set()
        block.append(record)
    if not triple:
        return None
    last = block[-1]
    if last.diff == DIFF_IDENTICAL and isinstance(last.value, TextLine) and not last.value:
        block.pop()
    block.append(Record(TextLine('"""'), elide_comma=True))
    out = TextWrap("(", block, ")")
    if t.named:
        out = format_type(opts, t, out)
    return out


def _unquote(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1]
    import json
    try:
        return json.loads(text)
    except ValueError:
        return text[1:-1]


def _format_diff_chunks(opts: Options, x, y, chunk: int, name: str, make) -> TextList:
    """``formatDiffSlice``: the edit script of ``x`` and ``y`` printed in chunks."""
    def eq(ix: int, iy: int) -> bool:
        return x[ix] == y[iy]

    edits = _bool_script(x, y)
    records = TextList()

    def append_chunks(values, mode: int) -> int:
        for start in range(0, len(values), chunk):
            records.append(make(values[start:start + chunk], mode))
        return len(values)

    num_diffs = 0
    max_len = -1
    if opts.limit_verbosity:
        max_len = (1 << opts.verbosity()) << 2
        opts = opts.with_(verbosity_level=opts.verbosity_level - 1)
    groups = _coalesce_edits(name, edits)
    groups = _coalesce_intervening(groups, chunk // 4)
    groups = _cleanup_surrounding(groups, eq)
    max_group = DiffStats(name)
    for index, stats in enumerate(groups):
        if max_len >= 0 and num_diffs >= max_len:
            max_group = max_group.append(stats)
            continue
        if stats.num_diff() == 0:
            lo = hi = 0
            equal = stats.ignored + stats.identical
            while lo < chunk * NUM_CONTEXT_RECORDS and lo + hi < equal and index != 0:
                lo += 1
            while hi < chunk * NUM_CONTEXT_RECORDS and lo + hi < equal and \
                    index != len(groups) - 1:
                hi += 1
            if equal - (lo + hi) <= chunk and stats.ignored == 0:
                hi = equal - lo
            append_chunks(x[:lo], DIFF_IDENTICAL)
            if equal > lo + hi:
                stats.identical -= lo + hi
                records.append_ellipsis(stats)
            append_chunks(x[equal - hi:equal], DIFF_IDENTICAL)
            x, y = x[equal:], y[equal:]
            continue
        before = len(records)
        nx = append_chunks(x[:stats.identical + stats.removed + stats.modified], DIFF_REMOVED)
        x = x[nx:]
        ny = append_chunks(y[:stats.identical + stats.inserted + stats.modified], DIFF_INSERTED)
        y = y[ny:]
        num_diffs += len(records) - before
    if not max_group.is_zero():
        records.append_ellipsis(max_group)
    return records


def _coalesce_edits(name: str, edits: list[int]) -> list[DiffStats]:
    groups: list[DiffStats] = []
    previous = ""
    for edit in edits:
        mode = "=" if edit == IDENTITY else "!"
        if mode != previous:
            groups.append(DiffStats(name))
            previous = mode
        stats = groups[-1]
        if edit == IDENTITY:
            stats.identical += 1
        elif edit == UNIQUE_X:
            stats.removed += 1
        elif edit == UNIQUE_Y:
            stats.inserted += 1
        else:
            stats.modified += 1
    return groups


def _coalesce_intervening(groups: list[DiffStats], window: int) -> list[DiffStats]:
    out: list[DiffStats] = []
    for stats in groups:
        if len(out) >= 2 and stats.num_diff() > 0:
            previous, current = out[-2], out[-1]
            had_x, had_y = previous.removed > 0, previous.inserted > 0
            has_x, has_y = stats.removed > 0, stats.inserted > 0
            if (had_x or has_x) and (had_y or has_y) and current.identical <= window:
                out[-2] = previous.append(current).append(stats)
                out.pop()
                continue
        out.append(stats)
    return out


def _cleanup_surrounding(groups: list[DiffStats], eq) -> list[DiffStats]:
    ix = iy = 0
    for index, stats in enumerate(groups):
        if stats.num_diff() == 0:
            ix += stats.identical
            iy += stats.identical
            continue
        nx = stats.identical + stats.removed + stats.modified
        ny = stats.identical + stats.inserted + stats.modified
        leading = trailing = 0
        while leading < nx and leading < ny and eq(ix + leading, iy + leading):
            leading += 1
        while trailing < nx and trailing < ny and eq(ix + nx - 1 - trailing,
                                                      iy + ny - 1 - trailing):
            trailing += 1
        if leading + trailing > 0:
            # Go prepends or appends a group for spans at the ends in deferred functions
            # whose change to the result never reaches the caller; so those spans stay here.
            if leading > 0 and index - 1 >= 0:
                groups[index - 1].identical += leading
                ix += leading
                iy += leading
            else:
                leading = 0
            if trailing > 0 and index + 1 < len(groups):
                groups[index + 1].identical += trailing
            else:
                trailing = 0
            nx -= leading + trailing
            ny -= leading + trailing
            groups[index] = DiffStats(stats.name, removed=nx, inserted=ny)
        ix += nx
        iy += ny
    return groups


def diff(t: GoType, x: Any, y: Any) -> str:
    """``cmp.Diff(x, y)`` of two values of type ``t``: "" when they are equal."""
    root = compare(t, x, y)
    if root.num_diff == 0:
        return ""
    return str(_as_wrap(format_diff(Options(), root)))


def _as_wrap(node):
    return node if isinstance(node, TextWrap) else TextWrap("", node)
