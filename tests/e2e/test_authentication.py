"""Authentication end to end: client certificates, token file, anonymous, a plugin's own."""

import json
import os
import subprocess

from kapiserver.pki import PKI
from kapiserver.testing import assert_status

UNAUTHORIZED = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
ECHO = "/apis/probe.kapiserver.test/v1/namespaces/default/echoes/x"


def test_client_certificate_cn_is_user_and_o_are_groups(server):
    body = server.get(ECHO, user="dana", groups=["devs", "ops"]).json()
    assert body["user"] == {"name": "dana", "uid": "", "groups": ["devs", "ops",
                                                                  "system:authenticated"],
                            "extra": {}}


def test_admin_kubeconfig_user_is_system_masters(server):
    direct = subprocess.run(["kubectl", "--kubeconfig", server.pki.admin_kubeconfig_file,
                             "get", "--raw", ECHO], capture_output=True, text=True, check=True)
    assert json.loads(direct.stdout)["user"] == {
        "name": "admin", "uid": "", "groups": ["system:masters", "system:authenticated"],
        "extra": {}}


def test_static_token_with_kubectl(server):
    result = server.kubectl("get", "--raw", ECHO, user=None, token="alice-token", check=True)
    user = json.loads(result.stdout)["user"]
    assert user == {"name": "alice", "uid": "uid-alice",
                    "groups": ["devs", "qa", "system:authenticated"], "extra": {}}


def test_bad_token_is_401_with_upstream_body_even_with_anonymous_enabled(server):
    response = server.get("/api/v1/namespaces", token="not-a-token")
    assert_status(response, 401, "Unauthorized", "Unauthorized")
    assert response.json() == UNAUTHORIZED
    result = server.kubectl("get", "--raw", "/version", user=None, token="not-a-token")
    assert result.returncode != 0
    assert "Unauthorized" in result.stderr


def test_non_bearer_authorization_header_is_anonymous(server):
    body = server.get(ECHO, headers={"Authorization": "Basic Zm9vOmJhcg=="}).json()
    assert body["user"]["name"] == "system:anonymous"
    assert body["user"]["groups"] == ["system:unauthenticated"]


def test_anonymous_request(server):
    body = server.get(ECHO).json()
    assert body["user"] == {"name": "system:anonymous", "uid": "",
                            "groups": ["system:unauthenticated"], "extra": {}}


def test_anonymous_disabled_is_401(kapiserver_factory):
    server = kapiserver_factory(config={"anonymous-auth": False})
    assert server.get("/version").json() == UNAUTHORIZED
    assert server.get("/version", user="admin", groups=["system:masters"]).status_code == 200


def test_certificate_from_another_ca_is_refused(server, tmp_path):
    stranger = PKI(str(tmp_path / "other"))
    cert_pem, key_pem = stranger.issue_client_cert("mallory", ["system:masters"])
    (tmp_path / "m.crt").write_bytes(cert_pem)
    (tmp_path / "m.key").write_bytes(key_pem)
    import requests

    # The TLS layer verifies client certificates against the client CAs: the handshake
    # fails (upstream answers 401 instead, after the handshake; either way: refused).
    try:
        response = requests.get(server.url + "/version", verify=server.ca_file,
                                cert=(str(tmp_path / "m.crt"), str(tmp_path / "m.key")),
                                timeout=10)
    except requests.exceptions.SSLError:
        refused = True
    except requests.exceptions.ConnectionError:
        refused = True
    else:
        refused = response.status_code == 401
    assert refused
    kubeconfig = server.kubeconfig(user="mallory", groups=["system:masters"])
    # Rewrite that kubeconfig's credentials with the stranger's certificate.
    import base64

    import yaml

    config = yaml.safe_load(open(kubeconfig))
    config["users"][0]["user"]["client-certificate-data"] = base64.b64encode(cert_pem).decode()
    config["users"][0]["user"]["client-key-data"] = base64.b64encode(key_pem).decode()
    forged = tmp_path / "forged.kubeconfig"
    forged.write_text(yaml.safe_dump(config))
    result = subprocess.run(["kubectl", "--kubeconfig", str(forged), "get", "--raw", ECHO],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "system:masters" not in result.stdout


def test_certificate_without_client_auth_usage_is_refused(server):
    import requests

    # The serving certificate: signed by the same CA, but for serverAuth only. The
    # handshake's client-purpose check refuses it (Go's x509 authenticator: 401).
    pki = server.pki
    try:
        response = requests.get(server.url + ECHO, verify=server.ca_file,
                                cert=(pki.serving_cert_file, pki.serving_key_file), timeout=10)
    except requests.exceptions.ConnectionError:
        return
    assert response.status_code == 401, response.text


def test_expired_certificate_is_refused(server, tmp_path):
    import requests

    cert_pem, key_pem = server.pki.issue_client_cert("old", ["system:masters"], days=-1)
    (tmp_path / "o.crt").write_bytes(cert_pem)
    (tmp_path / "o.key").write_bytes(key_pem)
    try:
        response = requests.get(server.url + ECHO, verify=server.ca_file,
                                cert=(str(tmp_path / "o.crt"), str(tmp_path / "o.key")),
                                timeout=10)
    except requests.exceptions.ConnectionError:
        return
    assert response.status_code == 401, response.text


def test_client_ca_file_users_authenticate(kapiserver_factory, tmp_path):
    external = PKI(str(tmp_path / "external"))
    external.ensure_ca()
    server = kapiserver_factory(config={"client-ca-file": external.ca_cert_file})
    cert_pem, key_pem = external.issue_client_cert("erin", ["partners"])
    (tmp_path / "e.crt").write_bytes(cert_pem)
    (tmp_path / "e.key").write_bytes(key_pem)
    import requests

    response = requests.get(server.url + "/version", verify=server.ca_file,
                            cert=(str(tmp_path / "e.crt"), str(tmp_path / "e.key")), timeout=10)
    assert response.status_code == 200
    # admin.kubeconfig keeps working: the data dir's CA is trusted too.
    result = subprocess.run(["kubectl", "--kubeconfig", server.pki.admin_kubeconfig_file, "get",
                             "--raw", "/readyz"], capture_output=True, text=True)
    assert result.stdout == "ok"


def test_a_ca_only_the_handshake_trusts_authenticates_nobody(kapiserver_factory, tmp_path):
    # The probe plugin adds a CA to the handshake (kapiserver_client_ca_files) and trusts it
    # for nothing else: the x509 authenticator verifies again, so a certificate from it is
    # refused with upstream's 401 rather than admitted as its CN (a front proxy's CA).
    import requests

    from tests.conftest import PROBE_PLUGIN

    other = PKI(str(tmp_path / "handshake-only"))
    other.ensure_ca()
    server = kapiserver_factory(plugins=[PROBE_PLUGIN],
                                config={"probe-client-ca-file": other.ca_cert_file})
    cert_pem, key_pem = other.issue_client_cert("mallory", ["system:masters"])
    (tmp_path / "m.crt").write_bytes(cert_pem)
    (tmp_path / "m.key").write_bytes(key_pem)
    response = requests.get(server.url + "/version", verify=server.ca_file,
                            cert=(str(tmp_path / "m.crt"), str(tmp_path / "m.key")), timeout=10)
    assert_status(response, 401, "Unauthorized", "Unauthorized")
    assert server.get(ECHO, user="dana").json()["user"]["name"] == "dana"


def test_plugin_authenticator_is_in_the_union(server):
    body = server.get(ECHO, headers={"X-Probe-User": "prober"}).json()
    assert body["user"]["name"] == "prober"
    assert body["user"]["groups"] == ["probers", "system:authenticated"]


def test_token_wins_over_anonymous_but_certificate_comes_first(server):
    # Upstream order: x509 before the token file.
    cert_file, key_file = server.client_cert("frank")
    import requests

    response = requests.get(server.url + ECHO, cert=(cert_file, key_file), verify=server.ca_file,
                            headers={"Authorization": "Bearer alice-token"}, timeout=10)
    assert response.json()["user"]["name"] == "frank"
    assert os.path.exists(cert_file)
