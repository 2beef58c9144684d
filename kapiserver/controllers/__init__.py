"""Controllers: background loops that finish what the API promises (namespace deletion …).

Plugins contribute them through ``kapiserver_controllers``; every worker of every host
runs a ``LeaderElector`` on one ``coordination.k8s.io/v1`` Lease, and only the leader runs
the controllers, so exactly one instance of each is active at a time. ``--controllers``
chooses which run, as kube-controller-manager's flag does.
"""

from __future__ import annotations

import threading

from ..errors import ConfigError

#: ``--controllers``' default: every controller that is on by default.
ALL = "*"


def aliased(factory, *aliases):
    """``factory`` also known by ``aliases`` in ``--controllers`` (upstream keeps a renamed
    controller's old names working: ``ControllerDescriptor.GetAliases``)."""

    def make(server):
        return factory(server)

    make.aliases = tuple(aliases)
    make.default_enabled = getattr(factory, "default_enabled", True)
    make.__doc__ = getattr(factory, "__doc__", None)
    return make


def select(factories: dict, chosen) -> list[str]:
    """The names of the controllers to run, sorted, from ``--controllers``' items.

    As kube-controller-manager's ``--controllers``: ``*`` enables every controller on by
    default (a factory with ``default_enabled = False`` is not), ``foo`` enables ``foo``,
    ``-foo`` disables it, whatever else the list says; an empty list runs none. A
    controller may be named by one of its ``aliases`` (an old name). Raises
    ``ConfigError`` naming every unknown controller, with the valid choices.
    """
    canonical = {name: name for name in factories}
    for name, factory in factories.items():
        for alias in getattr(factory, "aliases", ()):
            canonical.setdefault(alias, name)
    chosen = [item.strip() for item in chosen if item.strip()]
    unknown = [item for item in chosen if item != ALL and item.lstrip("-") not in canonical]
    if unknown:
        raise ConfigError([f"--controllers: unknown controller(s) {', '.join(unknown)}; "
                           f"valid choices: {ALL}, {', '.join(sorted(factories)) or '(none)'}"])
    enabled = {canonical[item] for item in chosen if item != ALL and not item.startswith("-")}
    disabled = {canonical[item[1:]] for item in chosen if item.startswith("-")}
    if ALL in chosen:
        enabled |= {name for name, factory in factories.items()
                    if getattr(factory, "default_enabled", True)}
    return sorted(enabled - disabled)


def concurrently(fn, items, workers: int = 16) -> list:
    """``[fn(item) for item in items]``, computed by up to ``workers`` threads at a time,
    in order, returning when all are done. In a gevent worker the threads are greenlets:
    what overlaps is their waits on the store (or a backend) — upstream's controllers run
    several workers for as much (the garbage collector 20, the store's deletecollection
    ``--delete-collection-workers``), and writes sent together share the store's fsyncs
    (its group commit). After a failure no new item is started; once the running ones
    are done, the first exception is raised here."""
    items = list(items)
    if len(items) <= 1 or workers <= 1:
        return [fn(item) for item in items]
    results: list = [None] * len(items)
    failures: list[BaseException] = []
    indexes = iter(range(len(items)))
    lock = threading.Lock()

    def work() -> None:
        while not failures:
            with lock:
                index = next(indexes, None)
            if index is None:
                return
            try:
                results[index] = fn(items[index])
            except BaseException as err:  # raised in the caller's thread, below
                failures.append(err)

    threads = [threading.Thread(target=work, name="concurrently", daemon=True)
               for _ in range(min(workers, len(items)))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return results


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
