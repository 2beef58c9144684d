"""The framework's ceiling: a bare Flask app answering a fixed object, nothing else."""

import json

from flask import Flask, Response

BODY = json.dumps({"kind": "ConfigMap", "apiVersion": "v1",
                   "metadata": {"name": "fixed", "namespace": "default"},
                   "data": {"a": "b"}}).encode()


def create_app():
    app = Flask("ceiling")

    @app.route("/", defaults={"path": ""}, methods=["GET", "POST", "PUT"])
    @app.route("/<path:path>", methods=["GET", "POST", "PUT"])
    def fixed(path):
        return Response(BODY, 200, content_type="application/json")

    return app
