"""The StaticSite operator end to end: kopf runs it against a real API server."""

import pathlib
import time

import kopf.testing
from kubernetes import client

OPERATOR = pathlib.Path(__file__).parent.parent / "static_sites.py"
SITES = ("example.com", "v1", "staticsites")


def eventually(check, timeout=30.0):
    """``check()``'s first true answer, tried every 0.1s for up to ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not (answer := check()):
        assert time.monotonic() < deadline, f"{check.__name__}: still false after {timeout}s"
        time.sleep(0.1)
    return answer


def test_a_site_owns_its_children_until_deleted(kapiserver_kubeconfig_env, kapiserver_client,
                                                kapiserver_namespace):
    # kapiserver_kubeconfig_env: kopf logs in to the test's server.
    namespace = kapiserver_namespace
    custom = client.CustomObjectsApi(kapiserver_client)
    core, apps = client.CoreV1Api(kapiserver_client), client.AppsV1Api(kapiserver_client)

    def site():
        return custom.get_namespaced_custom_object(*SITES[:2], namespace, SITES[2], "hello")

    def children():
        selector = "example.com/site=hello"
        return (core.list_namespaced_config_map(namespace, label_selector=selector).items
                + apps.list_namespaced_deployment(namespace, label_selector=selector).items
                + core.list_namespaced_service(namespace, label_selector=selector).items)

    args = ["run", "--standalone", "--namespace", namespace, str(OPERATOR)]
    with kopf.testing.KopfRunner(args, timeout=60) as runner:
        custom.create_namespaced_custom_object(*SITES[:2], namespace, SITES[2], {
            "apiVersion": "example.com/v1", "kind": "StaticSite",
            "metadata": {"name": "hello"}, "spec": {"html": "<h1>Hello</h1>"}})

        # The status says what the operator made; each child is owned by the site.
        status = eventually(lambda: site().get("status", {}).get("phase") == "Ready"
                            and site()["status"])
        assert status["children"] == ["ConfigMap/hello-content", "Deployment/hello",
                                      "Service/hello"]
        assert status["replicas"] == 1  # the CRD's default
        uid = site()["metadata"]["uid"]
        made = children()
        assert sorted(f"{type(c).__name__}/{c.metadata.name}" for c in made) == [
            "V1ConfigMap/hello-content", "V1Deployment/hello", "V1Service/hello"]
        for child in made:
            (owner,) = child.metadata.owner_references
            assert (owner.kind, owner.name, owner.uid, owner.controller,
                    owner.block_owner_deletion) == ("StaticSite", "hello", uid, True, True)
        assert core.read_namespaced_config_map("hello-content", namespace).data == {
            "index.html": "<h1>Hello</h1>"}

        # A change of the spec reaches the children.
        custom.patch_namespaced_custom_object(*SITES[:2], namespace, SITES[2], "hello",
                                              {"spec": {"replicas": 3}})
        eventually(lambda: apps.read_namespaced_deployment("hello", namespace).spec.replicas
                   == 3)
        eventually(lambda: site()["status"]["replicas"] == 3)

        # Deleting the site deletes its children: the garbage collector follows the
        # ownerReferences (the operator has no deletion handler).
        custom.delete_namespaced_custom_object(*SITES[:2], namespace, SITES[2], "hello")
        eventually(lambda: not children())

    assert runner.exception is None
    assert runner.exit_code == 0
