"""The ``policy`` API group: PodDisruptionBudgets, which evictions of pods respect."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .poddisruptionbudgets import PDBS, PodDisruptionBudgetStrategy


class PolicyV1(APIGroupInstaller):
    """Install ``policy/v1`` poddisruptionbudgets (and their ``status``). The pods'
    eviction reads them through ``server.registries[("policy", "poddisruptionbudgets")]``."""

    group = "policy"
    delegate = "kube"

    def install(self, server):
        return APIGroupInfo(self.group, {"v1": builtin_handlers(
            server, PodDisruptionBudgetStrategy(PDBS))})


@hookimpl
def kapiserver_api_groups(config):
    return [PolicyV1()]
