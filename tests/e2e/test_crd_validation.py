"""Invalid CustomResourceDefinitions end to end: the 422 Status a client gets, and what
kubectl and the Python client make of it, as from kube-apiserver v1.32."""

import copy
import json

import pytest
import yaml

from kapiserver.testing import KapiserverProcess, assert_status

ADMIN = dict(user="admin", groups=["system:masters"])
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
GROUP = "valid.example.com"


def manifest(plural: str, kind: str, **spec) -> dict:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{GROUP}"},
            "spec": {"group": GROUP, "scope": "Namespaced",
                     "names": {"plural": plural, "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": {
                                       "type": "object", "properties": {
                                           "spec": {"type": "object", "properties": {
                                               "size": {"type": "integer"}}}}}}}],
                     **spec}}


def untyped(plural: str, kind: str) -> dict:
    """A CRD whose ``spec`` property has no type: not a structural schema."""
    crd = manifest(plural, kind)
    del crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["type"]
    return crd


TYPE_REQUIRED = ("spec.validation.openAPIV3Schema.properties[spec].type: Required value: "
                 "must not be empty for specified object fields")


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    server = KapiserverProcess(str(tmp_path_factory.mktemp("crd-validation"))).start()
    try:
        yield server
    finally:
        server.stop()


def test_post_of_an_invalid_crd_answers_upstreams_status(api):
    body = untyped("things", "Thing")
    body["metadata"]["name"] = "x.y.z"
    response = api.request("POST", CRDS, json=body, **ADMIN)
    status = assert_status(response, 422, "Invalid")
    assert status == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'CustomResourceDefinition.apiextensions.k8s.io "x.y.z" is invalid: '
                   '[metadata.name: Invalid value: "x.y.z": must be '
                   f'spec.names.plural+"."+spec.group, {TYPE_REQUIRED}]',
        "reason": "Invalid",
        "details": {"name": "x.y.z", "group": "apiextensions.k8s.io",
                    "kind": "CustomResourceDefinition", "causes": [
                        {"reason": "FieldValueInvalid",
                         "message": 'Invalid value: "x.y.z": must be '
                                    'spec.names.plural+"."+spec.group',
                         "field": "metadata.name"},
                        {"reason": "FieldValueRequired",
                         "message": "Required value: must not be empty for specified object "
                                    "fields",
                         "field": "spec.validation.openAPIV3Schema.properties[spec].type"}]},
        "code": 422}
    assert list(response.json()) == list(status)
    assert api.get(f"{CRDS}/x.y.z", **ADMIN).status_code == 404


def test_kubectl_apply_prints_upstreams_error(api):
    out = api.kubectl("apply", "-f", "-", input=yaml.safe_dump(untyped("things", "Thing")))
    assert out.returncode == 1
    assert out.stderr == ('The CustomResourceDefinition "things.valid.example.com" is invalid: '
                          f"{TYPE_REQUIRED}\n")
    crd = manifest("things", "Thing", scope="Global")
    crd["spec"]["names"]["shortNames"] = ["Th"]
    out = api.kubectl("create", "-f", "-", input=yaml.safe_dump(crd))
    assert out.returncode == 1
    assert out.stderr == (
        'The CustomResourceDefinition "things.valid.example.com" is invalid: \n'
        '* spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"\n'
        '* spec.names.shortNames[0]: Invalid value: "Th": a DNS-1035 label must consist of '
        "lower case alphanumeric characters or '-', start with an alphabetic character, and "
        "end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')\n")


def test_python_client_sees_the_causes(api):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    crds = client.ApiextensionsV1Api(api.python_client())
    body = manifest("gadgets", "Gadget", conversion={"strategy": "Webhook"})
    with pytest.raises(ApiException) as err:
        crds.create_custom_resource_definition(body)
    assert err.value.status == 422
    causes = json.loads(err.value.body)["details"]["causes"]
    assert causes == [
        {"reason": "FieldValueRequired",
         "message": "Required value: required when strategy is set to Webhook",
         "field": "spec.conversion.webhookClientConfig"},
        {"reason": "FieldValueRequired", "message": "Required value",
         "field": "spec.conversion.conversionReviewVersions"}]


def test_updates_keep_the_name_and_established_scope(api):
    crd = manifest("widgets", "Widget")
    api.kubectl("apply", "-f", "-", input=yaml.safe_dump(crd), check=True)
    api.wait_established(f"widgets.{GROUP}")
    changed = copy.deepcopy(crd)
    changed["spec"]["scope"] = "Cluster"
    changed["spec"]["names"]["plural"] = "gizmos"
    out = api.kubectl("apply", "-f", "-", input=yaml.safe_dump(changed))
    assert out.returncode == 1
    # (kubectl may first warn that it found no OpenAPI schema of the CRD's spec to compute a
    # strategic patch from; the error is what follows)
    assert out.stderr.endswith(
        'The CustomResourceDefinition "widgets.valid.example.com" is invalid: \n'
        '* spec.scope: Invalid value: "Cluster": field is immutable\n'
        '* spec.names.plural: Invalid value: "gizmos": field is immutable\n')
    # a version still in status.storedVersions may not go
    current = api.get(f"{CRDS}/widgets.{GROUP}", **ADMIN).json()
    current["spec"]["versions"][0]["name"] = "v2"
    response = api.request("PUT", f"{CRDS}/widgets.{GROUP}", json=current, **ADMIN)
    assert_status(response, 422, "Invalid",
                  'CustomResourceDefinition.apiextensions.k8s.io "widgets.valid.example.com" '
                  'is invalid: status.storedVersions[0]: Invalid value: "v1": missing from '
                  "spec.versions; v1 was previously a storage version, and must remain in "
                  "spec.versions until a storage migration ensures no data remains persisted "
                  "in v1 and removes v1 from status.storedVersions")


def test_values_of_the_wrong_type_are_a_bad_request(api):
    body = manifest("sprockets", "Sprocket")
    body["spec"]["versions"][0]["served"] = "yes"
    response = api.request("POST", CRDS, json=body, **ADMIN)
    assert_status(response, 400, "BadRequest",
                  'CustomResourceDefinition in version "v1" cannot be handled as a '
                  "CustomResourceDefinition: json: cannot unmarshal string into Go struct field "
                  "CustomResourceDefinitionVersion.spec.versions.served of type bool")
