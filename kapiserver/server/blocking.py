"""Running blocking storage calls off the gevent hub.

SQLite (and any blocking client) would stall every greenlet of a worker while it waits on
a lock or the disk; under the gevent worker each storage call runs in gevent's native
thread pool instead. Outside gevent (tests, tools) the store is used as it is.
"""

from __future__ import annotations


#: Reads of one key or one number, served on the hub: a few microseconds on an index,
#: never waiting for a lock (WAL readers do not), cheaper than the hop to a thread.
INLINE = frozenset({"get", "current_revision", "compacted_revision"})


class ThreadpoolStore:
    """A proxy that runs the methods of ``store`` in ``pool`` (a gevent ``ThreadPool``),
    except the short reads named in ``INLINE``."""

    def __init__(self, store, pool):
        self._store = store
        self._pool = pool

    def __getattr__(self, name):
        attribute = getattr(self._store, name)
        if not callable(attribute) or name in INLINE:
            return attribute
        pool = self._pool

        def call(*args, **kwargs):
            # Exceptions cross back as values: gevent's pool would print a traceback for
            # every one raised in a thread (each 404 and 409 of the store).
            ok, value = pool.apply(_capture, (attribute, args, kwargs))
            if ok:
                return value
            raise value

        call.__name__ = name
        setattr(self, name, call)
        return call


def _capture(function, args, kwargs):
    try:
        return True, function(*args, **kwargs)
    except Exception as err:  # handed back to the calling greenlet and raised there
        return False, err


def offload(store):
    """Wrap ``store`` for the gevent worker; return it unchanged outside gevent."""
    try:
        from gevent import get_hub, monkey
    except ImportError:  # pragma: no cover - gevent is a dependency
        return store
    if not monkey.is_module_patched("socket"):
        return store
    return ThreadpoolStore(store, get_hub().threadpool)
