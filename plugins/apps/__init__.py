"""The ``apps`` API group: Deployments, ReplicaSets, StatefulSets, DaemonSets and
ControllerRevisions, with their ``status`` and ``scale`` subresources.

The controllers that act on them (kube-controller-manager's) are not the API server's:
objects are stored, defaulted, validated and served as kube-apiserver 1.32 does, and
their status is written by whoever runs those controllers.
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .controllerrevisions import CONTROLLERREVISIONS, ControllerRevisionStrategy
from .daemonsets import DAEMONSETS, DaemonSetStrategy
from .deployments import DEPLOYMENTS, DeploymentStrategy
from .replicasets import REPLICASETS, ReplicaSetStrategy
from .statefulsets import STATEFULSETS, StatefulSetStrategy

STRATEGIES = (
    (DEPLOYMENTS, DeploymentStrategy),
    (REPLICASETS, ReplicaSetStrategy),
    (STATEFULSETS, StatefulSetStrategy),
    (DAEMONSETS, DaemonSetStrategy),
    (CONTROLLERREVISIONS, ControllerRevisionStrategy),
)


class AppsV1(APIGroupInstaller):
    """Install ``apps/v1`` backed by the server's storage."""

    group = "apps"
    delegate = "kube"

    def install(self, server):
        handlers = {}
        for spec, strategy in STRATEGIES:
            handlers.update(builtin_handlers(server, strategy(spec)))
        return APIGroupInfo(self.group, {"v1": handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [AppsV1()]
