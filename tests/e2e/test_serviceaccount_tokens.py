"""Service-account tokens end to end: TokenRequest, kubectl create token, authentication."""

import base64
import json
import os
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kapiserver.authentication import jose
from kapiserver.testing import assert_status
from tests.support.reference import transcript as reference

ISSUER = "https://kubernetes.default.svc.cluster.local"
ADMIN = {"user": "admin", "groups": ["system:masters"]}


def claims_of(token):
    return json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))


def create_token(server, name="default", namespace="default", *args):
    result = server.kubectl("create", "token", name, "-n", namespace, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def assert_unauthorized(server, token):
    ref = reference("error-unauthorized.json")
    response = server.get("/api/v1/namespaces", token=token)
    assert response.status_code == 401
    assert response.json() == ref["response"]["body"]


def wait_for_default_account(server, namespace="default"):
    """The service-account controller makes ``default`` soon after start."""
    deadline = time.monotonic() + 10
    while server.get(f"/api/v1/namespaces/{namespace}/serviceaccounts/default",
                     **ADMIN).status_code != 200:
        assert time.monotonic() < deadline, "no default ServiceAccount"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def sa_server(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    process = KapiserverProcess(str(tmp_path_factory.mktemp("sa-server")), {}, workers=2)
    process.start()
    wait_for_default_account(process)
    yield process
    process.stop()


def signing_key(server):
    with open(os.path.join(server.data_dir, "pki", "sa.key"), "rb") as f:
        return serialization.load_pem_private_key(f.read(), password=None)


def test_kubectl_create_token_and_use_it(sa_server):
    token = create_token(sa_server)
    uid = json.loads(sa_server.kubectl("get", "sa", "default", "-n", "default", "-o",
                                       "json").stdout)["metadata"]["uid"]
    claims = claims_of(token)
    assert sorted(claims) == ["aud", "exp", "iat", "iss", "jti", "kubernetes.io", "nbf", "sub"]
    assert claims["aud"] == [ISSUER] and claims["iss"] == ISSUER
    assert claims["exp"] - claims["iat"] == 3600 and claims["nbf"] == claims["iat"]
    assert claims["sub"] == "system:serviceaccount:default:default"
    assert claims["kubernetes.io"] == {"namespace": "default",
                                       "serviceaccount": {"name": "default", "uid": uid}}
    # Both workers verify it (several requests land on both).
    for _ in range(4):
        result = sa_server.kubectl("auth", "whoami", "-o", "json", token=token, user=None)
        assert result.returncode == 0, result.stderr
        info = json.loads(result.stdout)["status"]["userInfo"]
        assert info == {"username": "system:serviceaccount:default:default", "uid": uid,
                        "groups": ["system:serviceaccounts", "system:serviceaccounts:default",
                                   "system:authenticated"],
                        "extra": {"authentication.kubernetes.io/credential-id":
                                  [f"JTI={claims['jti']}"]}}
    result = sa_server.kubectl("--token", token, "get", "ns", user=None)
    assert result.returncode == 0 and "default" in result.stdout


def test_token_request_api(sa_server):
    path = "/api/v1/namespaces/default/serviceaccounts/default/token"
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"audiences": ["vault"], "expirationSeconds": 7200}}
    response = sa_server.request("POST", path, json=body, **ADMIN)
    assert response.status_code == 201, response.text
    answer = response.json()
    assert list(answer) == ["kind", "apiVersion", "metadata", "spec", "status"]
    assert answer["metadata"]["name"] == "default" and answer["metadata"]["namespace"] == "default"
    assert answer["spec"] == {"audiences": ["vault"], "expirationSeconds": 7200,
                              "boundObjectRef": None}
    claims = claims_of(answer["status"]["token"])
    assert claims["aud"] == ["vault"] and claims["exp"] - claims["iat"] == 7200
    assert answer["status"]["expirationTimestamp"].endswith("Z")

    body["spec"]["expirationSeconds"] = 60
    assert_status(sa_server.request("POST", path, json=body, **ADMIN), 422, "Invalid",
                  'TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: '
                  'Invalid value: 60: may not specify a duration less than 10 minutes')
    assert_status(sa_server.request("POST", path.replace("/default/token", "/nope/token"),
                                    json={}, **ADMIN),
                  404, "NotFound", 'serviceaccounts "nope" not found')
    result = sa_server.kubectl("create", "token", "default", "--duration", "1m")
    assert "may not specify a duration less than 10 minutes" in result.stderr


def test_discovery_lists_the_token_subresource(sa_server):
    ref = reference("discovery-api-v1.json")
    expected = [r for r in ref["response"]["body"]["resources"]
                if r["name"] == "serviceaccounts/token"]
    ours = [r for r in sa_server.get("/api/v1", **ADMIN).json()["resources"]
            if r["name"] == "serviceaccounts/token"]
    assert ours == expected
    ref = reference("aggregated-discovery-api.json")
    accept = ref["request"]["accept"]
    items = sa_server.get("/api", headers={"Accept": accept}, **ADMIN).json()["items"]
    ours = [r for r in items[0]["versions"][0]["resources"] if r["resource"] == "serviceaccounts"]
    theirs = [r for r in ref["response"]["body"]["items"][0]["versions"][0]["resources"]
              if r["resource"] == "serviceaccounts"]
    assert ours == theirs


def test_wrong_audience_is_unauthorized(sa_server):
    token = create_token(sa_server, "default", "default", "--audience", "vault")
    assert_unauthorized(sa_server, token)
    # A TokenReview for that audience accepts it and says which audience matched.
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
              "spec": {"token": token, "audiences": ["vault", "other"]}}
    status = sa_server.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                               json=review, **ADMIN).json()["status"]
    assert status["authenticated"] is True and status["audiences"] == ["vault"]
    assert status["user"]["username"] == "system:serviceaccount:default:default"
    # Without audiences the API's own are meant: refused, with the reason in status.error.
    del review["spec"]["audiences"]
    status = sa_server.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews",
                               json=review, **ADMIN).json()["status"]
    assert "authenticated" not in status and "audiences" in status["error"]


def test_forged_and_expired_tokens_are_unauthorized(sa_server):
    token = create_token(sa_server)
    header, payload, signature = token.split(".")
    claims = claims_of(token)
    forged = dict(claims, sub="system:serviceaccount:kube-system:default")
    assert_unauthorized(sa_server, ".".join([header, jose.b64encode(
        json.dumps(forged).encode()), signature]))
    assert_unauthorized(sa_server, jose.sign(claims, ec.generate_private_key(ec.SECP256R1())))
    key = signing_key(sa_server)
    now = int(time.time())
    expired = dict(claims, iat=now - 7200, nbf=now - 7200, exp=now - 120)
    assert_unauthorized(sa_server, jose.sign(expired, key))
    # Within upstream's minute of leeway it still works; a valid re-signed copy works.
    assert sa_server.get("/api/v1/namespaces", token=jose.sign(
        dict(claims, exp=now - 10), key)).status_code == 200
    assert sa_server.get("/api/v1/namespaces", token=token).status_code == 200
    assert_unauthorized(sa_server, "not-a-jwt")


def test_deleted_service_account_invalidates_its_tokens(sa_server):
    sa_server.kubectl("create", "serviceaccount", "robot", "-n", "default", check=True)
    token = create_token(sa_server, "robot")
    assert sa_server.get("/api/v1/namespaces", token=token).status_code == 200
    sa_server.kubectl("delete", "serviceaccount", "robot", "-n", "default", check=True)
    assert_unauthorized(sa_server, token)
    # A new account of the same name has another uid: the old token stays refused.
    sa_server.kubectl("create", "serviceaccount", "robot", "-n", "default", check=True)
    assert_unauthorized(sa_server, token)
    assert sa_server.get("/api/v1/namespaces",
                         token=create_token(sa_server, "robot")).status_code == 200


def test_issuer_discovery(sa_server):
    response = sa_server.get("/.well-known/openid-configuration", **ADMIN)
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "public, max-age=3600"
    assert response.json() == {
        "issuer": ISSUER, "jwks_uri": f"{sa_server.url}/openid/v1/jwks",
        "response_types_supported": ["id_token"], "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["ES256"]}
    response = sa_server.get("/openid/v1/jwks", **ADMIN)
    assert response.headers["Content-Type"] == "application/jwk-set+json"
    (key,) = response.json()["keys"]
    assert list(key) == ["use", "kty", "kid", "crv", "alg", "x", "y"]
    token = create_token(sa_server)
    assert json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))["kid"] == key["kid"]


def test_configured_keys_issuer_and_audiences(kapiserver_factory, tmp_path):
    signer = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    other = ec.generate_private_key(ec.SECP256R1())
    signer_file, other_file = tmp_path / "sa-signer.key", tmp_path / "other.pub"
    signer_file.write_bytes(signer.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    other_file.write_bytes(other.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    server = kapiserver_factory(config={
        "service-account-signing-key-file": str(signer_file),
        "service-account-key-file": [str(other_file)],
        "service-account-issuer": ["https://issuer.example", "https://old.example"],
        "api-audiences": ["api", "kapi"], "service-account-max-token-expiration": "2h"})
    server.kubectl("create", "serviceaccount", "bot", check=True)
    token = create_token(server, "bot")
    assert token.startswith(jose.b64encode(b'{"alg":"RS256"'))
    claims = claims_of(token)
    assert claims["iss"] == "https://issuer.example" and claims["aud"] == ["api", "kapi"]
    assert server.get("/api/v1/namespaces", token=token).status_code == 200
    # Tokens of every issuer and verification key are accepted.
    resigned = jose.sign(dict(claims, iss="https://old.example", aud=["kapi"]), other)
    assert server.get("/api/v1/namespaces", token=resigned).status_code == 200
    assert not os.path.exists(os.path.join(server.data_dir, "pki", "sa.key"))
    keys = server.get("/openid/v1/jwks", user="admin").json()["keys"]
    assert sorted(k["alg"] for k in keys) == ["ES256", "RS256"]
    # Longer than --service-account-max-token-expiration: shortened, with a warning.
    response = server.request("POST", "/api/v1/namespaces/default/serviceaccounts/bot/token",
                              json={"spec": {"expirationSeconds": 36000}}, **ADMIN)
    assert response.json()["spec"]["expirationSeconds"] == 7200
    assert response.headers["Warning"] == ('299 - "requested expiration of 36000 seconds '
                                           'shortened to 7200 seconds"')


def test_token_bound_to_a_secret(sa_server):
    sa_server.kubectl("create", "secret", "generic", "binder", check=True)
    token = create_token(sa_server, "default", "default", "--bound-object-kind", "Secret",
                         "--bound-object-name", "binder")
    secret_uid = json.loads(sa_server.kubectl("get", "secret", "binder", "-o", "json")
                            .stdout)["metadata"]["uid"]
    assert claims_of(token)["kubernetes.io"]["secret"] == {"name": "binder", "uid": secret_uid}
    assert sa_server.get("/api/v1/namespaces", token=token).status_code == 200
    sa_server.kubectl("delete", "secret", "binder", check=True)
    assert_unauthorized(sa_server, token)

    result = sa_server.kubectl("create", "token", "default", "--bound-object-kind", "Pod",
                               "--bound-object-name", "web")
    assert 'pods "web" not found' in result.stderr
    path = "/api/v1/namespaces/default/serviceaccounts/default/token"
    body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {
        "boundObjectRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}}}
    assert_status(sa_server.request("POST", path, json=body, **ADMIN), 400, "BadRequest",
                  "cannot bind token to object of type apps/v1, Kind=Deployment")


def test_issuer_discovery_is_open_to_service_accounts_under_rbac(kapiserver_factory):
    server = kapiserver_factory(config={"authorization-mode": "RBAC"})
    wait_for_default_account(server)
    token = create_token(server)
    # system:service-account-issuer-discovery is bound to system:serviceaccounts.
    for path in ("/.well-known/openid-configuration", "/openid/v1/jwks"):
        assert server.get(path, token=token).status_code == 200
    assert_status(server.get("/api/v1/namespaces", token=token), 403, "Forbidden")
