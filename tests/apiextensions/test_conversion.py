"""Tests of custom-resource conversion: the None strategy, and webhooks answering from a
real TLS server on loopback (``tests/support/conversion_webhook.py``)."""

import copy
import socket

import pytest

from kapiserver_plugins.apiextensions.conversion import ConversionError, converter_for
from tests.support.conversion_webhook import ConversionWebhook, size_to_replicas

GROUP = "conv.example.com"
GVK = f"{GROUP}/v1, Kind=Thing"


def crd(conversion=None) -> dict:
    return {"metadata": {"name": f"things.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": "things", "kind": "Thing"},
                     "versions": [{"name": "v1", "served": True, "storage": True},
                                  {"name": "v2", "served": True, "storage": False}],
                     "conversion": conversion or {"strategy": "None"}}}


def webhook_crd(client_config: dict, review_versions=("v1",)) -> dict:
    return crd({"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": list(review_versions), "clientConfig": client_config}})


def thing(name="a", version="v1", **spec) -> dict:
    return {"apiVersion": f"{GROUP}/{version}", "kind": "Thing",
            "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}",
                         "resourceVersion": "7", "labels": {"tier": "gold"}},
            "spec": spec}


def rename(obj: dict, desired: str) -> dict:
    """v1 spec.size <-> v2 spec.replicas; the webhook also tampers with metadata."""
    obj = size_to_replicas(obj, desired)
    obj["metadata"]["resourceVersion"] = "999"
    obj["metadata"]["labels"] = {"tier": "silver"}
    return obj


@pytest.fixture(scope="module")
def hook(tmp_path_factory):
    webhook = ConversionWebhook(str(tmp_path_factory.mktemp("pki")), rename,
                                hosts=("127.0.0.1", "converter.conv.svc"))
    yield webhook
    webhook.close()


@pytest.fixture(autouse=True)
def plain_answers(hook):
    hook.respond = None
    yield


def no_service(namespace, name, port):
    raise AssertionError("no Service to resolve")


def by_url(hook, tmp_path, **extra):
    config = {"url": hook.url, "caBundle": hook.ca_bundle}
    return converter_for(webhook_crd(config, **extra), no_service, str(tmp_path))


def test_none_strategy_changes_only_the_api_version(tmp_path):
    converter = converter_for(crd(), no_service, str(tmp_path))
    assert not converter.remote
    obj = thing(size=3)
    assert converter.convert([copy.deepcopy(obj)], f"{GROUP}/v2") == [
        dict(obj, apiVersion=f"{GROUP}/v2")]


def test_versions_must_be_the_crds(tmp_path):
    converter = converter_for(crd(), no_service, str(tmp_path))
    with pytest.raises(ConversionError, match=f"^request to convert CR to an invalid "
                                              f"group/version: {GROUP}/v9$"):
        converter.convert([thing()], f"{GROUP}/v9")
    with pytest.raises(ConversionError, match="^request to convert CR from an invalid "
                                              "group/version: other/v1$"):
        converter.convert([dict(thing(), apiVersion="other/v1")], f"{GROUP}/v2")
    with pytest.raises(ConversionError, match="^request to convert CR list failed, list "
                                              "index 1 has invalid group/version: v1$"):
        converter.convert([thing(), dict(thing(), apiVersion="v1")], f"{GROUP}/v2")


def test_unknown_strategy(tmp_path):
    with pytest.raises(ConversionError, match='^unknown conversion strategy "Magic" for CRD '
                                              f'things.{GROUP}$'):
        converter_for(crd({"strategy": "Magic"}), no_service, str(tmp_path))


def test_webhook_converts_and_restores_metadata(hook, tmp_path):
    converter = by_url(hook, tmp_path)
    assert converter.remote
    original = thing(size=3)
    [converted] = converter.convert([copy.deepcopy(original)], f"{GROUP}/v2")
    assert converted["apiVersion"] == f"{GROUP}/v2"
    assert converted["spec"] == {"replicas": 3}
    # Only labels and annotations may change; the rest of metadata is the original's.
    assert converted["metadata"] == dict(original["metadata"], labels={"tier": "silver"})
    review = hook.reviews[-1]
    assert review["apiVersion"] == "apiextensions.k8s.io/v1"
    assert review["kind"] == "ConversionReview"
    assert review["request"]["desiredAPIVersion"] == f"{GROUP}/v2"
    assert review["request"]["objects"] == [original]
    assert hook.paths[-1] == "/convert?timeout=30s"


def test_webhook_keeps_its_connection_and_uses_fresh_uids(hook, tmp_path):
    converter = by_url(hook, tmp_path)
    before = hook.connections
    for name in ("a", "b", "c"):
        converter.convert([thing(name, size=1)], f"{GROUP}/v2")
    assert hook.connections == before + 1
    uids = [review["request"]["uid"] for review in hook.reviews[-3:]]
    assert len(set(uids)) == 3
    converter.close()


def test_webhook_converts_lists_sending_only_what_needs_it(hook, tmp_path):
    converter = by_url(hook, tmp_path)
    objects = [thing("a", size=1), thing("b", "v2", replicas=2), thing("c", size=3)]
    converted = converter.convert(copy.deepcopy(objects), f"{GROUP}/v2")
    assert [(o["metadata"]["name"], o["spec"]) for o in converted] == [
        ("a", {"replicas": 1}), ("b", {"replicas": 2}), ("c", {"replicas": 3})]
    assert [o["metadata"]["name"] for o in hook.reviews[-1]["request"]["objects"]] == ["a", "c"]


def test_nothing_to_convert_calls_nobody(hook, tmp_path):
    converter = by_url(hook, tmp_path)
    count = len(hook.reviews)
    assert converter.convert([thing(version="v2")], f"{GROUP}/v2")[0]["apiVersion"] == \
        f"{GROUP}/v2"
    empty = {"apiVersion": f"{GROUP}/v1", "kind": "Thing"}
    assert converter.convert([empty], f"{GROUP}/v2") == [
        {"apiVersion": f"{GROUP}/v2", "kind": "Thing"}]
    assert len(hook.reviews) == count


def test_review_version_is_the_first_supported_one(hook, tmp_path):
    converter = by_url(hook, tmp_path, review_versions=("v9", "v1beta1", "v1"))
    converter.convert([thing(size=1)], f"{GROUP}/v2")
    assert hook.reviews[-1]["apiVersion"] == "apiextensions.k8s.io/v1beta1"
    converter = by_url(hook, tmp_path, review_versions=("v9",))
    with pytest.raises(ConversionError, match="^no supported conversion review versions$"):
        converter.convert([thing(size=1)], f"{GROUP}/v2")


def test_a_failure_result_fails_with_its_message(hook, tmp_path):
    converter = by_url(hook, tmp_path)
    hook.respond = lambda review, answer: dict(answer, response=dict(
        answer["response"], convertedObjects=[],
        result={"status": "Failure", "message": "size must be even"}))
    with pytest.raises(ConversionError) as raised:
        converter.convert([thing(size=1)], f"{GROUP}/v2")
    assert str(raised.value) == f"conversion webhook for {GVK} failed: size must be even"
    hook.respond = lambda review, answer: dict(answer, response=dict(
        answer["response"], result={"status": "Failure"}))
    with pytest.raises(ConversionError, match="failed: response.result.status was 'Failure', "
                                              "not 'Success'$"):
        converter.convert([thing(size=1)], f"{GROUP}/v2")


def test_a_wrong_uid_or_kind_fails(hook, tmp_path):
    converter = by_url(hook, tmp_path)
    hook.respond = lambda review, answer: dict(answer, response=dict(answer["response"],
                                                                     uid="other"))
    with pytest.raises(ConversionError) as raised:
        converter.convert([thing(size=1)], f"{GROUP}/v2")
    uid = hook.reviews[-1]["request"]["uid"]
    assert str(raised.value) == (f'conversion webhook for {GVK} failed: expected '
                                 f'response.uid="{uid}", got "other"')
    hook.respond = lambda review, answer: dict(answer, apiVersion="apiextensions.k8s.io/v1beta1")
    with pytest.raises(ConversionError, match="failed: expected webhook response of "
                                              "apiextensions.k8s.io/v1, Kind=ConversionReview, "
                                              "got apiextensions.k8s.io/v1beta1, "
                                              "Kind=ConversionReview$"):
        converter.convert([thing(size=1)], f"{GROUP}/v2")
    hook.respond = lambda review, answer: {k: v for k, v in answer.items() if k != "response"}
    with pytest.raises(ConversionError, match="failed: no response provided$"):
        converter.convert([thing(size=1)], f"{GROUP}/v2")


def tamper(change):
    def respond(review, answer):
        for obj in answer["response"]["convertedObjects"]:
            change(obj)
        return answer
    return respond


@pytest.mark.parametrize("change,message", [
    (lambda o: o.update(apiVersion=f"{GROUP}/v1"),
     f"returned invalid object at index 0: invalid groupVersion (expected {GROUP}/v2, "
     f"received {GROUP}/v1)"),
    (lambda o: o.update(kind="Other"),
     "returned invalid object at index 0: invalid kind (expected Thing, received Other)"),
    (lambda o: o["metadata"].update(name="b"),
     "returned invalid object: must have the same name: a != b"),
    (lambda o: o["metadata"].update(uid="x"),
     "returned invalid object: must have the same UID: uid-a != x"),
    # Identity is checked before metadata is restored: no metadata is another name.
    (lambda o: o.pop("metadata"), "returned invalid object: must have the same name: a != "),
    (lambda o: o["metadata"].update(annotations=["x"]),
     "returned invalid metadata: invalid metadata.annotations of type []interface {} in "
     "converted object"),
    (lambda o: o["metadata"].update(labels={"tier": 1}),
     "returned invalid metadata: metadata.labels[tier] must be a string, but is int64 in "
     "converted object"),
    (lambda o: o["metadata"].update(labels={"bad key!": "x"}),
     'returned invalid metadata: metadata.labels: Invalid value: "bad key!": name part must '
     "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
     "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
     "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"),
])
def test_converted_objects_are_checked_as_upstream(hook, tmp_path, change, message):
    converter = by_url(hook, tmp_path)
    hook.respond = tamper(change)
    with pytest.raises(ConversionError) as raised:
        converter.convert([thing(size=1)], f"{GROUP}/v2")
    assert str(raised.value) == f"conversion webhook for {GVK} {message}"


def test_too_few_objects(hook, tmp_path):
    converter = by_url(hook, tmp_path)
    hook.respond = tamper(lambda o: None)
    hook.respond = lambda review, answer: dict(answer, response=dict(
        answer["response"], convertedObjects=[]))
    with pytest.raises(ConversionError, match=f"^conversion webhook for {GVK} returned 0 "
                                              "objects, expected 1$"):
        converter.convert([thing(size=1)], f"{GROUP}/v2")


def test_a_list_reports_the_object_at_fault(hook, tmp_path):
    converter = by_url(hook, tmp_path)
    hook.respond = tamper(lambda o: o["metadata"]["name"] == "b" and o.update(kind="X"))
    with pytest.raises(ConversionError, match="returned invalid converted object at index 2: "
                                              r"invalid kind \(expected Thing, received X\)$"):
        converter.convert([thing("a", size=1), thing("b", size=2)], f"{GROUP}/v2")


def test_an_untrusted_certificate_fails(hook, tmp_path):
    other = ConversionWebhook(str(tmp_path / "other"), rename)
    try:
        config = {"url": hook.url, "caBundle": other.ca_bundle}
        converter = converter_for(webhook_crd(config), no_service, str(tmp_path))
        with pytest.raises(ConversionError) as raised:
            converter.convert([thing(size=1)], f"{GROUP}/v2")
    finally:
        other.close()
    assert str(raised.value) == (
        f'conversion webhook for {GVK} failed: Post "{hook.url}?timeout=30s": tls: failed to '
        "verify certificate: x509: certificate signed by unknown authority")


def test_an_unreachable_webhook_fails(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"https://127.0.0.1:{port}/convert"
    converter = converter_for(webhook_crd({"url": url}), no_service, str(tmp_path))
    with pytest.raises(ConversionError) as raised:
        converter.convert([thing(size=1)], f"{GROUP}/v2")
    assert str(raised.value) == (
        f'conversion webhook for {GVK} failed: Post "{url}?timeout=30s": dial tcp '
        f"127.0.0.1:{port}: connect: connection refused")


def test_a_service_is_dialled_at_its_address_and_verified_by_its_name(hook, tmp_path):
    resolved = []

    def resolve(namespace, name, port):
        resolved.append((namespace, name, port))
        return "127.0.0.1", hook.port

    config = {"service": {"namespace": "conv", "name": "converter", "path": "/convert"},
              "caBundle": hook.ca_bundle}
    converter = converter_for(webhook_crd(config), resolve, str(tmp_path))
    [converted] = converter.convert([thing(size=5)], f"{GROUP}/v2")
    assert converted["spec"] == {"replicas": 5}
    assert resolved == [("conv", "converter", 443)]
    # A name the certificate does not hold fails verification.
    config["service"]["name"] = "elsewhere"
    converter = converter_for(webhook_crd(config), resolve, str(tmp_path))
    with pytest.raises(ConversionError) as raised:
        converter.convert([thing(size=5)], f"{GROUP}/v2")
    assert str(raised.value).startswith(
        f'conversion webhook for {GVK} failed: Post "https://elsewhere.conv.svc:443/convert'
        '?timeout=30s": tls: failed to verify certificate: x509: certificate is valid for ')
    assert str(raised.value).endswith("not elsewhere.conv.svc")


def test_an_unresolvable_service_fails(tmp_path):
    def resolve(namespace, name, port):
        raise LookupError(f'service/{name} in "{namespace}" is not present')

    config = {"service": {"namespace": "conv", "name": "gone", "port": 8443}}
    converter = converter_for(webhook_crd(config), resolve, str(tmp_path))
    with pytest.raises(ConversionError) as raised:
        converter.convert([thing(size=1)], f"{GROUP}/v2")
    assert str(raised.value) == (
        f'conversion webhook for {GVK} failed: Post "https://gone.conv.svc:8443/?timeout=30s": '
        'service/gone in "conv" is not present')


def test_a_ca_bundle_without_certificates_fails_only_conversions(tmp_path):
    config = {"url": "https://127.0.0.1:1/convert", "caBundle": "bm90IGEgY2VydA=="}
    converter = converter_for(webhook_crd(config), no_service, str(tmp_path))
    assert converter.convert([thing(version="v2")], f"{GROUP}/v2")
    with pytest.raises(ConversionError, match="failed: unable to load root certificates: "
                                              "unable to parse bytes as PEM block$"):
        converter.convert([thing()], f"{GROUP}/v2")
