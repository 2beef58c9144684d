"""Every built-in kind against kube-apiserver 1.32's own answers (``wide/kinds/``).

The captured exchanges are replayed on a real server in the order they were captured
(their resourceVersions tell it): each minimal create must answer what kube-apiserver
answered (every default it filled in, ``managedFields`` included), each Table — read
right after its kind's create, as it was captured — its columns and cells, each later
change (a scale, a strategic merge patch, a binding) its answer, and each invalid object
its 422 word for word. Only what differs between any two servers is set aside: uids,
resourceVersions, times, and the random suffix of generated names.
"""

import json
import pathlib
import re
import time

import pytest

ADMIN = dict(user="admin", groups=["system:masters"])
KINDS = pathlib.Path("/work/shared/reference/wide/kinds")
NAMESPACE = "ref-069ea7"
VOLATILE = "<volatile>"
#: Transcripts kapiserver does not answer alike yet, by file name (strict: one that starts
#: to match must leave this set). The flow-control tables list the bootstrap objects of
#: API Priority and Fairness.
NOT_YET: set[str] = set()
#: Fields whose values are times or identities set by the server, wherever they are.
VOLATILE_KEYS = {("metadata", "uid"), ("metadata", "resourceVersion"),
                 ("metadata", "creationTimestamp"), ("status", "lastPhaseTransitionTime")}
#: Later changes captured after the creates, replayed in their order.
CHANGES = ("deployments-scale-put.json", "deployments-smp-containers.json",
           "pods-binding.json")

pytestmark = pytest.mark.skipif(not KINDS.is_dir(), reason="reference transcripts absent")


def _load(path: pathlib.Path) -> dict:
    return json.loads(path.read_text())


def _revision(path: pathlib.Path) -> int:
    exchange = _load(path)
    body = exchange["response"]["body"]
    if path.name == "pods-binding.json":
        return 228  # the pod's resourceVersion after it (pods-after-binding.json)
    return int(body["metadata"]["resourceVersion"])


def _timeline() -> list[pathlib.Path]:
    """Creates, Tables and later changes in the order they were captured."""
    if not KINDS.is_dir():
        return []
    paths = (list(KINDS.glob("*-create.json")) + list(KINDS.glob("*-table*.json"))
             + [KINDS / name for name in CHANGES])
    # A Table is read after the write whose revision it lists.
    return sorted(paths, key=lambda p: (_revision(p), "-table" in p.name))


def _param(path: pathlib.Path):
    marks = [pytest.mark.xfail(strict=True, reason="not served as upstream yet")] \
        if path.name in NOT_YET else []
    return pytest.param(path, id=path.stem, marks=marks)


_GENERATED = re.compile(r"\b(kube-api-access)-[a-z0-9]{5}\b")
#: A pointer a %#v bad value prints: its address differs on every run.
_POINTER = re.compile(r"\(0x[0-9a-f]+\)")


def scrub(value, path=(), uid=""):
    """``value`` with what differs between servers replaced by ``VOLATILE`` (``uid``, the
    object's own, wherever it is copied: a Job's generated labels and selector)."""
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            here = path + (key,)
            if here[-2:] in VOLATILE_KEYS or (key == "time" and "managedFields" in path):
                out[key] = VOLATILE
            else:
                out[key] = scrub(child, here, uid)
        return out
    if isinstance(value, list):
        return [scrub(item, path + ("*",), uid) for item in value]
    if isinstance(value, str):
        value = value.replace(uid, VOLATILE) if uid else value
        return _POINTER.sub("(" + VOLATILE + ")", _GENERATED.sub(r"\1-" + VOLATILE, value))
    return value


def _uid(body) -> str:
    return ((body.get("metadata") or {}).get("uid") or "") if isinstance(body, dict) else ""


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    # The reference server ran no kube-controller-manager: quotas keep an empty status.
    server = KapiserverProcess(str(tmp_path_factory.mktemp("reference-kinds")),
                               {"controllers": ["*", "-resourcequota"]}, workers=1).start()
    server.request("POST", "/api/v1/namespaces", json={
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}, **ADMIN)
    # The service-account controller makes the namespace's default ServiceAccount, which
    # the pod's create needs (its admission waits a moment for it too).
    deadline = time.monotonic() + 10
    while server.request("GET", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/default",
                         **ADMIN).status_code != 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    server.answers = {}
    for path in _timeline():
        request = _load(path)["request"]
        headers = {"Accept": request["accept"]}
        if request.get("content_type"):
            headers["Content-Type"] = request["content_type"]
        body = request.get("body")
        server.answers[path.name] = server.request(
            request["method"], request["path"], headers=headers,
            data=json.dumps(body) if body is not None else None, **ADMIN)
    yield server
    server.stop()


def _same_answer(response, expected) -> None:
    body = response.json()
    assert (response.status_code, scrub(body, uid=_uid(body))) == \
        (expected["status"], scrub(expected["body"], uid=_uid(expected["body"])))


@pytest.mark.parametrize("path", [_param(p) for p in _timeline()
                                  if "-table" not in p.name])
def test_writes_answer_as_upstream(api, path):
    _same_answer(api.answers[path.name], _load(path)["response"])


@pytest.mark.parametrize("path", [_param(p) for p in sorted(KINDS.glob("*-invalid.json"))])
def test_invalid_object_is_refused_as_upstream(api, path):
    exchange = _load(path)
    request = exchange["request"]
    response = api.request(request["method"], request["path"], json=request["body"], **ADMIN)
    assert (response.status_code, scrub(response.json())) == \
        (exchange["response"]["status"], scrub(exchange["response"]["body"]))


def _age_columns(columns: list[dict]) -> set[int]:
    return {i for i, column in enumerate(columns)
            if column["name"] in ("Age", "Duration", "Last Schedule", "Created At")}


@pytest.mark.parametrize("path", [_param(p) for p in _timeline() if "-table" in p.name])
def test_table_answers_as_upstream(api, path):
    expected = _load(path)["response"]
    response = api.answers[path.name]
    assert response.status_code == expected["status"]
    table, wanted_table = response.json(), expected["body"]
    assert table["columnDefinitions"] == wanted_table["columnDefinitions"]
    volatile = _age_columns(wanted_table["columnDefinitions"])

    def cells(rows):
        return {row["cells"][0]: [VOLATILE if i in volatile else
                                  scrub(cell, uid=_uid(row.get("object") or {}))
                                  for i, cell in enumerate(row["cells"])] for row in rows}

    wanted = cells(wanted_table["rows"])
    assert {name: row for name, row in cells(table["rows"]).items() if name in wanted} == wanted
