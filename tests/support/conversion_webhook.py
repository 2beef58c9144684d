"""A real HTTPS conversion webhook on loopback, for CRD version-conversion tests.

It answers ``ConversionReview`` requests with ``convert(obj, desired_api_version)`` applied
to each object, and records the reviews it received (and their paths, in ``paths``); a
test may set ``respond(review, answer) -> answer`` to answer otherwise (a failure, a
wrong uid). Its certificate is signed by its own CA (``ca_bundle`` is that CA, base64,
for ``caBundle``) for ``hosts``; ``connections`` counts the TCP connections accepted.
"""

from __future__ import annotations

import base64
import copy
import http.server
import json
import ssl
import threading

from kapiserver.pki import PKI


def size_to_replicas(obj: dict, desired: str) -> dict:
    """The tests' conversion: v1 ``spec.size`` <-> v2 ``spec.replicas``."""
    obj = copy.deepcopy(obj)
    spec = obj.get("spec") or {}
    if desired.endswith("/v2") and "size" in spec:
        spec["replicas"] = spec.pop("size")
    elif desired.endswith("/v1") and "replicas" in spec:
        spec["size"] = spec.pop("replicas")
    obj["apiVersion"] = desired
    return obj


class ConversionWebhook:
    """Serve ``POST /convert`` over TLS on 127.0.0.1 (see the module docstring)."""

    def __init__(self, directory: str, convert, hosts=("127.0.0.1",)):
        self.pki = PKI(directory)
        self.pki.ensure_serving_cert(list(hosts))
        self.convert = convert
        self.reviews: list[dict] = []
        self.paths: list[str] = []
        self.respond = None
        self.connections = 0
        hook = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                hook.reviews.append(review)
                hook.paths.append(self.path)
                request = review["request"]
                converted = [hook.convert(obj, request["desiredAPIVersion"])
                             for obj in request["objects"]]
                answer = {"apiVersion": review["apiVersion"], "kind": "ConversionReview",
                          "response": {"uid": request["uid"], "convertedObjects": converted,
                                       "result": {"status": "Success"}}}
                if hook.respond is not None:
                    answer = hook.respond(review, answer)
                body = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def setup(self):
                hook.connections += 1
                super().setup()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.pki.serving_cert_file, self.pki.serving_key_file)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.url = f"https://127.0.0.1:{self.port}/convert"
        with open(self.pki.ca_cert_file, "rb") as f:
            self.ca_bundle = base64.b64encode(f.read()).decode()
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
