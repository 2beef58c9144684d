"""kapiserver's pytest plugin (the ``pytest11`` entry point) as projects meet it: inert in a
project that does not use it; a session server, its kubeconfig, client and namespaces in
one that does, customised through ``kapiserver_config`` and the fixture factories; and the
kopf operator example of the README, run end to end through it."""

import os
import pathlib
import re
import subprocess
import sys
import textwrap

REPO = pathlib.Path(__file__).resolve().parents[2]
KOPF_EXAMPLE = REPO / "examples" / "kopf-operator"


def run_pytest(project, *args, timeout=600):
    """Run pytest on ``project`` in a fresh interpreter, as that project's CI would (none
    of this suite's conftest, plugins found through their entry points)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.pop("KUBECONFIG", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          cwd=project, capture_output=True, text=True, timeout=timeout,
                          env=env)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))


def test_a_project_that_does_not_use_it_sees_no_difference(tmp_path):
    write(tmp_path / "pytest.ini", "[pytest]\n")
    write(tmp_path / "test_plain.py", """
        import sys


        def test_nothing_of_kapiserver_is_imported_or_started(tmp_path_factory):
            assert not [m for m in sys.modules if m.startswith("kapiserver.")
                        and m != "kapiserver.pytest_plugin"]
            assert "flask" not in sys.modules and "kubernetes" not in sys.modules
            assert not list(tmp_path_factory.getbasetemp().glob("kapiserver*"))
    """)
    with_plugin = run_pytest(tmp_path, "-v", "--basetemp",
                             str(tmp_path / "t1"))
    without = run_pytest(tmp_path, "-v", "-p", "no:kapiserver", "--basetemp",
                         str(tmp_path / "t2"))
    assert with_plugin.returncode == 0, with_plugin.stdout
    assert without.returncode == 0, without.stdout

    def normalised(output):
        # The header's "plugins:" line names kapiserver's distribution, as for any plugin.
        return [re.sub(r" in [\d.]+s", "", line).strip("= ") for line in output.splitlines()
                if not line.startswith(("rootdir:", "plugins:", "platform", "cachedir"))]

    assert normalised(with_plugin.stdout) == normalised(without.stdout)
    # It is there all the same: its fixtures are listed.
    fixtures = run_pytest(tmp_path, "--fixtures").stdout
    for name in ("kapiserver", "kapiserver_kubeconfig", "kapiserver_kubeconfig_env",
                 "kapiserver_client", "kapiserver_namespace", "kapiserver_config"):
        assert re.search(rf"^{name} \[(session|function) scope\]", fixtures, re.M) or \
            re.search(rf"^{name}\b", fixtures, re.M), name


def test_the_kopf_operator_example_runs_end_to_end(tmp_path):
    result = run_pytest(KOPF_EXAMPLE, "-q", "--basetemp", str(tmp_path / "basetemp"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("1 passed"), result.stdout


def test_options_crds_plugins_flags_factories_and_namespaces(tmp_path):
    project = tmp_path / "project"
    write(project / "pytest.ini", "[pytest]\n")
    write(project / "deploy" / "crds" / "widgets.yaml", """
        apiVersion: apiextensions.k8s.io/v1
        kind: CustomResourceDefinition
        metadata: {name: widgets.example.com}
        spec:
          group: example.com
          scope: Namespaced
          names: {plural: widgets, singular: widget, kind: Widget}
          versions:
          - name: v1
            served: true
            storage: true
            schema:
              openAPIV3Schema:
                type: object
                x-kubernetes-preserve-unknown-fields: true
        ---
        apiVersion: v1
        kind: List
        items:
        - apiVersion: apiextensions.k8s.io/v1
          kind: CustomResourceDefinition
          metadata: {name: gadgets.example.com}
          spec:
            group: example.com
            scope: Cluster
            names: {plural: gadgets, singular: gadget, kind: Gadget}
            versions:
            - name: v1
              served: true
              storage: true
              schema:
                openAPIV3Schema:
                  type: object
                  x-kubernetes-preserve-unknown-fields: true
    """)
    write(project / "no_colours.py", '''
        """A plugin module of the project: ConfigMaps may not have a key "colour"."""
        from kapiserver import errors
        from kapiserver.admission import CREATE, AdmissionPlugin
        from kapiserver.plugin_manager import hookimpl


        class NoColours(AdmissionPlugin):
            operations = frozenset({CREATE})

            def validate(self, attributes):
                if attributes.kind == "ConfigMap" and \\
                        "colour" in (attributes.object.get("data") or {}):
                    raise errors.Forbidden("no colours here")


        @hookimpl
        def kapiserver_admission_plugins(config):
            return {"NoColours": lambda server: NoColours()}
    ''')
    write(project / "conftest.py", """
        import pytest

        from kapiserver.pytest_plugin import namespace_fixture, server_fixture


        @pytest.fixture(scope="session")
        def kapiserver_config():
            return {"crds": ["deploy/crds"], "plugins": ["no_colours"],
                    "args": ["--enable-admission-plugins=AlwaysPullImages"]}


        rbac_server = server_fixture(config={"authorization-mode": "RBAC"})
        rbac_namespace = namespace_fixture("rbac_server")
    """)
    write(project / "test_it.py", """
        import pytest
        from kubernetes import client

        SEEN = []


        def test_the_session_server(kapiserver, kapiserver_client, kapiserver_namespace,
                                    kapiserver_kubeconfig):
            SEEN.append((kapiserver.url, kapiserver_namespace))
            assert kapiserver_namespace.startswith("test-the-session-server-")
            custom = client.CustomObjectsApi(kapiserver_client)
            custom.create_namespaced_custom_object(
                "example.com", "v1", kapiserver_namespace, "widgets",
                {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
            custom.create_cluster_custom_object(
                "example.com", "v1", "gadgets",
                {"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}})
            core = client.CoreV1Api(kapiserver_client)
            with pytest.raises(client.ApiException) as refused:
                core.create_namespaced_config_map(kapiserver_namespace, client.V1ConfigMap(
                    metadata=client.V1ObjectMeta(name="c"), data={"colour": "red"}))
            assert refused.value.status == 403
            pod = core.create_namespaced_pod(kapiserver_namespace, client.V1Pod(
                metadata=client.V1ObjectMeta(name="p"),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="x")])))
            assert pod.spec.containers[0].image_pull_policy == "Always"
            result = kapiserver.kubectl("--kubeconfig", kapiserver_kubeconfig, "get", "widgets",
                                        "-n", kapiserver_namespace, "-o", "name")
            assert result.stdout == "widget.example.com/w\\n", result.stderr


        def test_one_server_a_namespace_per_test(kapiserver, kapiserver_client,
                                                 kapiserver_namespace):
            (url, previous), = SEEN
            assert kapiserver.url == url and kapiserver_namespace != previous
            # The previous test's namespace was deleted after it.
            namespace = client.CoreV1Api(kapiserver_client).read_namespace(previous) \\
                if previous else None
            assert namespace.metadata.deletion_timestamp is not None \\
                or namespace.status.phase == "Terminating"


        def test_a_server_of_a_factory(rbac_server, rbac_namespace, kapiserver):
            assert rbac_server.url != kapiserver.url
            alice = client.CoreV1Api(rbac_server.python_client(user="alice", groups=()))
            with pytest.raises(client.ApiException) as refused:
                alice.list_namespaced_config_map(rbac_namespace)
            assert refused.value.status == 403
            admin = client.CoreV1Api(rbac_server.python_client())
            assert admin.read_namespace(rbac_namespace).metadata.name == rbac_namespace
    """)
    result = run_pytest(project, "-q", "--basetemp", str(tmp_path / "basetemp"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].startswith("3 passed"), result.stdout


def test_a_bad_crd_file_is_a_setup_error_naming_it(tmp_path):
    write(tmp_path / "pytest.ini", "[pytest]\n")
    write(tmp_path / "crds.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    write(tmp_path / "conftest.py", """
        import pytest


        @pytest.fixture(scope="session")
        def kapiserver_config():
            return {"crds": ["crds.yaml"]}
    """)
    write(tmp_path / "test_it.py", "def test_it(kapiserver):\n    pass\n")
    result = run_pytest(tmp_path, "-q", "--basetemp", str(tmp_path / "basetemp"))
    assert result.returncode == 1
    assert f"ValueError: kapiserver crds: {tmp_path}/crds.yaml: a ConfigMap, not a " \
        "CustomResourceDefinition" in result.stdout
    assert result.stdout.splitlines()[-1].startswith("1 error")


def test_the_readme_shows_the_kopf_example_as_it_is():
    readme = (REPO / "README.md").read_text()
    operator = (KOPF_EXAMPLE / "static_sites.py").read_text()
    for code in (operator[operator.index("@kopf.on.create"):],
                 (KOPF_EXAMPLE / "tests" / "conftest.py").read_text(),
                 (KOPF_EXAMPLE / "tests" / "test_static_sites.py").read_text()):
        assert f"```python\n{code.strip()}\n```" in readme, code[:60]
