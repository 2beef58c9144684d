"""The core API group (``/api/v1``): configmaps and namespaces, served by the kube delegate.

More core resources (secrets, serviceaccounts, events, services, endpoints) arrive with
the rest of the storage/REST issue.
"""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

from .configmaps import CONFIGMAPS, ConfigMapStrategy
from .lifecycle import NamespaceLifecycle, ensure_system_namespaces
from .namespace_controller import NamespaceController
from .namespaces import (NAMESPACES, NamespaceFinalizeStrategy, NamespaceStatusStrategy,
                         NamespaceStrategy)


class CoreV1(APIGroupInstaller):
    """Install ``v1`` resources backed by the server's storage."""

    group = ""
    delegate = "kube"

    def install(self, server):
        server.add_post_start_hook("start-system-namespaces-controller",
                                   ensure_system_namespaces)
        return APIGroupInfo("", {"v1": {
            "configmaps": server.rest_handler(CONFIGMAPS, ConfigMapStrategy(CONFIGMAPS)),
            "namespaces": server.rest_handler(NAMESPACES, NamespaceStrategy(NAMESPACES)),
            "namespaces/status": server.rest_handler(
                NAMESPACES, NamespaceStatusStrategy(NAMESPACES), "status",
                ("get", "patch", "update")),
            "namespaces/finalize": server.rest_handler(
                NAMESPACES, NamespaceFinalizeStrategy(NAMESPACES), "finalize", ("update",)),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [CoreV1()]


@hookimpl
def kapiserver_admission_plugins(config):
    return {"NamespaceLifecycle": NamespaceLifecycle}


@hookimpl
def kapiserver_controllers(config):
    def namespace_controller(server):
        finalize = server.rest_handler(NAMESPACES, NamespaceFinalizeStrategy(NAMESPACES),
                                       "finalize").store
        return NamespaceController(server, finalize)

    return {"namespace": namespace_controller}
