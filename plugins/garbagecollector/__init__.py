"""The garbage collector: kube-controller-manager's ``garbage-collector-controller``, run
inside the server by the elected worker.

``ownerReferences`` and a DELETE's ``propagationPolicy`` mean nothing without it: it
deletes the dependents whose owners are all gone (in the background), lets an owner
deleted in the foreground go once its blocking dependents are gone, and removes the
references to an owner deleted with the ``orphan`` finalizer — over every resource that can
be listed, watched and deleted (built-in, custom, aggregated). ``--controllers=*,-
garbage-collector-controller`` turns it off, for a kube-controller-manager that runs it.
"""

from kapiserver.controllers import aliased
from kapiserver.plugin_manager import hookimpl


def _garbage_collector(server):
    from .collector import GarbageCollector  # nothing of it is loaded by the master

    return GarbageCollector(server)


@hookimpl
def kapiserver_controllers(config):
    # kube-controller-manager's name, and its former one.
    factory = aliased(_garbage_collector, "garbagecollector")
    if getattr(config, "kubeconfig", ""):
        # An extension server (it names its main server): the main server's collector
        # follows its resources, whose owners may live there; upstream's extension
        # servers run none either. --controllers can still ask for it.
        factory.default_enabled = False
    return {"garbage-collector-controller": factory}
