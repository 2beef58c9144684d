"""matchConstraints / matchResources selection, params collection and the schemas type
checking reads, without a server."""

import pytest

from kapiserver import errors
from kapiserver_plugins.admissionpolicy import params, typechecking
from kapiserver_plugins.admissionpolicy.matching import Criteria


class Attributes:
    def __init__(self, gvr=("", "v1", "configmaps"), kind="ConfigMap", operation="CREATE",
                 namespace="ns", name="cm", subresource="", labels=None):
        self.gvr = gvr
        self.gvk = (gvr[0], gvr[1], kind)
        self.operation, self.namespace, self.name = operation, namespace, name
        self.subresource = subresource
        self.object = {"metadata": {"name": name, "labels": labels or {}}}
        self.old_object = None


def rule(resources, operations=("CREATE",), groups=("",), versions=("v1",), **extra):
    return {"apiGroups": list(groups), "apiVersions": list(versions),
            "operations": list(operations), "resources": list(resources), **extra}


NAMESPACES = {"ns": {"metadata": {"name": "ns", "labels": {"env": "prod"}}}}


def namespaces(name):
    if name not in NAMESPACES:
        raise errors.NotFound.for_object("", "namespaces", name)
    return NAMESPACES[name]


def test_rules_resource_names_and_exclusions():
    criteria = Criteria({"resourceRules": [rule(["configmaps"], resourceNames=["a", "b"])],
                         "excludeResourceRules": [rule(["configmaps"], resourceNames=["b"])],
                         "matchPolicy": "Equivalent"})
    assert criteria.matches(Attributes(name="a"), namespaces) == (
        ("", "v1", "configmaps"), ("", "v1", "ConfigMap"))
    assert criteria.matches(Attributes(name="b"), namespaces) is None  # excluded
    assert criteria.matches(Attributes(name="c"), namespaces) is None  # not named
    assert criteria.matches(Attributes(name="a", operation="DELETE"), namespaces) is None


def test_subresources():
    criteria = Criteria({"resourceRules": [rule(["deployments/scale"], groups=["apps"],
                                                operations=["UPDATE"])]})
    scale = Attributes(gvr=("apps", "v1", "deployments"), kind="Scale", operation="UPDATE",
                       subresource="scale")
    assert criteria.matches(scale, namespaces) is not None
    whole = Attributes(gvr=("apps", "v1", "deployments"), kind="Deployment",
                       operation="UPDATE")
    assert criteria.matches(whole, namespaces) is None


def test_equivalent_versions_only_with_match_policy_equivalent():
    hpa = Attributes(gvr=("autoscaling", "v1", "horizontalpodautoscalers"),
                     kind="HorizontalPodAutoscaler")
    rules = [rule(["horizontalpodautoscalers"], groups=["autoscaling"], versions=["v2"])]
    assert Criteria({"resourceRules": rules, "matchPolicy": "Equivalent"}).matches(
        hpa, namespaces) == (("autoscaling", "v2", "horizontalpodautoscalers"),
                             ("autoscaling", "v2", "HorizontalPodAutoscaler"))
    assert Criteria({"resourceRules": rules, "matchPolicy": "Exact"}).matches(
        hpa, namespaces) is None


def test_selectors():
    by_namespace = Criteria({"namespaceSelector": {"matchLabels": {"env": "prod"}}})
    assert by_namespace.matches(Attributes(), namespaces) is not None
    with pytest.raises(errors.NotFound):
        by_namespace.matches(Attributes(namespace="gone"), namespaces)
    by_object = Criteria({"objectSelector": {"matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["gold"]}]}})
    assert by_object.matches(Attributes(labels={"tier": "gold"}), namespaces) is not None
    assert by_object.matches(Attributes(labels={"tier": "tin"}), namespaces) is None
    # Cluster-scoped objects are never excluded by a namespace selector.
    node = Attributes(gvr=("", "v1", "nodes"), kind="Node", namespace="")
    assert by_namespace.matches(node, namespaces) is not None


class Informer:
    def __init__(self, objects):
        self.objects = objects

    def get(self, namespace, name):
        return self.objects.get((namespace, name))

    def list(self, namespace=None):
        return [o for (ns, _), o in sorted(self.objects.items()) if ns == namespace]


@pytest.fixture
def informer():
    objects = {("ns", "limits"): {"metadata": {"name": "limits", "labels": {"a": "b"}}},
               ("other", "limits"): {"metadata": {"name": "limits"}}}
    fake = Informer(objects)
    return lambda param_kind: fake


def test_params_by_name_namespace_and_selector(informer):
    kind = params.ParamKind("v1", "ConfigMap", "", "configmaps", True)
    found = params.collect(informer, kind, {"name": "limits"}, "ns")
    assert found == [{"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "limits", "labels": {"a": "b"}}}]
    assert params.collect(informer, kind, {"name": "limits", "namespace": "other"},
                          "ns")[0]["metadata"] == {"name": "limits"}
    assert len(params.collect(informer, kind, {"selector": {}}, "ns")) == 1
    assert params.collect(informer, kind, {"name": "nope", "parameterNotFoundAction": "Allow"},
                          "ns") == []
    with pytest.raises(params.ParamError, match="no params found for policy binding with "
                                                "`Deny` parameterNotFoundAction"):
        params.collect(informer, kind, {"name": "nope", "parameterNotFoundAction": "Deny"}, "ns")
    with pytest.raises(params.ParamError, match="cannot use namespaced paramRef in policy "
                                                "binding that matches cluster-scoped"):
        params.collect(informer, kind, {"name": "limits"}, "")
    cluster = params.ParamKind("example.com/v1", "Limit", "example.com", "limits", False)
    with pytest.raises(params.ParamError, match="paramRef.namespace must not be provided"):
        params.collect(informer, cluster, {"name": "x", "namespace": "ns"}, "ns")
    assert params.collect(informer, None, {"name": "x"}, "ns") == [None]
    assert params.kind_text({"apiVersion": "v1", "kind": "ConfigMap"}) == "/v1, Kind=ConfigMap"


def test_structural_schemas_of_builtin_kinds():
    definitions = typechecking._builtin_definitions()
    deployment = typechecking._definition_for(definitions, ("apps", "v1", "Deployment"))
    schema = typechecking.structural(deployment, definitions)
    spec = schema["properties"]["spec"]
    assert spec["properties"]["replicas"]["type"] == "integer"
    # int-or-string and quantities are dyn, as CEL types them
    strategy = spec["properties"]["strategy"]["properties"]["rollingUpdate"]
    assert strategy["properties"]["maxSurge"] == {"x-kubernetes-int-or-string": True}
    assert schema["properties"]["metadata"]["properties"]["labels"]["additionalProperties"] \
        == {"type": "string"}
