"""The delegation chain: each delegate serves a request or hands it to the next.

Upstream chains its servers through ``NotFoundHandler``s (aggregator → kube →
apiextensions → not found). Here a ``Delegate`` returns ``None`` for what it does not
serve. Nothing serving a request ends in upstream's not-found answers: a ``Status`` 404
under ``/api`` and ``/apis``, Go's plain ``404 page not found`` elsewhere.
"""

from __future__ import annotations

import logging

from ..errors import NotFound

log = logging.getLogger(__name__)


class Delegate:
    """One server of the chain. ``serve(ctx)`` returns a response, or ``None`` to pass on."""

    name = ""

    def serve(self, ctx):
        raise NotImplementedError

    def close(self) -> None:
        """Release what the delegate holds; called once when the server stops."""


class DelegationChain:
    """Visit delegates in order; the first one that answers wins."""

    def __init__(self, delegates: list[Delegate]):
        self.delegates = list(delegates)
        log.info("delegation chain: %s → not found", " → ".join(d.name for d in self.delegates))

    def serve(self, ctx):
        for delegate in self.delegates:
            response = delegate.serve(ctx)
            if response is not None:
                return response
        return not_found(ctx)


def not_found(ctx):
    # Imported here: plugins import this module in the gunicorn master, which needs no Flask.
    from ..endpoints.responses import not_found_text, status_response

    path = ctx.request.path
    if path in ("/api", "/apis") or path.startswith(("/api/", "/apis/")):
        return status_response(NotFound.for_path(), ctx.accept)
    return not_found_text()


class InstalledGroupsDelegate(Delegate):
    """A delegate that serves the API groups installed for it, by ``RequestInfo``."""

    def __init__(self, server, groups):
        from .apigroups import ResourceRoutes

        self.server = server
        self.routes = ResourceRoutes(groups)

    def serve(self, ctx):
        if not ctx.info.is_resource_request:
            return None
        handler = self.routes.lookup(ctx.info)
        return None if handler is None else handler.serve(ctx)
