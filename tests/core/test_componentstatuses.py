"""ComponentStatus probes and Table cells (``kapiserver_plugins.core.componentstatuses``)."""

import http.server
import threading

import pytest

from kapiserver.testing import free_port
from kapiserver_plugins.core.componentstatuses import (component_status, probe_http,
                                                       probe_store, store_components,
                                                       table_cells)


@pytest.fixture
def health_server():
    """A plain HTTP server answering ``/healthz`` with ``ok`` and anything else with 500."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            healthy = self.path == "/healthz"
            body = b"ok" if healthy else b"broken"
            self.send_response(200 if healthy else 500)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_refused_connection_is_reported_as_upstream():
    port = free_port()
    url = f"https://127.0.0.1:{port}/healthz"
    assert probe_http(url, timeout=5) == (
        "False", f'Get "{url}": dial tcp 127.0.0.1:{port}: connect: connection refused', "")


def test_healthy_and_failing_answers(health_server):
    assert probe_http(health_server + "/healthz") == ("True", "ok", "")
    assert probe_http(health_server + "/other") == (
        "False", "HTTP probe failed with statuscode: 500", "")


class Store:
    def __init__(self, error=None):
        self.error = error

    def current_revision(self):
        if self.error:
            raise self.error
        return 7


class SQLiteStore(Store):
    pass


def test_the_store_is_named_after_its_backend_and_probed_by_a_read():
    assert [name for name, _ in store_components(SQLiteStore())] == ["sqlite-0"]
    assert probe_store(Store()) == ("True", "ok", "")
    assert probe_store(Store(OSError("disk I/O error"))) == ("False", "", "disk I/O error")


def test_objects_and_cells():
    healthy = component_status("sqlite-0", ("True", "ok", ""))
    assert healthy == {"metadata": {"name": "sqlite-0", "creationTimestamp": None},
                       "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]}
    assert table_cells(healthy) == ["sqlite-0", "Healthy", "ok", ""]
    broken = component_status("sqlite-0", ("False", "", "disk I/O error"))
    assert table_cells(broken) == ["sqlite-0", "Unhealthy", "", "disk I/O error"]
    assert table_cells({"metadata": {"name": "x"}, "conditions": []}) == ["x", "Unknown", "", ""]
