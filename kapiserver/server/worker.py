"""The gunicorn worker class: gevent, so one worker holds thousands of open watches.

Each connection is a greenlet, not a thread: an idle watch costs a few KiB, and
``--worker-connections`` (default 10,000) bounds them per worker. On SIGTERM the worker
stops accepting, tells the ``APIServer`` to end long-running requests, and lets in-flight
requests finish within ``--shutdown-grace-period``.
"""

from __future__ import annotations

import gevent
from gunicorn.workers.ggevent import GeventWorker


class KapiserverWorker(GeventWorker):
    """gunicorn's gevent worker, plus telling the server that shutdown has begun."""

    def _server(self):
        # The app may not be built yet: SIGTERM can arrive while the worker boots.
        app = getattr(self, "wsgi", None)
        return getattr(app, "extensions", {}).get("kapiserver") if app is not None else None

    def handle_exit(self, sig, frame):
        server = self._server()
        if server is not None:
            # Out of the signal handler: setting an Event may need the hub.
            gevent.spawn(server.begin_shutdown)
        super().handle_exit(sig, frame)

    def load_wsgi(self):
        super().load_wsgi()
        server = self._server()
        if not self.alive and server is not None:
            server.begin_shutdown()  # SIGTERM came while the app was being built
