import pytest
import yaml


@pytest.fixture(scope="session")
def kapiserver_config(tmp_path_factory):
    # The plugin is pip-installed: the server loads it by itself. Its settings come
    # from the admission configuration file, as upstream's plugins' do.
    path = tmp_path_factory.mktemp("admission") / "admission.yaml"
    path.write_text(yaml.safe_dump({
        "apiVersion": "apiserver.config.k8s.io/v1", "kind": "AdmissionConfiguration",
        "plugins": [{"name": "TeamOwnership", "configuration": {
            "teams": ["payments", "search"], "adminGroups": ["team-admins"],
            "contacts": {"search": "search-oncall@example.org"}}}]}))
    return {"config": {"admission-control-config-file": str(path)}}
