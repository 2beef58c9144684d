"""``default/kubernetes``: the Service through which workloads reach the API server."""

from kapiserver.testing import KapiserverProcess, assert_status, free_port

ADMIN = dict(user="admin", groups=["system:masters"])
PATH = "/api/v1/namespaces/default/services/kubernetes"


def test_kubernetes_service_exists_at_start_and_follows_the_secure_port(tmp_path):
    server = KapiserverProcess(str(tmp_path / "srv"), workers=2,
                               config={"service-cluster-ip-range": "10.96.0.0/12"}).start()
    try:
        service = server.get(PATH, **ADMIN).json()
        assert service["metadata"]["labels"] == {"component": "apiserver",
                                                 "provider": "kubernetes"}
        spec = service["spec"]
        assert spec["clusterIP"] == "10.96.0.1" and spec["clusterIPs"] == ["10.96.0.1"]
        assert spec["type"] == "ClusterIP" and spec["sessionAffinity"] == "None"
        assert spec["ports"] == [{"name": "https", "protocol": "TCP", "port": 443,
                                  "targetPort": server.port}]
        (entry,) = service["metadata"]["managedFields"]
        assert entry["manager"] == "kube-apiserver" and entry["operation"] == "Update"
        assert set(entry["fieldsV1"]["f:spec"]) >= {"f:clusterIP", "f:ports", "f:type",
                                                    "f:sessionAffinity"}
        table = server.kubectl("get", "service", "kubernetes", "-n", "default", check=True)
        assert table.stdout.split("\n")[1].split()[:5] == [
            "kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
        # Its address is taken: nobody else may ask for it.
        taken = server.request("POST", "/api/v1/namespaces/default/services", json={
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "squatter"},
            "spec": {"clusterIP": "10.96.0.1", "ports": [{"port": 80}]}}, **ADMIN)
        assert_status(taken, 422, "Invalid")
        uid = service["metadata"]["uid"]
    finally:
        assert server.stop() == 0

    moved = KapiserverProcess(str(tmp_path / "srv"), workers=1, port=free_port(),
                              config={"service-cluster-ip-range": "10.96.0.0/12"}).start()
    try:
        service = moved.get(PATH, **ADMIN).json()
        assert service["metadata"]["uid"] == uid
        assert service["spec"]["clusterIP"] == "10.96.0.1"
        assert service["spec"]["ports"][0]["targetPort"] == moved.port
    finally:
        assert moved.stop() == 0
