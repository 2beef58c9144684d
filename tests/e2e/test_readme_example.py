"""The README's plugin-testing example, verbatim (test_readme checks it is still there)."""

# --- README example start ---
from kapiserver.testing import assert_status


def test_api_key_plugin(kapiserver_factory, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("k-123 zoe ops\n")
    server = kapiserver_factory(plugins=["tests.support.apikey_plugin"],
                                config={"example-api-keys-file": str(keys)})
    assert server.get("/version", headers={"X-API-Key": "k-123"}).status_code == 200
    assert_status(server.get("/version", headers={"X-API-Key": "nope"}), 401, "Unauthorized")
    assert server.kubectl("get", "--raw", "/readyz").stdout == "ok"
# --- README example end ---


def test_readme_shows_this_example():
    import pathlib

    here = pathlib.Path(__file__)
    source = here.read_text()
    example = source.split("# --- README example start ---\n")[1].split(
        "# --- README example end ---")[0]
    readme = (here.parents[2] / "README.md").read_text()
    assert example.strip() in readme
