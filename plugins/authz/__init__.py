"""Built-in authorization modes ``AlwaysAllow`` and ``AlwaysDeny`` (``authorizerfactory``)."""

from kapiserver.authorization import Authorizer, Decision
from kapiserver.plugin_manager import hookimpl


class AlwaysAllowAuthorizer(Authorizer):
    """Allow everything (upstream's ``AlwaysAllow`` mode)."""

    name = "AlwaysAllow"

    def authorize(self, attributes):
        return Decision.ALLOW, ""


class AlwaysDenyAuthorizer(Authorizer):
    """Have no opinion on anything, with upstream's reason, so that everything is refused."""

    name = "AlwaysDeny"

    def authorize(self, attributes):
        return Decision.NO_OPINION, "Everything is forbidden."


@hookimpl
def kapiserver_authorizers(config):
    return {
        "AlwaysAllow": lambda server: AlwaysAllowAuthorizer(),
        "AlwaysDeny": lambda server: AlwaysDenyAuthorizer(),
    }
