"""Meta-test: every hook spec is documented and exercised by a test (as datasette does)."""

import inspect
import pathlib

from kapiserver import hookspecs

TESTS = pathlib.Path(__file__).parent
SPECS = [(name, fn) for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
         if name.startswith("kapiserver_")]


def test_there_are_hooks():
    assert {name for name, _ in SPECS} >= {
        "kapiserver_authenticators", "kapiserver_authorizers", "kapiserver_admission_plugins",
        "kapiserver_api_groups", "kapiserver_delegates", "kapiserver_add_options",
        "kapiserver_audit_backends", "kapiserver_controllers"}


def test_every_hook_spec_documents_parameters_return_order_and_timing():
    for name, fn in SPECS:
        doc = inspect.getdoc(fn) or ""
        for param in inspect.signature(fn).parameters:
            assert f":param {param}:" in doc, f"{name} does not document {param}"
        assert ":return:" in doc, f"{name} does not document its return value"
        assert "once" in doc, f"{name} does not say when it is called"
        if name != "kapiserver_add_options":
            assert "Order" in doc, f"{name} does not say what orders its results"
            assert "{}" in doc or "[]" in doc, f"{name} does not say what to return when unused"


def test_every_hook_is_implemented_by_a_test_plugin_and_used_in_a_test():
    probe = (TESTS / "support" / "probe_plugin.py").read_text()
    sources = "\n".join(p.read_text() for p in TESTS.rglob("test_*.py"))
    for name, _ in SPECS:
        assert f"def {name}(" in probe, f"the probe plugin does not implement {name}"
    # Each hook's effect is asserted somewhere: name the component it produced.
    evidence = {
        "kapiserver_add_options": "probe-post-start-delay",
        "kapiserver_authenticators": "X-Probe-User",
        "kapiserver_authorizers": "bob is never allowed",
        "kapiserver_admission_plugins": "ProbeAdmission",
        "kapiserver_api_groups": "probe.kapiserver.test",
        "kapiserver_delegates": "probe-first",
        "kapiserver_audit_backends": "audit_file",
        "kapiserver_controllers": "probe-controller-file",
        "kapiserver_client_ca_files": "probe-client-ca-file",
    }
    for name, _ in SPECS:
        assert name in evidence, f"no test evidence declared for {name}"
        assert evidence[name] in sources, f"no test uses what {name} provides"
