"""``serviceaccounts/token``: TokenRequest issues bound, expiring service-account tokens.

Mirrors ``pkg/registry/core/serviceaccount/storage/token.go``: the body's name and
namespace must match the URL's, the service account must exist, audiences default to
``--api-audiences``, ``expirationSeconds`` defaults to 3600 and must lie between ten
minutes and 2^32 seconds (longer ones are shortened to
``--service-account-max-token-expiration``, with a warning). A token bound to a Secret
(``boundObjectRef``) lives only as long as that Secret; pods and nodes are not served, so
binding to one is a 404.
"""

from __future__ import annotations

import datetime
import time

from kapiserver import errors
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, new_invalid
from kapiserver.registry.resource import ResourceSpec

TOKENREQUEST = ResourceSpec(group="authentication.k8s.io", version="v1", kind="TokenRequest",
                            resource="serviceaccounts", singular="", namespaced=True,
                            verbs=("create",))
#: ``SetDefaults_TokenRequestSpec`` and ``ValidateTokenRequest``'s bounds.
DEFAULT_EXPIRATION_SECONDS = 3600
MIN_EXPIRATION_SECONDS = 10 * 60
MAX_EXPIRATION_SECONDS = 1 << 32


def _timestamp(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(int(seconds), datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%SZ")


def _invalid(name, path, value, detail):
    return new_invalid("TokenRequest", "authentication.k8s.io", name,
                       [FieldError.invalid(path, value, detail)])


class TokenRequester:
    """The ``create`` of ``serviceaccounts/token`` (a ``CreateOnlyHandler`` callable)."""

    def __init__(self, server, accounts):
        self.server = server
        self.accounts = accounts  # the serviceaccounts RegistryStore

    def _bound_secret(self, ref: dict, namespace: str) -> dict:
        """The Secret a token is bound to; pods and nodes are not served here, so a token
        bound to one names an object that does not exist."""
        api_version = ref.get("apiVersion") or ""
        group, _, version = api_version.rpartition("/")
        kind, name = ref.get("kind") or "", ref.get("name") or ""
        if group == "" and kind in ("Pod", "Node"):
            raise errors.NotFound.for_object("", kind.lower() + "s", name)
        if group != "" or kind != "Secret":
            raise errors.BadRequest(f"cannot bind token to object of type "
                                    f"{group}/{version}, Kind={kind}")
        secret = self.server.registries[("", "secrets")].get(namespace, name)
        uid = secret["metadata"].get("uid", "")
        if ref.get("uid") and ref["uid"] != uid:
            raise errors.Conflict(
                f"Operation cannot be fulfilled on Secret {errors.go_quote(name)}: the UID in "
                f"the bound object reference ({ref['uid']}) does not match the UID in record. "
                "The object might have been deleted and then recreated",
                errors.status_details(name, "", "Secret"))
        return secret

    def __call__(self, ctx, obj: dict) -> dict:
        from kapiserver.authentication.serviceaccount import ServiceAccountTokens

        name, namespace = ctx.info.name, ctx.info.namespace
        meta = obj.get("metadata") or {}
        if meta.get("name") and meta["name"] != name:
            raise _invalid(name, FieldPath("metadata", "name"), meta["name"],
                           "must match the service account name if specified")
        account = self.accounts.get(namespace, name)
        tokens = ServiceAccountTokens.for_server(self.server)
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        audiences = [a for a in spec.get("audiences") or [] if isinstance(a, str)]
        audiences = audiences or list(tokens.api_audiences)
        seconds = spec.get("expirationSeconds")
        seconds = DEFAULT_EXPIRATION_SECONDS if seconds is None else seconds
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            raise errors.BadRequest("the object provided is unrecognized (must be of type "
                                    "TokenRequest): expirationSeconds must be an integer")
        if seconds < MIN_EXPIRATION_SECONDS:
            raise _invalid("", FieldPath("spec", "expirationSeconds"), seconds,
                           "may not specify a duration less than 10 minutes")
        if seconds > MAX_EXPIRATION_SECONDS:
            raise _invalid("", FieldPath("spec", "expirationSeconds"), seconds,
                           "may not specify a duration larger than 2^32 seconds")
        limit = int(self.server.config.get("service_account_max_token_expiration") or 0)
        if limit and seconds > limit:
            ctx.warnings.append(f"requested expiration of {seconds} seconds shortened to "
                                f"{limit} seconds")
            seconds = limit
        bound = spec.get("boundObjectRef") or None
        secret = self._bound_secret(bound, namespace) if bound else None
        now = time.time()
        token, expiry = tokens.issue(account, audiences, seconds, now, secret)
        return {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                "metadata": {"name": name, "namespace": namespace,
                             "creationTimestamp": _timestamp(now)},
                "spec": {"audiences": audiences, "expirationSeconds": seconds,
                         "boundObjectRef": bound},
                "status": {"token": token, "expirationTimestamp": _timestamp(expiry)}}
