"""The gunicorn master stays lean: certificates are made in a forked child."""

import json
import os
import subprocess
import sys
import time

import pytest

from kapiserver.errors import ConfigError
from kapiserver.server.forked import call_in_child, start_in_child


def test_result_comes_back_from_the_child():
    assert call_in_child(lambda a, b=0: {"pid": os.getpid(), "sum": a + b}, 2, b=3)["sum"] == 5
    assert call_in_child(os.getpid) != os.getpid()


def test_exception_is_raised_in_the_parent():
    def fail():
        raise ConfigError(["--tls-cert-file: nope"])

    with pytest.raises(ConfigError) as err:
        call_in_child(fail)
    assert err.value.errors == ["--tls-cert-file: nope"]


def test_the_parent_goes_on_while_the_child_computes(tmp_path):
    # The child waits for a file only the parent writes after starting it.
    flag = tmp_path / "flag"

    def wait_for_flag():
        for _ in range(500):
            if flag.exists():
                return flag.read_text()
            time.sleep(0.01)
        return "never"

    child = start_in_child(wait_for_flag)
    flag.write_text("written meanwhile")
    assert child.result() == "written meanwhile"


def test_a_child_that_dies_is_an_error():
    with pytest.raises(RuntimeError, match="died"):
        call_in_child(os._exit, 3)


def test_master_imports_no_tls_library_and_no_flask(tmp_path):
    # What the gunicorn master holds is counted again in every worker it forks.
    script = (
        "import json, sys\n"
        "from kapiserver.bootstrap import load_config\n"
        "from kapiserver.server.serving import prepare_tls_in_child\n"
        f"config, pm = load_config(['--data-dir', {str(tmp_path)!r}])\n"
        "tls = prepare_tls_in_child(config)\n"
        "print(json.dumps([tls['kubeconfig'], sorted(m for m in ('cryptography', 'OpenSSL', "
        "'flask') if m in sys.modules)]))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    kubeconfig, loaded = json.loads(result.stdout)
    assert os.path.exists(kubeconfig)
    assert loaded == []
