"""The ``node.k8s.io`` API group: RuntimeClasses, and the RuntimeClass admission plugin,
which gives pods their class's overhead and scheduling."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .runtimeclass import RuntimeClass
from .runtimeclasses import RUNTIME_CLASSES, RuntimeClassStrategy


class NodeV1(APIGroupInstaller):
    """Install ``node.k8s.io/v1`` runtimeclasses backed by the server's storage."""

    group = "node.k8s.io"
    delegate = "kube"

    def install(self, server):
        return APIGroupInfo(self.group, {"v1": builtin_handlers(
            server, RuntimeClassStrategy(RUNTIME_CLASSES))})


@hookimpl
def kapiserver_api_groups(config):
    return [NodeV1()]


@hookimpl
def kapiserver_admission_plugins(config):
    return {"RuntimeClass": RuntimeClass}
