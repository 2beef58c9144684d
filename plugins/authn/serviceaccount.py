"""The service-account token authenticator (upstream's ``serviceaccount`` authenticator)."""

from __future__ import annotations

from kapiserver import errors
from kapiserver.authentication import AuthenticationError, Authenticator

from .tokenfile import bearer_token


class ServiceAccountAuthenticator(Authenticator):
    """Authenticate ``Authorization: Bearer`` service-account tokens this server issued.

    A bearer token that is not one (not a JWT, another issuer) is refused with upstream's
    ``invalid bearer token``; the union goes on to the other authenticators, so a static or
    webhook token still succeeds after this error.
    """

    name = "serviceaccount"

    def __init__(self, validator=None, make_validator=None):
        self._validator = validator
        self._make_validator = make_validator

    @property
    def validator(self):
        # Built with the first bearer token: reading the keys loads ``cryptography``
        # (about 8 MiB a worker), which a worker serving only certificates never needs.
        if self._validator is None:
            self._validator = self._make_validator()
        return self._validator

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

        def make_validator():
            from kapiserver.authentication.serviceaccount import (ServiceAccountTokens,
                                                                  TokenValidator)

            return TokenValidator(ServiceAccountTokens.for_server(server),
                                  getter("serviceaccounts"), get_secret=getter("secrets"))

        return cls(make_validator=make_validator)

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
