"""The framework's ceiling: a bare Flask app doing the least each kapiserver scenario must.

``/<anything>`` answers a small fixed object (the ``/version`` comparison); ``/object`` a
fixed ~1 KiB ConfigMap, serialised once; ``/list`` a 1,000-item ConfigMapList built once
per worker but serialised on every request, as a server must; ``POST /create`` reads and
parses the body and answers it back with server-filled metadata, serialised per request.
"""

import json
import uuid

from flask import Flask, Response, request

from . import objects

BODY = json.dumps({"kind": "ConfigMap", "apiVersion": "v1",
                   "metadata": {"name": "fixed", "namespace": "default"},
                   "data": {"a": "b"}}).encode()
LIST_ITEMS = 1000


def create_app():
    app = Flask("ceiling")
    one = objects.body(objects.stored_configmap("fixed", "default", 1))
    many = objects.configmap_list(LIST_ITEMS, "bench-list")

    @app.route("/object")
    def fixed_object():
        return Response(one, 200, content_type="application/json")

    @app.route("/list")
    def fixed_list():
        return Response(json.dumps(many, separators=(",", ":")), 200,
                        content_type="application/json")

    @app.route("/create", methods=["POST"])
    def create():
        obj = json.loads(request.get_data())
        obj["metadata"].update({"uid": str(uuid.uuid4()), "resourceVersion": "1",
                                "creationTimestamp": "2024-01-01T00:00:00Z"})
        return Response(json.dumps(obj, separators=(",", ":")), 201,
                        content_type="application/json")

    @app.route("/", defaults={"path": ""}, methods=["GET", "POST", "PUT"])
    @app.route("/<path:path>", methods=["GET", "POST", "PUT"])
    def fixed(path):
        return Response(BODY, 200, content_type="application/json")

    return app
