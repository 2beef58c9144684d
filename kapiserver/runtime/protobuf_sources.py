"""Upstream's Go and proto sources, read for ``protobuf_generate`` (a developer tool).

``Source`` reads files from bare git mirrors at one tag; ``GoPackage`` the type
declarations of a package's Go files (struct fields with their tags, named types, the
types that marshal themselves); ``parse_proto`` the messages of a ``generated.proto``.
Both readers know gofmt'd, generated code, not Go or proto at large, and fail loudly on
what they cannot read.
"""

from __future__ import annotations

import pathlib
import re
import subprocess

#: Go module -> its mirror directory (``owner+name/repo``, as the search tool lays them).
MODULES = {
    "k8s.io/api": "kubernetes+api",
    "k8s.io/apimachinery": "kubernetes+apimachinery",
    "k8s.io/apiextensions-apiserver": "kubernetes+apiextensions-apiserver",
    "k8s.io/kube-aggregator": "kubernetes+kube-aggregator",
}
_GO_BUILTINS = {"string", "bool", "byte", "rune", "int", "int8", "int16", "int32", "int64",
                "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "any",
                "error", "uintptr"}
PROTO_SCALARS = {"string", "bool", "int32", "int64", "double", "bytes"}


class GenerateError(Exception):
    """Upstream's Go and proto sources disagree, or hold something the tables cannot say."""


class Source:
    """The files of the modules at one tag, read from their bare git mirrors."""

    def __init__(self, mirrors: str, tag: str):
        self.mirrors, self.tag = pathlib.Path(mirrors), tag

    def _locate(self, import_path: str) -> tuple[pathlib.Path, str]:
        for module, mirror in MODULES.items():
            if import_path == module or import_path.startswith(module + "/"):
                return self.mirrors / mirror / "repo", import_path[len(module) + 1:]
        raise GenerateError(f"no mirror holds Go package {import_path}")

    def _git(self, repo: pathlib.Path, *args: str) -> str:
        result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                                text=True, check=False)
        if result.returncode:
            raise GenerateError(f"git {' '.join(args)} in {repo}: {result.stderr.strip()}")
        return result.stdout

    def go_files(self, import_path: str) -> list[str]:
        """The texts of a package's Go files, tests and generated marshallers left out."""
        repo, directory = self._locate(import_path)
        names = self._git(repo, "ls-tree", "--name-only", f"{self.tag}:{directory}").split()
        return [self._git(repo, "show", f"{self.tag}:{directory}/{name}") for name in names
                if name.endswith(".go") and not name.endswith(("_test.go", ".pb.go"))]

    def proto(self, import_path: str) -> str:
        repo, directory = self._locate(import_path)
        return self._git(repo, "show", f"{self.tag}:{directory}/generated.proto")


_COMMENT_OR_STRING = re.compile(r'"(?:\\.|[^"\\\n])*"|`[^`]*`|//[^\n]*|/\*.*?\*/', re.S)


def _strip_comments(text: str) -> str:
    return _COMMENT_OR_STRING.sub(
        lambda m: m.group(0) if m.group(0)[0] in "\"`" else
        "\n" * m.group(0).count("\n"), text)


def _block(text: str, start: int) -> tuple[str, int]:
    """The text between the brace at ``start`` and its match, and the position after it."""
    depth = 0
    for pos in range(start, len(text)):
        if text[pos] == "{":
            depth += 1
        elif text[pos] == "}":
            depth -= 1
            if depth == 0:
                return text[start + 1:pos], pos + 1
    raise GenerateError("unbalanced braces")


class GoField:
    __slots__ = ("go_name", "type", "tags", "embedded")

    def __init__(self, go_name, type_, tags, embedded):
        self.go_name, self.type, self.tags, self.embedded = go_name, type_, tags, embedded


class GoPackage:
    """The type declarations of one Go package: ``name`` (its package clause), ``structs``
    (name -> [GoField]), ``named`` (name -> underlying type), ``marshalers`` (types with a
    MarshalJSON method). Type
    expressions are trees: ("named", import path, name), ("ptr", t), ("slice", t),
    ("map", key, value), ("builtin", name).

    The files are gofmt'd: top-level declarations start their lines, a ``type ( ... )``
    group's are indented by one tab. A declaration that cannot be read (generics, function
    types, anonymous structs) is remembered in ``unreadable`` and fails only when used.
    """

    _IMPORT = re.compile(r'^\s*(?:(\w+|\.)\s+)?"([^"]+)"\s*$')
    _DECLARATION = re.compile(r"(\w+)\s+(.*)")
    _METHOD = re.compile(r"^func\s*\(\s*\w+\s+\*?(\w+)\s*\)\s*(?:Unm|M)arshalJSON\s*\(", re.M)
    _TAG = re.compile(r'(\w+):"((?:\\.|[^"\\])*)"')

    def __init__(self, path: str, files: list[str]):
        self.path, self.structs, self.named, self.marshalers = path, {}, {}, set()
        self.unreadable = {}
        #: The package clause's name: what ``reflect.Type.String()`` qualifies types with.
        self.name = path.rsplit("/", 1)[-1]
        for text in files:
            text = _strip_comments(text)
            clause = re.search(r"^package\s+(\w+)", text, re.M)
            if clause:
                self.name = clause.group(1)
            imports = self._imports(text)
            self.marshalers.update(self._METHOD.findall(text))
            lines = text.splitlines()
            index = 0
            while index < len(lines):
                line = lines[index]
                index += 1
                if line.startswith("type ("):
                    while index < len(lines) and lines[index] != ")":
                        if lines[index].startswith("\t") and lines[index].strip():
                            index = self._declaration(lines, index, lines[index][1:], imports)
                        else:
                            index += 1
                elif line.startswith("type "):
                    index = self._declaration(lines, index - 1, line[5:], imports)

    def _imports(self, text: str) -> dict:
        imports = {}
        for block in re.findall(r"^import\s*\((.*?)^\)", text, re.S | re.M) + \
                re.findall(r'^import\s+((?:\w+\s+)?"[^"]+")', text, re.M):
            for line in block.splitlines():
                match = self._IMPORT.match(line)
                if match:
                    alias = match.group(1) or match.group(2).rsplit("/", 1)[-1]
                    imports[alias] = match.group(2)
        return imports

    def _declaration(self, lines: list[str], index: int, text: str, imports: dict) -> int:
        """Read the declaration ``text`` that starts line ``index``; the next line's index."""
        match = self._DECLARATION.match(text)
        if match is None:
            return index + 1
        name, rest = match.group(1), match.group(2).strip()
        if re.match(r"(struct|interface)\s*\{", rest):
            depth, body, end = rest.count("{") - rest.count("}"), [], index + 1
            while depth > 0 and end < len(lines):
                depth += lines[end].count("{") - lines[end].count("}")
                if depth > 0:
                    body.append(lines[end])
                end += 1
            if rest.startswith("struct"):
                try:
                    self.structs[name] = [self._field(line, imports)
                                          for line in body if line.strip()]
                except GenerateError as err:
                    self.unreadable[name] = str(err)
            return end
        try:
            self.named[name] = self._type(rest.lstrip("= ").strip(), imports)
        except GenerateError as err:
            self.unreadable[name] = str(err)
        return index + 1

    def _field(self, line: str, imports: dict) -> GoField:
        tag_at = line.find("`")
        tags = dict(self._TAG.findall(line[tag_at:])) if tag_at >= 0 else {}
        words = (line[:tag_at] if tag_at >= 0 else line).split(None, 1)
        if len(words) == 1:  # embedded: the field is named after its type
            go_type = self._type(words[0], imports)
            return GoField(words[0].lstrip("*").rsplit(".", 1)[-1], go_type, tags, True)
        if "," in words[0] or "{" in words[1]:
            raise GenerateError(f"{self.path}: cannot read the field {line.strip()!r}")
        return GoField(words[0], self._type(words[1].strip(), imports), tags, False)

    def _type(self, expr: str, imports: dict):
        if expr.startswith("*"):
            return ("ptr", self._type(expr[1:], imports))
        if expr.startswith("[]"):
            return ("slice", self._type(expr[2:], imports))
        if expr.startswith("map["):
            depth, pos = 0, 3
            for pos in range(3, len(expr)):
                depth += {"[": 1, "]": -1}.get(expr[pos], 0)
                if depth == 0:
                    break
            return ("map", self._type(expr[4:pos], imports), self._type(expr[pos + 1:], imports))
        if re.fullmatch(r"\w+\.\w+", expr):
            alias, name = expr.split(".")
            if alias not in imports:
                raise GenerateError(f"{self.path}: unknown import {alias!r} in {expr!r}")
            return ("named", imports[alias], name)
        if not re.fullmatch(r"\w+", expr):
            raise GenerateError(f"{self.path}: cannot read the Go type {expr!r}")
        if expr in _GO_BUILTINS:
            return ("builtin", expr)
        return ("named", self.path, expr)

    def struct(self, name: str):
        """The fields of struct ``name``, ``None`` for another kind of type."""
        if name in self.unreadable:
            raise GenerateError(self.unreadable[name])
        return self.structs.get(name)


class ProtoField:
    __slots__ = ("label", "type", "value_type", "name", "number")

    def __init__(self, label, type_, value_type, name, number):
        self.label, self.type, self.value_type = label, type_, value_type
        self.name, self.number = name, number


_PROTO_FIELD = re.compile(r"(optional|repeated|required)\s+([\w.]+)\s+(\w+)\s*=\s*(\d+)\s*;")
_PROTO_MAP = re.compile(r"map\s*<\s*([\w.]+)\s*,\s*([\w.]+)\s*>\s+(\w+)\s*=\s*(\d+)\s*;")


def parse_proto(text: str) -> tuple[str, dict]:
    """The package of a ``generated.proto`` and its messages: name -> {number: ProtoField};
    message types fully qualified (no leading dot)."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    package = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M).group(1)

    def qualify(name: str) -> str:
        if name in PROTO_SCALARS:
            return name
        return name[1:] if name.startswith(".") else f"{package}.{name}"

    messages = {}
    for match in re.finditer(r"\bmessage\s+(\w+)\s*\{", text):
        body, _ = _block(text, match.end() - 1)
        fields = {}
        for line in filter(None, (line.strip() for line in body.splitlines())):
            if found := _PROTO_FIELD.fullmatch(line):
                label, type_, name, number = found.groups()
                field = ProtoField(label, qualify(type_), None, name, int(number))
            elif found := _PROTO_MAP.fullmatch(line):
                key, value, name, number = found.groups()
                if key != "string":
                    raise GenerateError(f"{match.group(1)}.{name}: map key {key}")
                field = ProtoField("map", "string", qualify(value), name, int(number))
            else:
                raise GenerateError(f"{package}.{match.group(1)}: cannot read {line!r}")
            fields[field.number] = field
        messages[match.group(1)] = fields
    return package, messages
