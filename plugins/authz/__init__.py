"""Built-in authorization modes ``AlwaysAllow``, ``AlwaysDeny`` (``authorizerfactory``) and
``Webhook`` (a SubjectAccessReview service, or an extension server's main server)."""

from marshmallow import fields

from kapiserver.authorization import Authorizer, Decision
from kapiserver.errors import ConfigError
from kapiserver.options.types import CommaList, Duration, Path, kubeconfig_file, readable_file
from kapiserver.plugin_manager import hookimpl

from .paths import DEFAULT_ALWAYS_ALLOW_PATHS, validate_paths


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
    from .paths import PathAuthorizer, WithAlwaysAllowPaths
    from .webhook import WebhookAuthorizer

    config = server.config
    webhook = WebhookAuthorizer.from_config(config)
    if config.authorization_kubeconfig and config.authorization_always_allow_paths:
        # Upstream's DelegatingAuthorizationOptions: health checks never ask the main server.
        return WithAlwaysAllowPaths(PathAuthorizer(config.authorization_always_allow_paths),
                                    webhook)
    return webhook


@hookimpl
def kapiserver_add_options(options):
    options.add("authorization-webhook-config-file",
                Path(load_default="", validate=readable_file),
                "kubeconfig of the remote service the Webhook authorization mode asks "
                "(SubjectAccessReview v1)")
    options.add("authorization-webhook-cache-authorized-ttl", Duration(load_default=300.0),
                "how long the authorization webhook's allowed answers are cached; 10s by "
                "default with --authorization-kubeconfig, as upstream's extension servers")
    options.add("authorization-webhook-cache-unauthorized-ttl", Duration(load_default=30.0),
                "how long the authorization webhook's other answers are cached; 10s by "
                "default with --authorization-kubeconfig")
    options.add("authorization-kubeconfig", Path(load_default="", validate=kubeconfig_file),
                "kubeconfig of the main (core) API server, allowed to create "
                "subjectaccessreviews: the Webhook mode asks it (an extension server's "
                "delegated authorization)")
    options.add("authorization-always-allow-paths",
                CommaList(fields.String(), load_default=lambda: list(DEFAULT_ALWAYS_ALLOW_PATHS),
                          validate=validate_paths),
                "HTTP paths allowed without asking the main server (--authorization-kubeconfig); "
                "a trailing * matches a prefix")


@hookimpl
def kapiserver_authorizers(config):
    if config.authorization_kubeconfig and config.authorization_webhook_config_file:
        raise ConfigError("--authorization-kubeconfig: the Webhook mode asks the main server "
                          "it names; --authorization-webhook-config-file names another "
                          "service: set one of them")
    if config.authorization_kubeconfig and "Webhook" not in config.authorization_mode:
        raise ConfigError("--authorization-kubeconfig: used by the Webhook authorization "
                          "mode, which --authorization-mode does not include")
    if "Webhook" in config.authorization_mode and not (
            config.authorization_webhook_config_file or config.authorization_kubeconfig):
        raise ConfigError("--authorization-webhook-config-file: required when "
                          "--authorization-mode includes Webhook (or, for an extension "
                          "server, --authorization-kubeconfig)")
    return {
        "AlwaysAllow": lambda server: AlwaysAllowAuthorizer(),
        "AlwaysDeny": lambda server: AlwaysDenyAuthorizer(),
        "Webhook": _webhook,
    }
