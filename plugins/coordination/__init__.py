"""The ``coordination.k8s.io`` API group: Leases, which leader elections hold and renew."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

from .leases import LEASES, LeaseStrategy


class CoordinationV1(APIGroupInstaller):
    """Install ``coordination.k8s.io/v1`` leases backed by the server's storage."""

    group = "coordination.k8s.io"
    delegate = "kube"

    def install(self, server):
        return APIGroupInfo(self.group, {"v1": {
            "leases": server.rest_handler(LEASES, LeaseStrategy(LEASES)),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [CoordinationV1()]
