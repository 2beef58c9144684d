"""TokenReview and SelfSubjectReview answers (``pkg/registry/authentication``)."""

from __future__ import annotations

import datetime

from kapiserver import errors
from kapiserver.authentication import AuthenticationError, AuthenticationRequest
from kapiserver.endpoints.virtual import echo_metadata


def user_info(user) -> dict:
    """``authentication.k8s.io/v1`` ``UserInfo`` of ``user`` (none: empty)."""
    return user.to_v1() if user is not None else {}


def self_subject_review(ctx, obj: dict) -> dict:
    """``kubectl auth whoami``: the request's user (after impersonation), stamped now."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": now},
            "status": {"userInfo": user_info(ctx.user)}}


class TokenReviewer:
    """Authenticate ``spec.token`` with the server's authenticator union.

    As upstream, the token is presented as ``Authorization: Bearer`` alone, for
    ``spec.audiences`` or else the server's ``--api-audiences``. Audience-aware
    authenticators (service-account tokens) report the audiences they matched; for the
    others the requested audiences are implied.
    """

    def __init__(self, server):
        self.server = server

    def __call__(self, ctx, obj: dict) -> dict:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        token = spec.get("token") or ""
        if not token:
            raise errors.BadRequest("token is required for TokenReview in authentication")
        audiences = [a for a in (spec.get("audiences") or []) if isinstance(a, str)]
        tokens = getattr(self.server, "service_account_tokens", None)
        wanted = audiences or list(tokens.api_audiences if tokens else
                                   self.server.config.get("api_audiences") or [])
        request = AuthenticationRequest({"Authorization": f"Bearer {token}"},
                                        audiences=tuple(wanted))
        status = {}
        user = error = None
        try:
            user = self.server.authenticator.authenticate(request)
        except AuthenticationError as err:
            # utilerrors.NewAggregate's wording: repeats dropped, several in brackets.
            messages = list(dict.fromkeys(getattr(err, "messages", None) or [str(err)]))
            error = messages[0] if len(messages) == 1 else f"[{', '.join(messages)}]"
        if user is not None:
            status["authenticated"] = True
        status["user"] = user_info(user)
        if user is not None:
            matched = request.matched_audiences
            matched = list(wanted) if matched is None else list(matched)
            if matched:
                status["audiences"] = matched
        if error:
            status["error"] = error
        echoed = {"token": token}
        if audiences:
            echoed["audiences"] = audiences
        return {"kind": "TokenReview", "apiVersion": "authentication.k8s.io/v1",
                "metadata": echo_metadata(obj.get("metadata")), "spec": echoed,
                "status": status}
