"""The ``discovery.k8s.io`` API group: EndpointSlices, and the ``default/kubernetes``
Service's Endpoints and EndpointSlice, kept listing every live instance."""

from marshmallow import ValidationError, fields, validate

from kapiserver.options.types import ip_address
from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .endpointslices import ENDPOINT_SLICES, EndpointSliceStrategy
from .kubernetes_endpoints import RECONCILER_TYPES, _usable, ensure_kubernetes_endpoints


def advertisable(value: str) -> None:
    """An IP the kubernetes Service's endpoints may list: not loopback nor unspecified."""
    ip_address(value)
    import ipaddress

    if not _usable(ipaddress.ip_address(value)):
        raise ValidationError(f"{value!r} cannot be advertised (loopback, link-local, "
                              "multicast or unspecified)")


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
def kapiserver_add_options(options):
    options.add("advertise-address", fields.String(load_default="", validate=advertisable),
                "IP address at which this instance is reached, listed in the kubernetes "
                "Service's endpoints (default: --bind-address, or the default route's "
                "address when that is loopback)")
    options.add("endpoint-reconciler-type",
                fields.String(load_default="lease", validate=validate.OneOf(RECONCILER_TYPES)),
                "how the kubernetes Service's endpoints are kept: lease (every live instance, "
                "through leases in the store), master-count (this instance alone), none")


@hookimpl
def kapiserver_api_groups(config):
    return [DiscoveryV1()]
