"""The ``flowcontrol.apiserver.k8s.io`` API group: FlowSchemas and
PriorityLevelConfigurations (each with ``status``), as objects."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .flowschemas import FLOW_SCHEMAS, FlowSchemaStrategy
from .prioritylevels import PRIORITY_LEVELS, PriorityLevelStrategy


class FlowcontrolV1(APIGroupInstaller):
    """Install ``flowcontrol.apiserver.k8s.io/v1`` backed by the server's storage."""

    group = "flowcontrol.apiserver.k8s.io"
    delegate = "kube"

    def install(self, server):
        from .handlers import FlowSchemaHandler

        handlers = builtin_handlers(server, FlowSchemaStrategy(FLOW_SCHEMAS))
        main = handlers[FLOW_SCHEMAS.resource]
        handlers[FLOW_SCHEMAS.resource] = FlowSchemaHandler(main.store, server, main.verbs)
        handlers.update(builtin_handlers(server, PriorityLevelStrategy(PRIORITY_LEVELS)))
        return APIGroupInfo(self.group, {"v1": handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [FlowcontrolV1()]
