"""The ``Webhook`` authorization mode (``--authorization-webhook-config-file``, or
``--authorization-kubeconfig``: SubjectAccessReview on an extension server's main server).

Upstream's ``plugin/pkg/authorizer/webhook``: each decision is asked of a remote service
as an ``authorization.k8s.io/v1`` SubjectAccessReview. ``allowed`` allows, ``denied``
denies, neither has no opinion (the next mode decides); ``status.reason`` is the reason.
Answers are cached, allowed ones for ``--authorization-webhook-cache-authorized-ttl``,
the others for ``--authorization-webhook-cache-unauthorized-ttl``. When the webhook
fails, the decision is "no opinion" (upstream answers 500 unless another mode allows).

With ``--authorization-kubeconfig`` it is upstream's delegating authorizer: the reviews go
to the main server's ``subjectaccessreviews``, and both kinds of answer are cached 10 s
unless the TTL options say otherwise.
"""

from __future__ import annotations

import json
import logging
import os

from kapiserver.authorization import Authorizer, Decision
from kapiserver.webhookclient import TTLCache, WebhookClient, WebhookError

log = logging.getLogger(__name__)

SUBJECTACCESSREVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
#: Upstream's ``DelegatingAuthorizationOptions`` AllowCacheTTL and DenyCacheTTL.
DELEGATED_CACHE_TTL = 10.0


def review_spec(attributes) -> dict:
    """The SubjectAccessReview spec of ``attributes``, as upstream's webhook sends it."""
    user = attributes.user
    spec = {}
    if attributes.resource_request:
        resource = {}
        for key, value in (("namespace", attributes.namespace), ("verb", attributes.verb),
                           ("group", attributes.api_group),
                           ("version", attributes.api_version),
                           ("resource", attributes.resource),
                           ("subresource", attributes.subresource), ("name", attributes.name)):
            if value:
                resource[key] = value
        spec["resourceAttributes"] = resource
    else:
        spec["nonResourceAttributes"] = {"path": attributes.path, "verb": attributes.verb}
    if user.name:
        spec["user"] = user.name
    if user.groups:
        spec["groups"] = list(user.groups)
    if user.extra:
        spec["extra"] = {k: list(v) for k, v in user.extra.items()}
    if user.uid:
        spec["uid"] = user.uid
    return spec


class WebhookAuthorizer(Authorizer):
    """Ask a remote SubjectAccessReview service (the ``Webhook`` mode)."""

    name = "Webhook"

    def __init__(self, client: WebhookClient, authorized_ttl: float, unauthorized_ttl: float,
                 cache=None):
        self.client = client
        self.authorized_ttl = authorized_ttl
        self.unauthorized_ttl = unauthorized_ttl
        self.cache = cache or TTLCache()

    @classmethod
    def from_config(cls, config) -> "WebhookAuthorizer":
        material = os.path.join(config.data_dir, "webhooks")
        authorized = config.authorization_webhook_cache_authorized_ttl
        unauthorized = config.authorization_webhook_cache_unauthorized_ttl
        if getattr(config, "authorization_kubeconfig", ""):
            client = WebhookClient.from_kubeconfig(
                config.authorization_kubeconfig, material, "authorization-kubeconfig"
            ).for_path(SUBJECTACCESSREVIEWS)
            given = getattr(config, "given", ())
            if "authorization-webhook-cache-authorized-ttl" not in given:
                authorized = DELEGATED_CACHE_TTL
            if "authorization-webhook-cache-unauthorized-ttl" not in given:
                unauthorized = DELEGATED_CACHE_TTL
            return cls(client, authorized, unauthorized)
        client = WebhookClient.from_kubeconfig(
            config.authorization_webhook_config_file, material,
            "authorization-webhook-config-file")
        return cls(client, authorized, unauthorized)

    def authorize(self, attributes):
        spec = review_spec(attributes)
        key = json.dumps(spec, sort_keys=True)
        cached = self.cache.get(key)
        if cached is not None:
            status = cached[1]
        else:
            review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                      "metadata": {"creationTimestamp": None}, "spec": spec,
                      "status": {"allowed": False}}
            try:
                answer = self.client.post(review)
            except WebhookError as err:
                log.warning("authorization webhook failed: %s", err)
                return Decision.NO_OPINION, ""
            status = answer.get("status")
            if answer.get("kind") != "SubjectAccessReview" or not isinstance(status, dict):
                log.warning("authorization webhook: the answer is not a SubjectAccessReview")
                return Decision.NO_OPINION, ""
            self.cache.put(key, status, self.authorized_ttl if status.get("allowed")
                           else self.unauthorized_ttl)
        reason = status.get("reason") or ""
        if status.get("allowed"):
            return Decision.ALLOW, reason
        if status.get("denied"):
            return Decision.DENY, reason
        return Decision.NO_OPINION, reason

    def rules_for(self, user, namespace):
        # Upstream's WebhookAuthorizer.RulesFor.
        return [], [], True, "webhook authorizer does not support user rule resolution"
