"""Built-in authorization modes ``AlwaysAllow``, ``AlwaysDeny`` (``authorizerfactory``) and
``Webhook``."""

from kapiserver.authorization import Authorizer, Decision
from kapiserver.errors import ConfigError
from kapiserver.options.types import Duration, Path, readable_file
from kapiserver.plugin_manager import hookimpl


class AlwaysAllowAuthorizer(Authorizer):
    """Allow everything (upstream's ``AlwaysAllow`` mode)."""

    name = "AlwaysAllow"

    def authorize(self, attributes):
        return Decision.ALLOW, ""

    def rules_for(self, user, namespace):
        # Upstream's alwaysAllowAuthorizer.RulesFor: everything, complete.
        return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                [{"verbs": ["*"], "nonResourceURLs": ["*"]}], False, "")


class AlwaysDenyAuthorizer(Authorizer):
    """Have no opinion on anything, with upstream's reason, so that everything is refused."""

    name = "AlwaysDeny"

    def authorize(self, attributes):
        return Decision.NO_OPINION, "Everything is forbidden."

    def rules_for(self, user, namespace):
        # Upstream's alwaysDenyAuthorizer.RulesFor: nothing, and that is the whole list.
        return [], [], False, ""


def _webhook(server):
    # Imported in the worker that builds it (requests, the webhook client).
    from .webhook import WebhookAuthorizer

    return WebhookAuthorizer.from_config(server.config)


@hookimpl
def kapiserver_add_options(options):
    options.add("authorization-webhook-config-file",
                Path(load_default="", validate=readable_file),
                "kubeconfig of the remote service the Webhook authorization mode asks "
                "(SubjectAccessReview v1)")
    options.add("authorization-webhook-cache-authorized-ttl", Duration(load_default=300.0),
                "how long the authorization webhook's allowed answers are cached")
    options.add("authorization-webhook-cache-unauthorized-ttl", Duration(load_default=30.0),
                "how long the authorization webhook's other answers are cached")


@hookimpl
def kapiserver_authorizers(config):
    if "Webhook" in config.authorization_mode and not config.authorization_webhook_config_file:
        raise ConfigError("--authorization-webhook-config-file: required when "
                          "--authorization-mode includes Webhook")
    return {
        "AlwaysAllow": lambda server: AlwaysAllowAuthorizer(),
        "AlwaysDeny": lambda server: AlwaysDenyAuthorizer(),
        "Webhook": _webhook,
    }
