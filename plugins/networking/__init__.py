"""The ``networking.k8s.io`` API group: Ingresses (with ``status``), IngressClasses and
NetworkPolicies, and the DefaultIngressClass admission plugin."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .defaultingressclass import DefaultIngressClass
from .ingressclasses import INGRESS_CLASSES, IngressClassStrategy
from .ingresses import INGRESSES, IngressStrategy
from .networkpolicies import NETWORK_POLICIES, NetworkPolicyStrategy


class NetworkingV1(APIGroupInstaller):
    """Install ``networking.k8s.io/v1`` backed by the server's storage."""

    group = "networking.k8s.io"
    delegate = "kube"

    def install(self, server):
        handlers = {}
        for strategy in (IngressStrategy(INGRESSES), IngressClassStrategy(INGRESS_CLASSES),
                         NetworkPolicyStrategy(NETWORK_POLICIES)):
            handlers.update(builtin_handlers(server, strategy))
        return APIGroupInfo(self.group, {"v1": handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [NetworkingV1()]


@hookimpl
def kapiserver_admission_plugins(config):
    return {"DefaultIngressClass": DefaultIngressClass}
