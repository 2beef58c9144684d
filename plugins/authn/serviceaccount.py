"""The service-account token authenticator (upstream's ``serviceaccount`` authenticator)."""

from __future__ import annotations

from kapiserver import errors
from kapiserver.authentication import AuthenticationError, Authenticator
from kapiserver.authentication.serviceaccount import ServiceAccountTokens, TokenValidator

from .tokenfile import bearer_token


class ServiceAccountAuthenticator(Authenticator):
    """Authenticate ``Authorization: Bearer`` service-account tokens this server issued.

    A bearer token that is not one (not a JWT, another issuer) is refused with upstream's
    ``invalid bearer token``; the union goes on to the other authenticators, so a static or
    webhook token still succeeds after this error.
    """

    name = "serviceaccount"

    def __init__(self, validator: TokenValidator):
        self.validator = validator

    @classmethod
    def for_server(cls, server) -> "ServiceAccountAuthenticator":
        def getter(resource):
            def get(namespace, name):
                # Looked up per token: the core group is installed after authenticators.
                registry = server.registries.get(("", resource))
                if registry is None:
                    return None
                try:
                    return registry.get(namespace, name)
                except errors.NotFound:
                    return None
            return get

        return cls(TokenValidator(ServiceAccountTokens.for_server(server),
                                  getter("serviceaccounts"), get_secret=getter("secrets")))

    def authenticate(self, request):
        token = bearer_token(request.headers)
        if token is None:
            return None
        result = self.validator.validate(token, request.audiences)
        if result is None:
            raise AuthenticationError("invalid bearer token")
        user, matched = result
        request.matched_audiences = matched
        return user
