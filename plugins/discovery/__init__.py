"""The ``discovery.k8s.io`` API group: EndpointSlices, and the ``default/kubernetes``
Service's Endpoints and EndpointSlice, written at start."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .endpointslices import ENDPOINT_SLICES, EndpointSliceStrategy
from .kubernetes_endpoints import ensure_kubernetes_endpoints


class DiscoveryV1(APIGroupInstaller):
    """Install ``discovery.k8s.io/v1`` endpointslices backed by the server's storage."""

    group = "discovery.k8s.io"
    delegate = "kube"

    def install(self, server):
        server.add_post_start_hook("bootstrap-controller-endpoints",
                                   ensure_kubernetes_endpoints)
        return APIGroupInfo(self.group, {"v1": builtin_handlers(
            server, EndpointSliceStrategy(ENDPOINT_SLICES))})


@hookimpl
def kapiserver_api_groups(config):
    return [DiscoveryV1()]
