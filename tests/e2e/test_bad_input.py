"""What the API fuzzer (``tests/fuzz``) found, pinned: bad input is a 4xx ``Status``,
never a 500, a hang or a stream."""

import pytest

from kapiserver.testing import assert_status

ADMIN = dict(user="admin", groups=["system:masters"])


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    from kapiserver.testing import KapiserverProcess

    server = KapiserverProcess(str(tmp_path_factory.mktemp("bad-input")), workers=1).start()
    yield server
    server.stop()


@pytest.mark.parametrize("method", ["PUT", "POST", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/api/v1/watch/configmaps",
                                  "/api/v1/watch/namespaces/default/configmaps",
                                  "/apis/apps/v1/watch/namespaces/default/deployments/x"])
def test_only_get_watches(api, method, path):
    """Watch routes are GET routes: another method is a 405, not a watch that streams
    until its client gives up."""
    response = api.request(method, path, data=b"{}", timeout=10,
                           headers={"Content-Type": "application/merge-patch+json"}, **ADMIN)
    assert_status(response, 405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource")
