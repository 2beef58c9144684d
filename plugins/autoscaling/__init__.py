"""The ``autoscaling`` API group: HorizontalPodAutoscalers, one stored object (its
``autoscaling/v2`` form) served as v2 and as v1."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .horizontalpodautoscalers import (HPAS_V1, HPAS_V2, HorizontalPodAutoscalerStrategy,
                                       HorizontalPodAutoscalerV1Strategy)


class AutoscalingInstaller(APIGroupInstaller):
    """Install ``autoscaling/v2`` (preferred) and ``autoscaling/v1``
    horizontalpodautoscalers with their ``status``, both over the same storage keys."""

    group = "autoscaling"
    delegate = "kube"

    def install(self, server):
        v2 = HorizontalPodAutoscalerStrategy(HPAS_V2)
        v1_handlers = builtin_handlers(server, HorizontalPodAutoscalerV1Strategy(HPAS_V1, v2))
        # Built last, the v2 registry is the one server.registries names: the stored form.
        v2_handlers = builtin_handlers(server, v2)
        return APIGroupInfo(self.group, {"v2": v2_handlers, "v1": v1_handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [AutoscalingInstaller()]
