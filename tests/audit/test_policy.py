"""The audit policy: upstream's decoding, validation messages and rule matching."""

import pytest

from kapiserver.audit.policy import Policy, PolicyError
from kapiserver.authentication import UserInfo
from kapiserver.authorization import Attributes

POLICY = b"""
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: RequestResponse
  userGroups: ["auditors"]
- level: Request
  resources:
  - group: ""
    resources: ["secrets", "pods/log"]
    resourceNames: ["s1", "p1"]
  namespaces: ["prod"]
  omitManagedFields: false
- level: Metadata
  resources:
  - group: apps
    resources: ["deployments/*", "*/scale"]
  omitStages: [ResponseComplete]
- level: None
  nonResourceURLs: ["/healthz*", "/version"]
- level: Metadata
"""


def attrs(user="jane", groups=(), verb="get", resource="", subresource="", name="",
          namespace="", group="", path=""):
    return Attributes(user=UserInfo(user, "", tuple(groups)), verb=verb,
                      resource_request=bool(resource), path=path, namespace=namespace,
                      api_group=group, api_version="v1", resource=resource,
                      subresource=subresource, name=name)


@pytest.fixture
def policy():
    return Policy.from_bytes(POLICY)


def test_first_matching_rule_wins(policy):
    assert policy.evaluate(attrs("system:kube-proxy", verb="watch", resource="pods")).level == \
        "None"
    assert policy.evaluate(attrs("system:kube-proxy", verb="list", resource="pods")).level == \
        "Metadata"
    audited = policy.evaluate(attrs(groups=["auditors"], resource="pods"))
    assert audited.level == "RequestResponse"
    assert audited.omit_stages == {"RequestReceived"} and audited.omit_managed_fields


def test_resources_names_namespaces_and_subresources(policy):
    secret = attrs(resource="secrets", name="s1", namespace="prod")
    assert policy.evaluate(secret).level == "Request"
    assert policy.evaluate(secret).omit_managed_fields is False
    assert policy.evaluate(attrs(resource="secrets", name="s2", namespace="prod")).level == \
        "Metadata"
    assert policy.evaluate(attrs(resource="secrets", name="s1", namespace="dev")).level == \
        "Metadata"
    assert policy.evaluate(attrs(resource="pods", subresource="log", name="p1",
                                 namespace="prod")).level == "Request"
    # deployments/* matches every subresource of deployments; */scale any scale.
    status = policy.evaluate(attrs(resource="deployments", subresource="status", group="apps"))
    assert status.level == "Metadata"
    assert status.omit_stages == {"RequestReceived", "ResponseComplete"}
    scale = attrs(resource="replicasets", subresource="scale", group="apps")
    assert policy.evaluate(scale).omit_stages == {"RequestReceived", "ResponseComplete"}
    # As upstream's check reads, "deployments/*" matches deployments themselves too.
    assert policy.evaluate(attrs(resource="deployments", group="apps")).omit_stages == \
        {"RequestReceived", "ResponseComplete"}
    assert policy.evaluate(attrs(resource="statefulsets", group="apps")).omit_stages == \
        {"RequestReceived"}  # the last rule


def test_non_resource_urls(policy):
    assert policy.evaluate(attrs(path="/healthz/etcd")).level == "None"
    assert policy.evaluate(attrs(path="/version")).level == "None"
    assert policy.evaluate(attrs(path="/versions")).level == "Metadata"


def test_no_rule_matching_is_level_none():
    policy = Policy.from_bytes(b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n"
                               b"- level: Metadata\n  users: [bob]\n")
    assert policy.evaluate(attrs("jane")).level == "None"


@pytest.mark.parametrize("document,message", [
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n",
     "loaded illegal policy with 0 rules"),
    (b"apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules: [{level: None}]\n",
     "unknown group version field 'audit.k8s.io/v1beta1' in policy"),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{level: Everything}]\n",
     'rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", '
     '"Request", "RequestResponse"'),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: [{}]\n",
     "rules[0].level: Required value"),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [Done]\n"
     b"rules: [{level: None}]\n",
     'omitStages[0]: Invalid value: "Done": allowed stages are '
     'RequestReceived,ResponseStarted,ResponseComplete,Panic'),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n"
     b"  nonResourceURLs: [healthz, '/a*b']\n",
     "[rules[0].nonResourceURLs[0]: Invalid value: \"healthz\": non-resource URL rules must "
     "begin with a '/' character, rules[0].nonResourceURLs[1]: Invalid value: \"/a*b\": "
     "non-resource URL wildcards '*' must be the final character of the rule]"),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n"
     b"  nonResourceURLs: [/x]\n  namespaces: [a]\n",
     'rules[0].nonResourceURLs: Invalid value: []string{"/x"}: rules cannot apply to both '
     'regular resources and non-resource URLs'),
    (b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n"
     b"  resources: [{resourceNames: [a]}]\n",
     'rules[0].resources.resourceNames: Invalid value: []string{"a"}: using resourceNames '
     'requires at least one resource'),
])
def test_invalid_policies_are_refused_as_upstream_words_it(document, message):
    with pytest.raises(PolicyError) as caught:
        Policy.from_bytes(document)
    assert str(caught.value) == message


def test_unknown_fields_are_decoded_leniently(caplog):
    policy = Policy.from_bytes(b"apiVersion: audit.k8s.io/v1\nkind: Policy\n"
                               b"rules: [{level: Metadata, colour: blue}]\n")
    assert policy.evaluate(attrs()).level == "Metadata"
    assert 'unknown field "rules[0].colour"' in caplog.text


def test_load_names_the_file(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_bytes(b"apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n")
    with pytest.raises(PolicyError, match="from file .*policy.yaml"):
        Policy.load(str(path))
