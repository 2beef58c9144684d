"""The ``admissionregistration.k8s.io`` API group: mutating and validating webhook
configurations, ValidatingAdmissionPolicies (with ``status``) and their bindings, as
objects (their effect on requests is the admission plugins')."""

from kapiserver.plugin_manager import hookimpl
from kapiserver.server.apigroups import APIGroupInfo, APIGroupInstaller, builtin_handlers

from .authz import BindingParamAuthorization, PolicyParamAuthorization
from .policies import BINDINGS, POLICIES, BindingStrategy, PolicyStrategy
from .webhooks import MUTATING, VALIDATING, WebhookConfigurationStrategy


class AdmissionregistrationV1(APIGroupInstaller):
    """Install ``admissionregistration.k8s.io/v1`` backed by the server's storage."""

    group = "admissionregistration.k8s.io"
    delegate = "kube"

    def install(self, server):
        from .handlers import ParamAuthorizingHandler

        handlers = {}
        for strategy in (WebhookConfigurationStrategy(MUTATING),
                         WebhookConfigurationStrategy(VALIDATING)):
            handlers.update(builtin_handlers(server, strategy))
        for strategy, check in ((PolicyStrategy(POLICIES), PolicyParamAuthorization()),
                                (BindingStrategy(BINDINGS), BindingParamAuthorization())):
            # Writers must be able to read the params they name (upstream's authz.go).
            resource = builtin_handlers(server, strategy)
            main = resource[strategy.spec.resource]
            resource[strategy.spec.resource] = ParamAuthorizingHandler(main.store, server,
                                                                       main.verbs, check)
            handlers.update(resource)
        return APIGroupInfo(self.group, {"v1": handlers})


@hookimpl
def kapiserver_api_groups(config):
    return [AdmissionregistrationV1()]
