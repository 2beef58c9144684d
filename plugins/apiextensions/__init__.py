"""The ``apiextensions`` delegate, last before 404 (upstream's apiextensions-apiserver).

It serves ``apiextensions.k8s.io/v1`` CustomResourceDefinitions and, for every
established CRD, its custom resources: each worker follows the CRDs in the store
(``registry.CustomResourceServer``) and routes ``/apis/<group>/<version>/...`` by the
CRD's name; the elected worker runs the naming, establishing and finalizer controllers.
"""

import dataclasses

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller
from kapiserver.server.delegation import InstalledGroupsDelegate

from .crds import CRDS, CRDRegistryStore, CRDStatusStrategy, CRDStrategy

DELEGATE = "apiextensions"


class APIExtensionsDelegate(InstalledGroupsDelegate):
    """Serve the CRD API and custom resources; hand everything else on."""

    name = DELEGATE

    def __init__(self, server, groups):
        from .registry import CustomResourceServer

        super().__init__(server, groups)
        self.custom_resources = CustomResourceServer(server)
        server.add_post_start_hook("crd-informer-synced", self.custom_resources.start)
        server.add_discovery_refresher(self.custom_resources.refresh)

    def serve(self, ctx):
        response = super().serve(ctx)
        if response is not None or not ctx.info.is_resource_request:
            return response
        handler = self.custom_resources.lookup(ctx.info)
        return None if handler is None else handler.serve(ctx)


def custom_resource_server(server):
    """The ``CustomResourceServer`` of ``server``'s apiextensions delegate."""
    for delegate in server.delegation.delegates:
        if isinstance(delegate, APIExtensionsDelegate):
            return delegate.custom_resources
    raise LookupError("the apiextensions delegate is not in the delegation chain")


class APIExtensionsV1(APIGroupInstaller):
    """Install ``apiextensions.k8s.io/v1`` customresourcedefinitions (and ``/status``)."""

    group = CRDS.group
    delegate = DELEGATE

    def install(self, server):
        from .openapi import crd_definitions, crd_unmarshalers

        # Upstream's schemas, read when the group is installed (never at import).
        spec = dataclasses.replace(CRDS, openapi_definitions=crd_definitions(),
                                   openapi_unmarshalers=crd_unmarshalers())
        return APIGroupInfo(self.group, {"v1": {
            "customresourcedefinitions": server.rest_handler(
                spec, CRDStrategy(spec), registry_class=CRDRegistryStore),
            "customresourcedefinitions/status": server.rest_handler(
                spec, CRDStatusStrategy(spec), "status", verbs=("get", "patch", "update")),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [APIExtensionsV1()]


@hookimpl
def kapiserver_delegates(config):
    return {DELEGATE: APIExtensionsDelegate}


@hookimpl
def kapiserver_controllers(config):
    from .controllers import EstablishingController, FinalizerController, NamingController

    def finalizer(server):
        controller = FinalizerController(server, custom_resource_server(server))
        _wake_on_crd_changes(server, controller.name)
        return controller

    def naming(server):
        controller = NamingController(server)
        _wake_on_crd_changes(server, controller.name)
        return controller

    def establishing(server):
        controller = EstablishingController(server)
        _wake_on_crd_changes(server, controller.name)
        return controller

    return {"crd-naming": naming, "crd-establishing": establishing, "crd-finalizer": finalizer}


def _wake_on_crd_changes(server, name: str) -> None:
    # The manager exists once every controller is built: look it up when a CRD changes.
    custom_resource_server(server).listeners.append(
        lambda crd: getattr(server, "controllers", None) and server.controllers.wake(name))
