"""The Flask app factory: one catch-all view hands every request to the ``APIServer``.

Flask cannot add URL rules after the first request, and custom resources and
APIServices come and go at run time, so routing below the catch-all is kapiserver's own
(request info, then the delegation chain).
"""

from __future__ import annotations

import logging
import uuid

from flask import Flask, request
from werkzeug.exceptions import HTTPException

from ..errors import ConfigError, StatusError
from ..endpoints.responses import status_response
from ..bootstrap import check_choices
from .apiserver import APIServer

log = logging.getLogger(__name__)

#: Every method a client may send; Flask would answer others with an HTML 405.
METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"]
#: Upstream refuses request bodies over 3 MiB (``--max-request-body-bytes`` default).
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024


def create_app(config, pm) -> Flask:
    """Build the WSGI app for one server: ``app.extensions["kapiserver"]`` is its ``APIServer``."""
    errors = check_choices(pm)(config)
    if errors:
        raise ConfigError(errors)
    server = APIServer(config, pm)
    app = Flask("kapiserver")
    app.url_map.merge_slashes = False
    app.url_map.strict_slashes = False
    app.extensions["kapiserver"] = server

    def serve(path=""):
        return server.handle(request)

    app.add_url_rule("/", "root", serve, methods=METHODS, provide_automatic_options=False)
    app.add_url_rule("/<path:path>", "any", serve, methods=METHODS,
                     provide_automatic_options=False)

    @app.errorhandler(HTTPException)
    def http_exception(err):
        # werkzeug's own refusals (e.g. an unknown method) never reach the filter chain:
        # they still get a Status body, never HTML, and the headers every answer carries.
        error = StatusError(err.description or err.name)
        error.code, error.reason = err.code, err.name.replace(" ", "")
        response = status_response(error, request.headers.get("Accept", ""))
        response.headers["Audit-Id"] = request.headers.get("Audit-ID") or str(uuid.uuid4())
        response.headers["Cache-Control"] = "no-cache, private"
        return response

    server.start()
    return app
