"""Controllers: background loops that finish what the API promises (namespace deletion …).

Plugins contribute them through ``kapiserver_controllers``; every worker of every host
runs a ``LeaderElector`` on one ``coordination.k8s.io/v1`` Lease, and only the leader runs
the controllers, so exactly one instance of each is active at a time.
"""


class Controller:
    """Base class of controllers: ``sync()`` is called repeatedly while this worker leads.

    It should do one pass of work and return; the manager calls it again after
    ``interval`` seconds (or sooner when ``wake()`` is called). Exceptions are logged and
    the next pass retries.
    """

    name = ""
    interval = 1.0

    def sync(self) -> None:
        raise NotImplementedError
