"""Requests the fuzzer sends: Hypothesis strategies building one ``Case`` per operation.

Three families, each a strategy over one ``Operation``:

* ``schema_case``: a request the document describes: its path parameters, a few of its
  query parameters with sensible values, and a body that follows the schema (a stored
  object of the kind, or one drawn from the schema, with a few fields redrawn) in the
  media types the operation takes: JSON, YAML, protobuf; every patch type.
* ``broken_case``: the same, its body then broken: wrong types, unknown and duplicate
  fields, huge strings, deep nesting, invalid names, wrong kinds and apiVersions,
  non-JSON, protobuf garbage under the protobuf media type, odd media types.
* ``odd_case``: odd query parameters (selectors, limit, continue, resourceVersion,
  timeouts, dryRun, fieldValidation, fieldManager, unknown and repeated ones) and odd
  ``Accept`` headers.

Path parameters never name the witness namespace, nor objects that would make the server
dial out (connect subresources only target a namespace the fuzzer never writes to), and
writes to the kinds whose objects steer the server (nodes, APIServices, admission
configuration, flow control) are always dry runs.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from dataclasses import dataclass, field

import yaml
from hypothesis import strategies as st

from . import values as v
from .openapi import Operation, path_parameters

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_PATCH, APPLY_PATCH)

#: The namespace the fuzzer writes to (its seeds live there), others it may name, and
#: invalid ones. The witness namespace is never among them.
FUZZ_NAMESPACE = "fuzz"
NAMESPACES = (FUZZ_NAMESPACE, FUZZ_NAMESPACE, "fuzz-b", "fuzz-missing")
#: Namespaces the fuzzer may delete or finalize: never its own, nor the system's.
NAMESPACE_NAMES = ("fuzz-b", "fuzz-doomed", "fuzz-missing")
CONNECT_NAMESPACE = "fuzz-connect"
#: Objects of the connect namespace: a pod no node runs, one bound to a missing node.
CONNECT_NAMES = ("unscheduled", "bound", "absent")
SEED_NAME = "fuzz-a"
NAMES = (SEED_NAME, SEED_NAME, "fuzz-b", "fuzz-missing")
INVALID_NAMES = ("UPPER", "-a", "a" * 254, "..", ".", "a b", "ü", "a:b", "a/b", "%", "a\\b",
                 "a\x00b", "a;b", "a?b=c", "")
#: Cluster-wide deletecollection only deletes objects carrying this label: the bootstrap
#: objects of the server and the witnesses do not.
TARGET_LABEL = "fuzz.kapiserver.io/target"
#: Writes to these resources are always dry runs: their objects make the server dial
#: out (nodes: kubelets; APIServices, webhooks: backends) or steer every later request
#: (admission policies, flow control), which would test nothing but the fuzzer's luck.
DRY_RUN_ONLY = {"nodes", "apiservices", "mutatingwebhookconfigurations",
                "validatingwebhookconfigurations", "validatingadmissionpolicies",
                "validatingadmissionpolicybindings", "flowschemas",
                "prioritylevelconfigurations"}
WRITES = ("POST", "PUT", "PATCH", "DELETE")
#: Watches and watch-like lists are read this long, then closed.
WATCH_READ_SECONDS = 0.05


@dataclass
class Case:
    """One request: ``path`` is already quoted; ``params`` a list of pairs."""

    method: str
    path: str
    params: list = field(default_factory=list)
    headers: dict = field(default_factory=dict)
    body: bytes | None = None
    streams: bool = False  # a watch: read briefly, then close

    def __repr__(self) -> str:
        body = self.body
        if body is not None and len(body) > 600:
            body = body[:600] + f"... ({len(body)} bytes)".encode()
        query = urllib.parse.urlencode(self.params)
        return (f"{self.method} {self.path}{'?' + query if query else ''} "
                f"headers={self.headers} body={body!r}")


@dataclass
class Seeds:
    """What the fuzzer knows of the server: stored objects per (apiVersion, kind), and a
    resourceVersion and continue token it saw."""

    objects: dict = field(default_factory=dict)
    resource_version: str = "1"
    continue_token: str = ""

    def of(self, api_version: str, kind: str) -> list[dict]:
        return self.objects.get((api_version, kind), [])


# -- path parameters ---------------------------------------------------------------------------

def _name_pool(op: Operation, odd: bool):
    if op.is_connect:
        return st.sampled_from(CONNECT_NAMES if op.resource == "pods" else ("absent",))
    pool = NAMESPACE_NAMES if op.names_a_namespace else NAMES
    if odd:
        return st.one_of(st.sampled_from(pool), st.sampled_from(INVALID_NAMES))
    return st.sampled_from(pool)


def _namespace_pool(op: Operation, odd: bool):
    if op.is_connect:
        return st.just(CONNECT_NAMESPACE)
    if odd:
        return st.one_of(st.sampled_from(NAMESPACES), st.sampled_from(INVALID_NAMES))
    return st.sampled_from(NAMESPACES)


@st.composite
def path_values(draw, op: Operation, odd: bool = False) -> dict:
    found = {}
    for name in path_parameters(op.path):
        if name == "namespace":
            found[name] = draw(_namespace_pool(op, odd))
        elif name == "name":
            found[name] = draw(_name_pool(op, odd))
        else:  # a proxy's {path}
            found[name] = draw(st.sampled_from(("", "a", "a/b", "..", "%2e%2e", "healthz")))
    return found


def fill(op: Operation, values: dict) -> str:
    def quoted(match):
        value = values[match.group(1)]
        return urllib.parse.quote(value, safe="/" if match.group(1) == "path" else "")
    return re.sub(r"\{([^}]+)\}", quoted, op.path)


# -- query parameters --------------------------------------------------------------------------

def _b64(data) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


#: name -> (sensible values, odd values).
PARAMETERS = {
    "pretty": (("true", "false"), ("yes", "", "TRUE", "2")),
    "dryRun": (("All",), ("", "Foo", "all", "All,All")),
    "fieldManager": (("fuzz", "kubectl-client-side-apply"),
                     ("", "m" * 129, "\x01", "ünï", " ", "a\nb")),
    "fieldValidation": (("Strict", "Warn", "Ignore"), ("", "strict", "Bogus")),
    "labelSelector": (("app=web", "a in (b,c)", "!a", "a", "a!=b", "tier notin (x)"),
                      ("a in (", "=", "a==b==c", "(", "a b", "a in ()", ",", "k" * 300,
                       "a=" + "b" * 64, "é=1", "a in (b),,c", "a>1", "a<x", "a>b",
                       "!", "a=b,", "a=(b)", "a in (b c)", "\x00")),
    "fieldSelector": (("metadata.name=fuzz-a", "metadata.namespace=fuzz",
                       "metadata.name!=x", "spec.nodeName=", "status.phase=Running",
                       "involvedObject.name=x", "type=Warning", "spec.signerName=x"),
                      ("a", "=", "metadata.name", "metadata.name=x=y", "unknown.field=1",
                       "metadata.name in (x)", "metadata.name==", "\\", "a\\",
                       "metadata.name=a\\,b", "metadata.name=\\x", ",", "!metadata.name",
                       "metadata.name=x,", "metadata.name=" + "n" * 300)),
    "limit": (("1", "2", "500"), ("-1", "0", "abc", "1.5", "99999999999999999999", "",
                                  " 1", "0x10")),
    "continue": ((), ("abc", "%%%", _b64({"v": "meta.k8s.io/v1", "rv": -1, "start": "a"}),
                      _b64({"v": "meta.k8s.io/v1", "rv": 1, "start": "../../x"}),
                      _b64({"v": "x"}), _b64([]), _b64(b"\xff\xfe"), _b64({"v": 1}),
                      _b64({"v": "meta.k8s.io/v1", "rv": 99999999999999999999,
                            "start": ""}), _b64("s"), "eyJ2Ijo")),
    "resourceVersion": (("", "0", "1"), ("abc", "-1", "1.5", " 1", "18446744073709551616",
                                         "0x10", "1e3")),
    "resourceVersionMatch": (("Exact", "NotOlderThan"), ("exact", "Bogus", "")),
    "timeoutSeconds": (("1",), ("-1", "abc", "0.5", "99999999999999999999", "")),
    "watch": (("false",), ("true", "1", "bogus")),
    "allowWatchBookmarks": (("true", "false"), ("bogus",)),
    "sendInitialEvents": (("true", "false"), ("bogus",)),
    "gracePeriodSeconds": (("0", "30"), ("-1", "abc", "99999999999999999999", "1.5")),
    "propagationPolicy": (("Foreground", "Background", "Orphan"), ("bogus", "")),
    "orphanDependents": (("true", "false"), ("bogus",)),
    "force": (("true", "false"), ("bogus",)),
    "timeout": (("10s", "30s"), ("abc", "-1s", "0", "1x", "99999999999h")),
    "includeObject": (("None", "Object", "Metadata"), ("Bogus",)),
    "ignoreStoreReadErrorWithClusterBreakingPotential": (("false",), ("true", "bogus")),
    # The kubelet-bound subresources' options (their documents do not list them).
    "container": (("app", "main"), ("", "UPPER", "a/b")),
    "follow": (("false",), ("true", "bogus")),
    "previous": (("true", "false"), ("bogus",)),
    "sinceSeconds": (("10",), ("-1", "0", "abc")),
    "sinceTime": (("2024-01-02T03:04:05Z",), ("yesterday",)),
    "timestamps": (("true",), ("bogus",)),
    "tailLines": (("10",), ("-5", "abc")),
    "limitBytes": (("100",), ("0", "-1", "abc")),
    "insecureSkipTLSVerifyBackend": (("false",), ("true", "bogus")),
    "stream": (("All",), ("Stdout", "bogus")),
    "command": (("ls",), ("",)),
    "stdin": (("false",), ("bogus",)),
    "stdout": (("true",), ("bogus",)),
    "stderr": (("true",), ("bogus",)),
    "tty": (("false",), ("bogus",)),
    "ports": (("8080",), ("0", "-1", "70000", "abc")),
    "path": (("/", "/healthz"), ("..", "%2e%2e/x")),
}
KUBELET_PARAMETERS = {
    "log": ("container", "follow", "previous", "sinceSeconds", "sinceTime", "timestamps",
            "tailLines", "limitBytes", "insecureSkipTLSVerifyBackend", "stream"),
    "exec": ("command", "container", "stdin", "stdout", "stderr", "tty"),
    "attach": ("container", "stdin", "stdout", "stderr", "tty"),
    "portforward": ("ports",),
    "proxy": ("path",),
}
UNKNOWN_PARAMETERS = (("fuzzUnknown", "1"), ("watch", "true"), ("", "x"), ("a[]", "b"),
                      ("labelSelector", "a"), ("limit", "1"))


def _query_names(op: Operation) -> list[str]:
    names = [name for name, p in op.parameters.items() if p.get("in") == "query"]
    if op.is_connect:
        names += [n for n in KUBELET_PARAMETERS.get(op.subresource, ()) if n not in names]
    return names


@st.composite
def query(draw, op: Operation, odd: bool, seeds: Seeds | None = None) -> list:
    """A few of the operation's query parameters (odd ones too when ``odd``)."""
    names = _query_names(op)
    params = []
    if names:
        chosen = draw(st.lists(st.sampled_from(names), max_size=4 if odd else 2, unique=True))
        for name in chosen:
            sensible, strange = PARAMETERS.get(name, (("x",), ("", "\x7f")))
            pool = (strange or sensible) if odd and draw(v.weighted(70)) else (
                sensible or strange)
            if name == "resourceVersion" and seeds is not None:
                pool = tuple(pool) + (seeds.resource_version,)
            if name == "continue" and seeds is not None and seeds.continue_token:
                pool = tuple(pool) + (seeds.continue_token,)
            params.append((name, draw(st.sampled_from(pool))))
    if odd and draw(v.weighted(30)):
        params.append(draw(st.sampled_from(UNKNOWN_PARAMETERS)))
    if odd and params and draw(v.weighted(15)):
        params.append(draw(st.sampled_from(params)))  # the same parameter twice
    return params


def bound(op: Operation, case: Case) -> Case:
    """Make every request end: watches get a short timeout, reads of lists that became
    watches too; writes to the resources in ``DRY_RUN_ONLY`` are dry runs; a cluster-wide
    deletecollection only deletes objects labelled ``TARGET_LABEL``."""
    names = [name for name, _ in case.params]
    # Request info's rule: the first watch parameter, unless false or 0, makes a GET of a
    # collection a watch (watch=bogus too).
    watch = [value for name, value in case.params if name == "watch"]
    watching = op.is_watch or (case.method == "GET" and bool(watch) and
                               watch[0].lower() not in ("false", "0"))
    if watching or "stream=watch" in case.headers.get("Accept", ""):
        case.streams = True
        if "timeoutSeconds" not in names:
            case.params.append(("timeoutSeconds", "1"))
    if op.resource in DRY_RUN_ONLY and case.method in WRITES:
        case.params.append(("dryRun", "All"))
    if op.action == "deletecollection" and not op.namespaced:
        selector = next((value for name, value in case.params if name == "labelSelector"),
                        None)
        case.params = [(n, val) for n, val in case.params if n != "labelSelector"]
        # The label's requirement first: a selector ends at a NUL where a token starts
        # (upstream's lexer, kept as it is), so "\x00,<label>" would select everything.
        case.params.append(("labelSelector", f"{TARGET_LABEL},{selector}"
                            if selector else TARGET_LABEL))
    if op.action == "get" and op.subresource == "log":
        case.params = [(n, val) for n, val in case.params if n != "follow"]
    return case


# -- bodies ------------------------------------------------------------------------------------

def _body_kind(op: Operation) -> tuple[str, str]:
    """The apiVersion and kind of the operation's body."""
    doc = op.document
    schema = doc.resolve(op.body_schema or {})
    for gvk in schema.get("x-kubernetes-group-version-kind") or ():
        group, version = gvk.get("group", ""), gvk.get("version", "")
        return (f"{group}/{version}" if group else version), gvk.get("kind", "")
    kind = op.kind or {}
    group, version = kind.get("group", ""), kind.get("version", "")
    return (f"{group}/{version}" if group else version), kind.get("kind", "")


@st.composite
def object_body(draw, op: Operation, seeds: Seeds, path: dict) -> dict:
    """An object of the operation's body kind: a stored one or one drawn from the schema,
    with a few fields redrawn from their schema; named as the URL names it."""
    doc = op.document
    api_version, kind = _body_kind(op)
    stored = seeds.of(api_version, kind)
    if stored and draw(v.weighted(75)):
        body = json.loads(json.dumps(draw(st.sampled_from(stored))))
    else:
        body = v.schema_value(draw, doc, op.body_schema or {})
        if not isinstance(body, dict):
            body = {}
    for _ in range(draw(st.integers(0, 2))):
        where = draw(st.sampled_from(v.paths_of(body)))
        schema = v.schema_at(doc, op.body_schema or {}, where)
        if where and schema is not None and where[0] not in ("apiVersion", "kind"):
            v.set_at(body, where, v.schema_value(draw, doc, schema, len(where),
                                                 str(where[-1])))
    if kind:
        body["apiVersion"], body["kind"] = api_version, kind
    meta = body.get("metadata")
    if isinstance(meta, dict) or "metadata" in (doc.resolve(op.body_schema or {}).get(
            "properties") or {}):
        meta = meta if isinstance(meta, dict) else {}
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields",
                    "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                    "selfLink", "ownerReferences", "finalizers"):
            if draw(v.weighted(90)):
                meta.pop(key, None)
        if "name" in path:
            meta["name"] = path["name"]
        elif draw(v.weighted(20)):
            meta.pop("name", None)
            meta["generateName"] = "fuzz-"
        else:
            meta["name"] = draw(st.sampled_from(NAMES))
        if "namespace" in path and draw(v.weighted(50)):
            meta["namespace"] = path["namespace"]
        else:
            meta.pop("namespace", None)
        if draw(v.weighted(20)):
            meta.setdefault("labels", {})[TARGET_LABEL] = "yes"
        body["metadata"] = meta
    return body


def _sanitize(op: Operation, body):
    """No address in a body the fuzzer sends points anywhere but TEST-NET-1."""
    if isinstance(body, dict):
        for key, value in body.items():
            if key in ("url", "address", "ip") and isinstance(value, str):
                body[key] = "https://192.0.2.1:1/" if key == "url" else "192.0.2.1"
            elif key == "service" and isinstance(value, dict) and "namespace" in value:
                value.update(namespace="fuzz-missing", name="absent")
            else:
                _sanitize(op, value)
    elif isinstance(body, list):
        for item in body:
            _sanitize(op, item)
    return body


@st.composite
def patch_document(draw, op: Operation, seeds: Seeds, path: dict, media: str):
    """A patch of ``media`` type: JSON patch operations, a partial object (strategic
    directives too), or an applied configuration."""
    full = draw(object_body(op, seeds, path))
    if media == APPLY_PATCH:
        return full
    pointers = ["/" + "/".join(str(s).replace("~", "~0").replace("/", "~1") for s in p)
                for p in v.paths_of(full, 60)]
    if media == JSON_PATCH:
        ops = []
        for _ in range(draw(st.integers(1, 3))):
            where = draw(st.sampled_from(pointers + ["/metadata/labels/a", "/spec/x/-",
                                                     "", "/", "~1", "/a~2"]))
            action = draw(st.sampled_from(("add", "remove", "replace", "test", "move",
                                           "copy", "bogus")))
            operation = {"op": action, "path": where}
            if action in ("add", "replace", "test"):
                operation["value"] = draw(st.one_of(st.just("x"), st.just({}),
                                                    v.arbitrary_json))
            if action in ("move", "copy"):
                operation["from"] = draw(st.sampled_from(pointers))
            ops.append(operation)
        return ops
    # A merge or strategic merge patch: part of the object.
    partial = {}
    for where in draw(st.lists(st.sampled_from(v.paths_of(full, 80)), min_size=1,
                               max_size=2)):
        node = partial
        for step in where[:-1] if where else ():
            if isinstance(step, int):
                break
            node = node.setdefault(step, {}) if isinstance(node, dict) else node
        if where and isinstance(node, dict) and not isinstance(where[-1], int):
            node[where[-1]] = v.get_at(full, where)
    if draw(v.weighted(30)):
        partial[draw(st.sampled_from(("metadata", "spec")))] = None
    if media == STRATEGIC_PATCH and draw(v.weighted(40)):
        directive = draw(st.sampled_from((
            ("$patch", "replace"), ("$patch", "delete"), ("$patch", "merge"),
            ("$patch", "bogus"), ("$retainKeys", ["spec"]),
            ("$setElementOrder/finalizers", ["a"]),
            ("$deleteFromPrimitiveList/finalizers", ["a"]), ("$bogus", 1))))
        target = partial.get("spec") if isinstance(partial.get("spec"), dict) else partial
        target[directive[0]] = directive[1]
    if media == STRATEGIC_PATCH and draw(v.weighted(20)):
        # A list of maps with the directive inside an item.
        spec = partial.setdefault("spec", {})
        if isinstance(spec, dict):
            spec["containers"] = [{"name": "app", "$patch": draw(st.sampled_from((
                "delete", "replace", "bogus")))}]
    return partial


def _encode(draw, obj, media: str) -> bytes:
    if media == YAML or media == APPLY_PATCH and draw(v.weighted(50)):
        return yaml.safe_dump(obj).encode()
    if media == PROTOBUF:
        from kapiserver.runtime import protobuf

        try:
            return protobuf.encode(obj)
        except Exception:  # a kind or shape the codec does not know: send it as JSON
            return json.dumps(obj).encode()
    return json.dumps(obj).encode()


def _body_media(op: Operation, draw) -> str:
    if op.method == "PATCH":
        documented = [t for t in op.body_types if t in PATCH_TYPES] or list(PATCH_TYPES)
        return draw(st.sampled_from(documented))
    return draw(st.sampled_from((JSON, JSON, JSON, YAML, PROTOBUF)))


@st.composite
def delete_options(draw, op: Operation):
    body = v.schema_value(draw, op.document, op.body_schema or {})
    body = body if isinstance(body, dict) else {}
    body["kind"], body["apiVersion"] = "DeleteOptions", draw(st.sampled_from(
        ("v1", "meta.k8s.io/v1")))
    body.pop("preconditions", None) if draw(v.weighted(70)) else None
    return body


@st.composite
def _document(draw, op: Operation, seeds: Seeds, path: dict, media: str):
    if op.method == "PATCH":
        return draw(patch_document(op, seeds, path, media))
    if op.method == "DELETE":
        return draw(delete_options(op))
    return draw(object_body(op, seeds, path))


def _has_body(op: Operation) -> bool:
    return op.body_schema is not None and op.method in WRITES


# -- the three families ------------------------------------------------------------------------

@st.composite
def schema_case(draw, op: Operation, seeds: Seeds) -> Case:
    path = draw(path_values(op))
    case = Case(op.method, fill(op, path), draw(query(op, False, seeds)))
    if _has_body(op) and (op.method != "DELETE" or draw(v.weighted(50))):
        media = _body_media(op, draw)
        document = _sanitize(op, draw(_document(op, seeds, path, media)))
        case.body = _encode(draw, document, media if op.method != "PATCH" else (
            APPLY_PATCH if media == APPLY_PATCH else JSON))
        if op.method in ("POST", "PUT") and media == PROTOBUF and not case.body.startswith(
                b"k8s\x00"):
            media = JSON
        case.headers["Content-Type"] = media
        if media == APPLY_PATCH and not any(n == "fieldManager" for n, _ in case.params):
            case.params.append(("fieldManager", "fuzz"))
    return bound(op, case)


#: Bodies that are no JSON object at all, or no Kubernetes protobuf.
NOT_JSON = (b"", b"null", b"[]", b"123", b'"str"', b"{", b'{"a":', b"\xff\xfe\x00",
            b'{"metadata":{"name":"\xff"}}', b"\x00" * 16, b"<xml/>", b"NaN",
            b'{"a":1}{"b":2}', b"\xef\xbb\xbf{}", b"{}" + b" " * 10, b'{"a":"\\ud800"}')
PROTOBUF_GARBAGE = (b"", b"k8s", b"k8s\x00", b"k8s\x00\x0a", b"k8s\x00\x0a\x05\x0a\x03v1x",
                    b"k8s\x00\xff\xff\xff\xff\x0f", b"\x0a\x02v1\x12\x03Pod",
                    b"k8s\x00\x0a\x0e\x0a\x02v1\x12\x08NotAKind\x12\x00",
                    b"k8s\x00\x12\x80\x80\x80\x80\x10", b"k8s\x00" + b"\x0a\x00" * 64)
ODD_MEDIA = ("text/plain", "application/x-www-form-urlencoded", "",
             "application/json; charset=latin1", "application/json;charset=utf-16",
             "application/cbor", "application/vnd.kubernetes.protobuf;stream=watch",
             "application/json-patch+json", "multipart/form-data; boundary=x", "*/*",
             "application/yaml;charset=binary", "application/apply-patch+cbor")


def _break(draw, document):
    """``document`` broken in one of the ways a client (or an attacker) gets it wrong;
    returns the body's text, or the document for the caller to encode."""
    how = draw(st.sampled_from(("wrong type", "unknown field", "huge string", "deep",
                                "invalid name", "kind", "null", "numbers", "duplicate")))
    where = draw(st.sampled_from(v.paths_of(document)))
    if how == "wrong type":
        return v.set_at(document, where, v.wrong_type(draw, v.get_at(document, where)))
    if how == "unknown field":
        target = v.get_at(document, where)
        if isinstance(target, dict):
            target[draw(st.sampled_from(("fuzzUnknown", "", "$patch", "metadata",
                                         "apiVersion")))] = draw(v.arbitrary_json)
        return document
    if how == "huge string":
        return v.set_at(document, where, v.huge_string(draw))
    if how == "deep":
        depth = draw(st.sampled_from((100, 1000, 10001, 100000)))
        container = draw(st.sampled_from(("list", "dict")))
        marker = "__FUZZ_DEEP__"
        text = json.dumps(v.set_at(document, where, marker))
        return text.replace(json.dumps(marker), v.nested_json(depth, container), 1)
    if how == "invalid name" and isinstance(document, dict):
        meta = document.setdefault("metadata", {}) if isinstance(
            document.get("metadata", {}), dict) else {}
        meta[draw(st.sampled_from(("name", "generateName", "namespace")))] = draw(
            st.sampled_from(INVALID_NAMES))
        return document
    if how == "kind" and isinstance(document, dict):
        key = draw(st.sampled_from(("kind", "apiVersion", "both", "neither")))
        kinds = ("Pod", "ConfigMap", "Status", "List", "", "NotAKind", 5, None, "DeleteOptions")
        versions = ("v1", "v2", "apps/v1", "nonsense/v1/x", "", "/", "meta.k8s.io/v1", 1,
                    "batch/v1beta1", None)
        if key in ("kind", "both"):
            document["kind"] = draw(st.sampled_from(kinds))
        if key in ("apiVersion", "both"):
            document["apiVersion"] = draw(st.sampled_from(versions))
        if key == "neither":
            document.pop("kind", None)
            document.pop("apiVersion", None)
        return document
    if how == "null":
        return v.set_at(document, where, None)
    if how == "numbers":
        marker = "__FUZZ_NUMBER__"
        text = json.dumps(v.set_at(document, where, marker))
        number = draw(st.sampled_from(("NaN", "Infinity", "-Infinity", "1e400", "-0",
                                       "1E-400", "99999999999999999999999", "1.0",
                                       "0x10", "01", "+1", ".5", "1.")))
        return text.replace(json.dumps(marker), number, 1)
    if how == "duplicate" and isinstance(document, dict) and document:
        text = json.dumps(document)
        key = draw(st.sampled_from(sorted(document)))
        return text[:-1] + f", {json.dumps(key)}: {json.dumps(document[key])}" + "}"
    return document


@st.composite
def broken_case(draw, op: Operation, seeds: Seeds) -> Case:
    path = draw(path_values(op, odd=draw(v.weighted(20))))
    case = Case(op.method, fill(op, path), draw(query(op, draw(v.weighted(30)), seeds)))
    media = _body_media(op, draw) if _has_body(op) else JSON
    how = draw(st.sampled_from(("broken", "broken", "broken", "not json", "protobuf",
                                "media", "yaml")))
    document = draw(_document(op, seeds, path, media)) if _has_body(op) else {}
    document = _sanitize(op, document)
    if how == "broken":
        broken = _break(draw, document)
        if isinstance(broken, str):
            case.body = broken.encode("utf-8", "surrogatepass")
        else:
            case.body = _encode(draw, broken, media if media != PROTOBUF else JSON)
    elif how == "not json":
        case.body = draw(st.sampled_from(NOT_JSON))
    elif how == "protobuf":
        media = PROTOBUF
        encoded = _encode(draw, document, PROTOBUF)
        case.body = draw(st.one_of(
            st.sampled_from(PROTOBUF_GARBAGE),
            st.just(encoded[:max(4, len(encoded) // 2)]),
            st.binary(max_size=64).map(lambda b: b"k8s\x00" + b),
            st.binary(min_size=1, max_size=64)))
    elif how == "media":
        media = draw(st.sampled_from(ODD_MEDIA))
        case.body = json.dumps(document).encode()
    else:
        media = YAML if op.method != "PATCH" else APPLY_PATCH
        case.body = draw(st.sampled_from((
            b"a: [", b"!!python/object:os.system {}", b"a: &x [*x]", b"- 1\n- 2",
            b"a: b\na: c", b"\t{}", b"---\na: 1\n---\nb: 2", b"? [a]\n: b",
            b"a: !!binary AAAA", b"kind: ConfigMap\napiVersion: v1\nmetadata: {name: [x]}",
            yaml.safe_dump(document).encode())))
    case.headers["Content-Type"] = media
    if media == APPLY_PATCH and not any(n == "fieldManager" for n, _ in case.params):
        case.params.append(("fieldManager", "fuzz"))
    return bound(op, case)


ACCEPTS = (
    "application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "*/*",
    "", "text/html", "application/xml", "application/json;q=0", "application/json;q=abc",
    "application/json;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
    "application/json;as=Table;v=v2;g=meta.k8s.io",
    "application/yaml;as=Table;v=v1;g=meta.k8s.io",
    "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/json;as=Garbage;v=v1;g=meta.k8s.io", "application/json;as=Table",
    "application/json;g=meta.k8s.io;v=v1;as=Table, application/json",
    "application/json;stream=watch", "application/vnd.kubernetes.protobuf;stream=watch",
    "application/json;pretty=1", "application/json;;;", ";", "*/json", "application/*",
    "application/json, text/html;q=2", "a" * 2000, "application/json;as=Table;v=v1;"
    "g=meta.k8s.io;includeObject=Object",
)


@st.composite
def odd_case(draw, op: Operation, seeds: Seeds) -> Case:
    path = draw(path_values(op, odd=draw(v.weighted(40))))
    case = Case(op.method, fill(op, path), draw(query(op, True, seeds)))
    if draw(v.weighted(70)):
        case.headers["Accept"] = draw(st.sampled_from(ACCEPTS))
    if _has_body(op) and draw(v.weighted(80)):
        media = _body_media(op, draw)
        document = _sanitize(op, draw(_document(op, seeds, path, media)))
        case.body = _encode(draw, document, JSON if media == PROTOBUF else media)
        case.headers["Content-Type"] = media if media != PROTOBUF else JSON
    return bound(op, case)
