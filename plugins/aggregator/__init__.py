"""The ``aggregator`` delegate, first in the chain (upstream's kube-aggregator).

It serves ``apiregistration.k8s.io/v1`` APIServices, orders discovery by their
priorities, and proxies the group versions whose APIService names a Service to that
extension API server, whose discovery and OpenAPI documents it merges into this server's;
the elected worker registers a local APIService for every group version served here and
keeps every APIService's ``Available`` condition current, and the namespace controller
deletes a terminating namespace's objects on the extension servers too; the controllers
inside the server reach them through the same proxies (``remote``).
"""

import dataclasses

from kapiserver.errors import ConfigError
from kapiserver.options.types import Path, pem_certificates, pem_private_key
from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller
from kapiserver.server.delegation import InstalledGroupsDelegate

from .apiservices import (APISERVICES, APIServiceStatusStrategy, APIServiceStrategy,
                          openapi_definitions)

DELEGATE = "aggregator"


class AggregatorDelegate(InstalledGroupsDelegate):
    """Serve APIServices; proxy extension servers' group versions; hand the rest on."""

    name = DELEGATE

    def __init__(self, server, groups):
        from .namespaces import AggregatedContent
        from .registry import APIServiceRegistry
        from .remote import AggregatedAPI

        super().__init__(server, groups)
        self.apiservices = APIServiceRegistry(server)
        server.add_post_start_hook("start-kube-aggregator-informers", self.apiservices.start)
        server.add_discovery_refresher(self.apiservices.refresh)
        server.add_namespace_content(AggregatedContent(self.apiservices))
        server.add_remote_api(AggregatedAPI(self.apiservices))

    def serve(self, ctx):
        response = super().serve(ctx)
        if response is not None:
            return response
        handler = self.apiservices.handler_for(ctx.request.path)
        return None if handler is None else handler.serve(ctx)

    def close(self) -> None:
        for backend in list(self.apiservices.backends.values()):
            backend.close()


def apiservice_registry(server):
    """The ``APIServiceRegistry`` of ``server``'s aggregator delegate."""
    for delegate in server.delegation.delegates:
        if isinstance(delegate, AggregatorDelegate):
            return delegate.apiservices
    raise LookupError("the aggregator delegate is not in the delegation chain")


class APIRegistrationV1(APIGroupInstaller):
    """Install ``apiregistration.k8s.io/v1`` apiservices (and ``/status``)."""

    group = APISERVICES.group
    delegate = DELEGATE

    def install(self, server):
        # Upstream's schemas, read when the group is installed (never at import).
        spec = dataclasses.replace(APISERVICES, openapi_definitions=openapi_definitions())
        return APIGroupInfo(self.group, {"v1": {
            "apiservices": server.rest_handler(spec, APIServiceStrategy(spec)),
            "apiservices/status": server.rest_handler(
                spec, APIServiceStatusStrategy(spec), "status",
                verbs=("get", "patch", "update")),
        }})


@hookimpl
def kapiserver_api_groups(config):
    return [APIRegistrationV1()]


@hookimpl
def kapiserver_add_options(options):
    options.add("proxy-client-cert-file", Path(load_default="", validate=pem_certificates),
                "client certificate the aggregator presents to extension API servers (signed "
                "by their --requestheader-client-ca-file)")
    options.add("proxy-client-key-file", Path(load_default="", validate=pem_private_key),
                "private key of --proxy-client-cert-file")


def check_proxy_client_pair(config) -> list[str]:
    """Both of --proxy-client-cert-file and --proxy-client-key-file, or neither; they match."""
    cert, key = config.proxy_client_cert_file, config.proxy_client_key_file
    if ("proxy-client-cert-file" in config.given and not cert) or (
            "proxy-client-key-file" in config.given and not key):
        return []  # an unreadable file was reported already
    if bool(cert) != bool(key):
        missing, given = (("--proxy-client-key-file", "--proxy-client-cert-file") if cert
                          else ("--proxy-client-cert-file", "--proxy-client-key-file"))
        return [f"{missing}: required when {given} is set"]
    if not cert:
        return []
    import ssl  # the standard library's: no cryptography in the workers

    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_cert_chain(cert, key)
    except ssl.SSLError:
        return [f"--proxy-client-key-file: {key} does not match the certificate in {cert}"]
    return []


@hookimpl
def kapiserver_delegates(config):
    errors = check_proxy_client_pair(config)
    if errors:
        raise ConfigError(errors)
    return {DELEGATE: AggregatorDelegate}


@hookimpl
def kapiserver_controllers(config):
    # The controllers' module is imported by the factories: it needs the proxy, hence
    # Flask, which the gunicorn master (that checks --controllers) never loads.
    def registration(server):
        from .controllers import AutoRegistrationController

        return AutoRegistrationController(server)

    def availability(server):
        from .controllers import AvailabilityController

        controller = AvailabilityController(server, apiservice_registry(server))
        apiservice_registry(server).listeners.append(
            lambda key: getattr(server, "controllers", None)
            and server.controllers.wake(controller.name))
        return controller

    return {"apiservice-registration": registration,
            "apiservice-availability": availability}
