"""The example admission plugin, ``examples/kapiserver-admission-example``: pip-installed as
a third party installs it, it is listed, configured and run by the server; its own tests
(which use kapiserver's pytest plugin) pass in that environment."""

import json
import os
import pathlib
import subprocess

import pytest

from kapiserver.testing import KapiserverProcess, free_port
from tests.support.thirdparty import virtualenv_with

REPO = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "kapiserver-admission-example"


@pytest.fixture(scope="module")
def python(tmp_path_factory):
    """The Python of a virtualenv where the example is pip-installed (from a copy: a
    build leaves files behind)."""
    import shutil

    source = tmp_path_factory.mktemp("source") / EXAMPLE.name
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns(
        "build", "*.egg-info", "__pycache__"))
    return virtualenv_with(tmp_path_factory.mktemp("venv"), source)


def test_kapiserver_plugins_lists_it(python):
    result = subprocess.run([python, "-m", "kapiserver", "plugins"], capture_output=True,
                            text=True, check=True, timeout=120)
    lines = result.stdout.splitlines()
    row = lines.index(next(l for l in lines if l.startswith("team-ownership ")))
    assert lines[row].split() == ["team-ownership", "kapiserver-admission-example", "0.1.0",
                                  "kapiserver_admission_example"]
    assert lines[row + 1].strip() == "provides: admission plugin TeamOwnership"


def test_a_bad_configuration_stops_the_server_before_it_serves(python, tmp_path):
    config = tmp_path / "admission.yaml"
    config.write_text("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
                      "plugins:\n- name: TeamOwnership\n  configuration:\n"
                      "    teams: [payments, Not_A_Label!]\n    colour: blue\n")
    result = subprocess.run([python, "-m", "kapiserver", "serve", "--data-dir",
                             str(tmp_path / "data"), "--secure-port", str(free_port()),
                             "--admission-control-config-file", str(config)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert result.stderr.splitlines() == [
        "kapiserver: invalid configuration:",
        "  --admission-control-config-file: TeamOwnership: unknown field 'colour'; "
        "teams[1]: 'Not_A_Label!': a valid label must be an empty string or consist of "
        "alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
        "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"]


def test_the_examples_own_tests_pass(python, tmp_path):
    """Its tests use the pytest plugin's fixtures, the server loads the plugin by itself."""
    result = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "--basetemp", str(tmp_path / "basetemp"), str(EXAMPLE / "tests")],
                            capture_output=True, text=True, timeout=600, cwd=EXAMPLE,
                            env={k: v for k, v in os.environ.items()
                                 if not k.startswith("PYTEST_")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("5 passed"), result.stdout


def test_kubectl_users_see_upstreams_admission_errors(python, tmp_path):
    """What the README shows: the plugin's refusals and defaults through kubectl."""
    server = KapiserverProcess(str(tmp_path / "server"),
                               command=[python, "-m", "kapiserver", "serve"])
    server.args = ["--config", server.config_file]
    server.start()
    try:
        assert "admission plugins, in order: " in server.log()
        chain = server.log().split("admission plugins, in order: ")[1].splitlines()[0]
        # After upstream's plugins that precede the policy and webhook plugins.
        assert chain.index("TeamOwnership") < chain.index("MutatingAdmissionWebhook")
        assert chain.index("DefaultIngressClass") < chain.index("TeamOwnership")

        result = server.kubectl("create", "deployment", "web", "--image=nginx")
        assert result.returncode == 1
        assert result.stderr == (
            'error: failed to create deployment: Deployment.apps "web" is invalid: '
            "metadata.labels[team]: Required value: every Deployment names the team that "
            "owns it\n")
        manifest = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
                    "  labels: {team: payments}\nspec:\n  selector:\n    matchLabels: "
                    "{app: web}\n  template:\n    metadata:\n      labels: {app: web}\n"
                    "    spec:\n      containers: [{name: web, image: nginx}]\n")
        result = server.kubectl("apply", "-f", "-", input=manifest)
        assert result.stdout == "deployment.apps/web created\n", result.stderr
        made = json.loads(server.kubectl("get", "deployment", "web", "-o", "json").stdout)
        annotations = made["metadata"]["annotations"]
        assert (annotations["example.com/created-by"],
                annotations["example.com/team-contact"]) == ("admin", "payments@example.com")
        assert made["spec"]["template"]["metadata"]["labels"] == {"app": "web",
                                                                  "team": "payments"}
        result = server.kubectl("label", "deployment", "web", "team=search", "--overwrite",
                                user="alice", groups=["devs"])
        assert result.returncode == 1
        assert result.stderr == (
            'Error from server (Forbidden): deployments.apps "web" is forbidden: only members '
            "of system:masters may move a Deployment to another team (payments to search)\n")
    finally:
        server.stop()


def test_the_readme_shows_the_example_as_it_is():
    readme = (REPO / "README.md").read_text()
    init = (EXAMPLE / "kapiserver_admission_example" / "__init__.py").read_text()
    team = (EXAMPLE / "kapiserver_admission_example" / "team.py").read_text()
    tests = (EXAMPLE / "tests" / "test_team_ownership.py").read_text()
    shown = [init[init.index("@hookimpl"):], team[team.index("class TeamOwnership"):],
             (EXAMPLE / "tests" / "conftest.py").read_text(),
             tests[tests.index("def test_a_deployment_names_its_team"):
                   tests.index("\n\n\ndef test_only_configured_teams")],
             '[project.entry-points.kapiserver]\nteam-ownership = "kapiserver_admission_example"\n']
    for code in shown:
        assert f"\n{code.strip()}\n```" in readme, code[:60]
