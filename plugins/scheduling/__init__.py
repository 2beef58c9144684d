"""The ``scheduling.k8s.io`` API group: PriorityClasses, the two system classes every
cluster has from its start, and the Priority admission plugin, which gives pods the
priority of their class."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .priorityclasses import PRIORITY_CLASSES, PriorityClassRegistry, PriorityClassStrategy
from .priorityclasses import ensure_system_priority_classes
from .priority import Priority


class SchedulingV1(APIGroupInstaller):
    """Install ``scheduling.k8s.io/v1`` priorityclasses backed by the server's storage."""

    group = "scheduling.k8s.io"
    delegate = "kube"

    def install(self, server):
        server.add_post_start_hook("scheduling/bootstrap-system-priority-classes",
                                   ensure_system_priority_classes)
        return APIGroupInfo(self.group, {"v1": builtin_handlers(
            server, PriorityClassStrategy(PRIORITY_CLASSES), PriorityClassRegistry)})


@hookimpl
def kapiserver_api_groups(config):
    return [SchedulingV1()]


@hookimpl
def kapiserver_admission_plugins(config):
    return {"Priority": Priority}
