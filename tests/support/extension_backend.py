"""A tiny extension API server on loopback HTTPS, for aggregator tests.

It serves one group version (``demo.example.com/v1``, resource ``gizmos``): discovery
(legacy and aggregated), a list that reports the identity headers and credentials it
received, and a watch that streams events slowly (to show the proxy does not buffer).
It can be stopped and started again on the same port.
"""

from __future__ import annotations

import base64
import http.server
import json
import ssl
import threading
import time

from kapiserver.pki import PKI

GROUP, VERSION = "demo.example.com", "v1"
RESOURCE = {"name": "gizmos", "singularName": "gizmo", "namespaced": True, "kind": "Gizmo",
            "verbs": ["get", "list", "watch"]}


class ExtensionBackend:
    """Serve ``demo.example.com/v1`` over TLS (see the module docstring)."""

    def __init__(self, directory: str, hosts=("127.0.0.1", "demo-api.default.svc"),
                 client_ca_file: str | None = None):
        self.pki = PKI(directory)
        self.pki.ensure_serving_cert(list(hosts))
        self.client_ca_file = client_ca_file
        self.requests: list[dict] = []
        self.port = 0
        self.httpd = None
        with open(self.pki.ca_cert_file, "rb") as f:
            self.ca_bundle = base64.b64encode(f.read()).decode()
        self.start()

    def _handler(self):
        backend = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                peer = self.connection.getpeercert() if backend.client_ca_file else None
                seen = {"path": self.path,
                        "user": self.headers.get("X-Remote-User"),
                        "groups": self.headers.get_all("X-Remote-Group") or [],
                        "extra": {k: v for k, v in self.headers.items()
                                  if k.lower().startswith("x-remote-extra-")},
                        "authorization": self.headers.get("Authorization"),
                        "client_cn": dict(x[0] for x in peer["subject"]).get("commonName")
                        if peer else None}
                backend.requests.append(seen)
                path = self.path.split("?")[0]
                if path == "/apis":
                    self._json({"kind": "APIGroupDiscoveryList",
                                "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {},
                                "items": [{"metadata": {"name": GROUP}, "versions": [{
                                    "version": VERSION, "freshness": "Current",
                                    "resources": [{
                                        "resource": "gizmos", "singularResource": "gizmo",
                                        "scope": "Namespaced", "verbs": RESOURCE["verbs"],
                                        "responseKind": {"group": "", "version": "",
                                                         "kind": "Gizmo"}}]}]}]},
                               "application/json;g=apidiscovery.k8s.io;v=v2;"
                               "as=APIGroupDiscoveryList")
                elif path == f"/apis/{GROUP}/{VERSION}":
                    self._json({"kind": "APIResourceList", "apiVersion": "v1",
                                "groupVersion": f"{GROUP}/{VERSION}", "resources": [RESOURCE]})
                elif path.endswith("/gizmos") and "watch=true" in self.path:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for index in range(3):
                        line = json.dumps({"type": "ADDED", "object": {
                            "kind": "Gizmo", "apiVersion": f"{GROUP}/{VERSION}",
                            "metadata": {"name": f"g{index}", "resourceVersion": str(index + 1)}
                        }}).encode() + b"\n"
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                        self.wfile.flush()
                        time.sleep(1.0)
                    self.wfile.write(b"0\r\n\r\n")
                elif path.endswith("/gizmos"):
                    self._json({"kind": "GizmoList", "apiVersion": f"{GROUP}/{VERSION}",
                                "metadata": {"resourceVersion": "1"}, "items": [],
                                "seen": seen})
                else:
                    self._json({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                "reason": "NotFound", "code": 404}, code=404)

            def _json(self, obj, content_type="application/json", code=200):
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        return Handler

    def start(self) -> None:
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.httpd.daemon_threads = True
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.pki.serving_cert_file, self.pki.serving_key_file)
        if self.client_ca_file:
            context.load_verify_locations(self.client_ca_file)
            context.verify_mode = ssl.CERT_OPTIONAL
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None
