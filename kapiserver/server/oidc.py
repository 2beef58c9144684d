"""Service-account issuer discovery: ``/.well-known/openid-configuration`` and the JWKS.

As upstream's ``routes.OpenIDMetadataServer``: compact JSON without a trailing newline,
cacheable for an hour; the JWKS lists every key that verifies service-account tokens.
"""

from __future__ import annotations

import json

from flask import Response

from ..authentication.serviceaccount import JWKS_PATH, ServiceAccountTokens

MAX_AGE = 3600


def serve_issuer_discovery(server, path: str) -> Response:
    tokens = ServiceAccountTokens.for_server(server)
    if path == JWKS_PATH:
        body, content_type = tokens.jwks(), "application/jwk-set+json"
    else:
        body, content_type = tokens.openid_configuration(), "application/json"
    response = Response(json.dumps(body, separators=(",", ":")), 200, content_type=content_type)
    response.headers["Cache-Control"] = f"public, max-age={MAX_AGE}"
    return response
