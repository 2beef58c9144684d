"""Webhook token authentication (``--authentication-token-webhook-config-file``, or
``--authentication-kubeconfig``: TokenReview on an extension server's main server).

Upstream's ``plugin/pkg/authenticator/token/webhook``: the bearer token is sent in an
``authentication.k8s.io/v1`` TokenReview with the audiences it must be for; the answer
(authenticated or not) is cached for ``--authentication-token-webhook-cache-ttl``,
errors are not. Audiences: the request's (the API's by default) must meet those the
webhook reports, or the API's own when it reports none.
"""

from __future__ import annotations

import hashlib
import logging
import os

from kapiserver.authentication import AuthenticationError, Authenticator, UserInfo
from kapiserver.webhookclient import TTLCache, WebhookClient, WebhookError

from .tokenfile import bearer_token

log = logging.getLogger(__name__)

TOKENREVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"


def api_audiences(config) -> list[str]:
    """``--api-audiences``, by default the first service-account issuer (upstream's)."""
    return list(config.api_audiences or config.service_account_issuer[:1])


class WebhookTokenAuthenticator(Authenticator):
    """Ask a remote TokenReview service about bearer tokens."""

    name = "webhook"

    def __init__(self, client: WebhookClient, ttl: float, implicit_audiences, cache=None):
        self.client = client
        self.ttl = ttl
        self.implicit_audiences = list(implicit_audiences)
        self.cache = cache or TTLCache()

    @classmethod
    def from_config(cls, config) -> "WebhookTokenAuthenticator":
        """The token webhook of ``--authentication-token-webhook-config-file``, or an
        extension server's TokenReview on its main server (``--authentication-kubeconfig``).

        The main server is asked as upstream's delegating authenticator asks it: with no
        audiences unless ``--api-audiences`` is given, so that it checks its own.
        """
        from . import token_webhook_cache_ttl

        material = os.path.join(config.data_dir, "webhooks")
        if config.authentication_kubeconfig:
            client = WebhookClient.from_kubeconfig(
                config.authentication_kubeconfig, material, "authentication-kubeconfig"
            ).for_path(TOKENREVIEWS)
            audiences = (config.api_audiences
                         if "api-audiences" in getattr(config, "given", ()) else [])
            return cls(client, token_webhook_cache_ttl(config), audiences)
        client = WebhookClient.from_kubeconfig(
            config.authentication_token_webhook_config_file, material,
            "authentication-token-webhook-config-file")
        return cls(client, token_webhook_cache_ttl(config), api_audiences(config))

    def authenticate(self, request):
        token = bearer_token(request.headers)
        if token is None:
            return None
        wanted = list(request.audiences) or self.implicit_audiences
        key = (hashlib.sha256(token.encode()).digest(), tuple(wanted))
        cached = self.cache.get(key)
        if cached is not None:
            status = cached[1]
        else:
            status = self._review(token, wanted)
            self.cache.put(key, status, self.ttl)
        audiences = None
        if wanted:
            reported = status.get("audiences") or self.implicit_audiences
            audiences = tuple(a for a in wanted if a in reported)
            if not audiences:
                raise AuthenticationError("invalid bearer token")
        if not status.get("authenticated"):
            raise AuthenticationError(status.get("error") or "invalid bearer token")
        user = status.get("user") or {}
        extra = {k: tuple(v or ()) for k, v in (user.get("extra") or {}).items()}
        request.matched_audiences = audiences
        return UserInfo(user.get("username") or "", user.get("uid") or "",
                        tuple(user.get("groups") or ()), extra)

    def _review(self, token: str, audiences) -> dict:
        spec = {"token": token}
        if audiences:
            spec["audiences"] = list(audiences)
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
                  "metadata": {"creationTimestamp": None}, "spec": spec,
                  "status": {"user": {}}}
        try:
            answer = self.client.post(review)
        except WebhookError as err:
            log.warning("token webhook failed: %s", err)
            raise AuthenticationError(f"webhook: {err}") from None
        status = answer.get("status")
        if answer.get("kind") != "TokenReview" or not isinstance(status, dict):
            raise AuthenticationError("webhook: the answer is not a TokenReview")
        return status
