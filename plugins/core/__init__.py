"""The core API group (``/api/v1``), served by the kube delegate.

configmaps, namespaces, secrets, serviceaccounts (with the ``token`` subresource), events,
endpoints and services; the services' cluster IPs and node ports come from
``--service-cluster-ip-range`` and ``--service-node-port-range``. Pods, nodes, volumes
and claims, replication controllers, pod templates, quotas, limit ranges and component
statuses each have their module, whose ``install(server)`` gives their handlers. At
start, the ``kube-system/extension-apiserver-authentication`` ConfigMap tells extension
servers whom to trust. The ServiceAccount admission plugin gives pods their service
account and its token volume; the ``serviceaccount``, ``serviceaccount-token`` and
``root-ca-cert-publisher`` controllers keep the ``default`` ServiceAccount and the
``kube-root-ca.crt`` ConfigMap in every namespace and fill in legacy token Secrets.
"""

from marshmallow import fields, validate

from kapiserver.controllers import aliased
from kapiserver.options.types import Duration, Path, kubeconfig_file
from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller

from . import (componentstatuses, limitranges, nodes, persistentvolumeclaims, persistentvolumes,
               pods, podtemplates, replicationcontrollers, resourcequotas, services)
from .alwayspullimages import AlwaysPullImages
from .authentication_info import AuthenticationTrustController, publish_authentication_info
from .configmaps import CONFIGMAPS, ConfigMapStrategy
from .defaulttolerationseconds import DEFAULT_SECONDS, DefaultTolerationSeconds
from .denyserviceexternalips import DenyServiceExternalIPs
from .endpoints import ENDPOINTS, EndpointsStrategy
from .eventratelimit import EventRateLimit, check_configuration
from .events import EVENTS, EventStrategy
from .kubernetes_service import ensure_kubernetes_service
from .lifecycle import NamespaceLifecycle, ensure_system_namespaces
from .limitranger import LimitRanger
from .namespace_controller import NamespaceController
from .namespaces import (NAMESPACES, NamespaceFinalizeStrategy, NamespaceStatusStrategy,
                         NamespaceStrategy)
from .nodetaint import TaintNodesByCondition
from .podnodeselector import PodNodeSelector
from .podtolerationrestriction import PodTolerationRestriction
from .quota.admission import ResourceQuotaAdmission
from .quota.controller import ResourceQuotaController
from .secrets import SECRETS, SecretStrategy
from .service_allocation import (DEFAULT_NODE_PORTS, DEFAULT_SERVICE_CIDR,
                                 validate_node_port_range, validate_service_cidr)
from .serviceaccount_admission import ServiceAccountAdmission
from .serviceaccount_controllers import RootCACertPublisher, ServiceAccountsController
from .serviceaccounts import SERVICEACCOUNTS, ServiceAccountStrategy
from .storageobjectinuseprotection import StorageObjectInUseProtection
from .token_controller import TokensController
from .tokenlimits import validate_max_token_expiration
from .volumeprotection import PVCProtectionController, PVProtectionController


def _token_handler(server):
    # Imported here: the web layer (Flask) and cryptography stay out of the gunicorn master.
    from kapiserver.endpoints.virtual import CreateOnlyHandler

    from .tokenrequest import TOKENREQUEST, TokenRequester

    accounts = server.registries[("", "serviceaccounts")]
    return CreateOnlyHandler(TOKENREQUEST, server, TokenRequester(server, accounts))


class CoreV1(APIGroupInstaller):
    """Install ``v1`` resources backed by the server's storage."""

    group = ""
    delegate = "kube"

    def install(self, server):
        server.add_post_start_hook("start-system-namespaces-controller",
                                   ensure_system_namespaces)
        server.add_post_start_hook("bootstrap-controller", ensure_kubernetes_service)
        server.add_post_start_hook("start-cluster-authentication-info-controller",
                                   publish_authentication_info)
        return APIGroupInfo("", {"v1": {
            "configmaps": server.rest_handler(CONFIGMAPS, ConfigMapStrategy(CONFIGMAPS)),
            "namespaces": server.rest_handler(NAMESPACES, NamespaceStrategy(NAMESPACES)),
            "namespaces/status": server.rest_handler(
                NAMESPACES, NamespaceStatusStrategy(NAMESPACES), "status",
                ("get", "patch", "update")),
            "namespaces/finalize": server.rest_handler(
                NAMESPACES, NamespaceFinalizeStrategy(NAMESPACES), "finalize", ("update",)),
            "secrets": server.rest_handler(SECRETS, SecretStrategy(SECRETS)),
            "serviceaccounts": server.rest_handler(SERVICEACCOUNTS,
                                                   ServiceAccountStrategy(SERVICEACCOUNTS)),
            "serviceaccounts/token": _token_handler(server),
            "events": server.rest_handler(EVENTS, EventStrategy(EVENTS,
                                                                ttl=server.config.event_ttl)),
            "endpoints": server.rest_handler(ENDPOINTS, EndpointsStrategy(ENDPOINTS)),
            **services.install(server),
            **_kind_modules(server),
        }})


#: Modules of the core group whose ``install(server)`` gives their resources' handlers.
KIND_MODULES = (pods, nodes, persistentvolumes, persistentvolumeclaims, replicationcontrollers,
                podtemplates, resourcequotas, limitranges, componentstatuses)


def _kind_modules(server) -> dict:
    handlers = {}
    for module in KIND_MODULES:
        handlers.update(module.install(server))
    return handlers


#: Go's int64, the type of kube-apiserver's toleration-seconds flags.
_INT64 = validate.Range(-(1 << 63), (1 << 63) - 1)


@hookimpl
def kapiserver_add_options(options):
    options.add("event-ttl", Duration(load_default=3600.0),
                "how long events are kept after their last write (e.g. 1h, 30m)")
    options.add("service-cluster-ip-range",
                fields.String(load_default=DEFAULT_SERVICE_CIDR, validate=validate_service_cidr),
                "CIDR from which services' cluster IPs are allocated; its first address is "
                "the kubernetes service's")
    options.add("service-account-max-token-expiration",
                Duration(load_default=0.0, validate=validate_max_token_expiration),
                "longest validity of a token TokenRequest issues; longer requests are "
                "shortened to it (0: no limit)")
    options.add("kubeconfig", Path(load_default="", validate=kubeconfig_file),
                "kubeconfig of the main (core) API server, for an extension server: "
                "NamespaceLifecycle checks the namespaces there (its user may get namespaces)")
    options.add("default-not-ready-toleration-seconds",
                fields.Integer(load_default=DEFAULT_SECONDS, strict=False, validate=_INT64),
                "tolerationSeconds of the notReady:NoExecute toleration DefaultTolerationSeconds "
                "adds to every pod that does not already have such a toleration")
    options.add("default-unreachable-toleration-seconds",
                fields.Integer(load_default=DEFAULT_SECONDS, strict=False, validate=_INT64),
                "tolerationSeconds of the unreachable:NoExecute toleration "
                "DefaultTolerationSeconds adds to every pod that does not already have such a "
                "toleration")
    options.add("service-node-port-range",
                fields.String(load_default=DEFAULT_NODE_PORTS, validate=validate_node_port_range),
                "port range (low-high) from which NodePort and LoadBalancer services' node "
                "ports are allocated")


@hookimpl
def kapiserver_api_groups(config):
    return [CoreV1()]


@hookimpl
def kapiserver_admission_plugins(config):
    check_configuration(config)
    return {"AlwaysPullImages": AlwaysPullImages,
            "DefaultTolerationSeconds": DefaultTolerationSeconds,
            "DenyServiceExternalIPs": DenyServiceExternalIPs,
            "EventRateLimit": EventRateLimit,
            "LimitRanger": LimitRanger,
            "PodNodeSelector": PodNodeSelector,
            "PodTolerationRestriction": PodTolerationRestriction,
            "ServiceAccount": ServiceAccountAdmission,
            "StorageObjectInUseProtection": StorageObjectInUseProtection,
            "NamespaceLifecycle": NamespaceLifecycle,
            "ResourceQuota": ResourceQuotaAdmission,
            "TaintNodesByCondition": TaintNodesByCondition}


@hookimpl
def kapiserver_controllers(config):
    def namespace_controller(server):
        finalize = server.rest_handler(NAMESPACES, NamespaceFinalizeStrategy(NAMESPACES),
                                       "finalize").store
        status = server.rest_handler(NAMESPACES, NamespaceStatusStrategy(NAMESPACES),
                                     "status").store
        return NamespaceController(server, finalize, status)

    # kube-controller-manager's names; the names they had here (its former ones) still work.
    return {"namespace-controller": aliased(namespace_controller, "namespace"),
            "persistentvolume-protection-controller": aliased(PVProtectionController,
                                                              "pv-protection"),
            "persistentvolumeclaim-protection-controller": aliased(PVCProtectionController,
                                                                   "pvc-protection"),
            "cluster-authentication-trust": AuthenticationTrustController,
            "serviceaccount-controller": aliased(ServiceAccountsController, "serviceaccount"),
            "serviceaccount-token-controller": aliased(TokensController,
                                                       "serviceaccount-token"),
            "root-ca-certificate-publisher-controller": aliased(RootCACertPublisher,
                                                                "root-ca-cert-publisher"),
            "resourcequota-controller": aliased(ResourceQuotaController, "resourcequota")}
