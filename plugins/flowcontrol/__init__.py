"""The ``flowcontrol.apiserver.k8s.io`` API group: FlowSchemas and
PriorityLevelConfigurations (each with ``status``), and the bootstrap objects made and
kept at start (``bootstrap``). The API Priority and Fairness filter that reads them is the
core's (``kapiserver.flowcontrol``)."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .flowschemas import FLOW_SCHEMAS, FlowSchemaStrategy
from .prioritylevels import PRIORITY_LEVELS, PriorityLevelStrategy


class FlowcontrolV1(APIGroupInstaller):
    """Install ``flowcontrol.apiserver.k8s.io/v1`` backed by the server's storage."""

    group = "flowcontrol.apiserver.k8s.io"
    delegate = "kube"

    def install(self, server):
        from .bootstrap import produce
        from .handlers import FlowSchemaHandler

        server.add_post_start_hook("priority-and-fairness-config-producer", produce)
        handlers = builtin_handlers(server, FlowSchemaStrategy(FLOW_SCHEMAS))
        main = handlers[FLOW_SCHEMAS.resource]
        handlers[FLOW_SCHEMAS.resource] = FlowSchemaHandler(main.store, server, main.verbs)
        handlers.update(builtin_handlers(server, PriorityLevelStrategy(PRIORITY_LEVELS)))
        return APIGroupInfo(self.group, {"v1": handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [FlowcontrolV1()]
