"""One call of an admission webhook: the ``AdmissionReview`` sent, the answer checked, and
the errors worded as upstream's (``webhook/request``, ``webhook/errors``,
``util/webhook``).

The review is POSTed over TLS verified with the webhook's ``caBundle`` (the system's CAs
without one) to its ``url``, or to its ``service`` through the server's service
resolution (``https://NAME.NAMESPACE.svc:PORT/PATH`` verified, the endpoints' address
dialled), with upstream's ``?timeout=Ns`` parameter: the webhook's ``timeoutSeconds``, or
what is left of the request's own deadline when that is less. A call that fails is a
``CallError`` (``failed calling webhook "x": failed to call webhook: Post "…": …``),
which the failure policy may ignore; a refusal is a ``WebhookDenied`` carrying the
webhook's ``Status`` (``admission webhook "x" denied the request: …``).
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import ssl
import time
import uuid

from kapiserver import errors
from kapiserver.apimachinery.field_errors import go_quote

REVIEW_GROUP = "admission.k8s.io"
#: The review versions this server speaks, in upstream's order of preference.
REVIEW_VERSIONS = ("v1", "v1beta1")
DEFAULT_TIMEOUT = 10


class CallError(Exception):
    """``webhookutil.ErrCallingWebhook``: the webhook could not be called or answered
    with no usable review."""

    def __init__(self, webhook: str, reason: str):
        super().__init__(f"failed calling webhook {go_quote(webhook)}: {reason}")


class WebhookDenied(errors.StatusError):
    """The webhook's refusal, answered with the ``Status`` it gave (``ToStatusErr``)."""

    def __init__(self, webhook: str, result):
        result = result if isinstance(result, dict) else {}
        denied = f"admission webhook {go_quote(webhook)} denied the request"
        message = result.get("message") if isinstance(result.get("message"), str) else ""
        reason = result.get("reason") if isinstance(result.get("reason"), str) else ""
        if message:
            text = f"{denied}: {message}"
        elif reason:
            text = f"{denied}: {reason}"
        else:
            text = f"{denied} without explanation"
        details = result.get("details") if isinstance(result.get("details"), dict) else None
        super().__init__(text, details)
        code = result.get("code")
        self.code = code if isinstance(code, int) and not isinstance(code, bool) and \
            code >= 400 else 400
        self.reason = reason


def dry_run_unsupported(webhook: str) -> errors.BadRequest:
    """``NewDryRunUnsupportedErr``."""
    return errors.BadRequest(f"admission webhook {go_quote(webhook)} does not support dry run")


def _gvk(gvk) -> dict:
    return {"group": gvk[0], "version": gvk[1], "kind": gvk[2]}


def _gvr(gvr) -> dict:
    return {"group": gvr[0], "version": gvr[1], "resource": gvr[2]}


def admission_request(uid: str, attributes, gvr, gvk, obj, old) -> dict:
    """``AdmissionRequest`` (v1; v1beta1 has the same fields) of a call with the resource
    ``gvr``/kind ``gvk`` the webhook matched and the objects in that version; fields in
    the Go struct's order, empty ``omitempty`` ones left out."""
    request = {"uid": uid, "kind": _gvk(gvk), "resource": _gvr(gvr)}
    if attributes.subresource:
        request["subResource"] = attributes.subresource
    request["requestKind"] = _gvk(attributes.gvk)
    request["requestResource"] = _gvr(attributes.gvr)
    if attributes.subresource:
        request["requestSubResource"] = attributes.subresource
    if attributes.name:
        request["name"] = attributes.name
    if attributes.namespace:
        request["namespace"] = attributes.namespace
    request["operation"] = attributes.operation
    request["userInfo"] = attributes.user.to_v1() if attributes.user is not None else {}
    request["object"] = obj
    request["oldObject"] = old
    request["dryRun"] = bool(attributes.dry_run)
    request["options"] = attributes.options
    return request


class Caller:
    """Calls webhooks for one server: kept-alive connections shared by every webhook
    (``client.WebhookHTTPClient``)."""

    def __init__(self, server):
        from .client import WebhookHTTPClient

        self.server = server
        self.http = WebhookHTTPClient()

    def _context(self, bundle: str):
        """The TLS context of a ``caBundle`` (``CallError`` when it holds no certificate)."""
        if not bundle:
            return self.http.context("")
        try:
            pem = base64.b64decode(bundle, validate=True).decode("ascii")
            return self.http.context(pem)
        except (ValueError, ssl.SSLError):
            raise ValueError("unable to load root certificates: unable to parse bytes as PEM "
                             "block") from None

    def call(self, webhook, review: dict, deadline) -> dict:
        """POST ``review``; the answer decoded (``CallError`` when there is none)."""
        from kapiserver.server.serviceresolver import resolve_service

        from .client import CallFailed

        config = webhook.client_config
        timeout = float(webhook.timeout if isinstance(webhook.timeout, int)
                        else DEFAULT_TIMEOUT)
        if deadline is not None:
            timeout = min(timeout, deadline - time.monotonic())
        if timeout <= 0:
            raise CallError(webhook.name, "failed to call webhook: context deadline exceeded")
        # client-go's Timeout(): whole seconds, rounded up.
        seconds = max(math.ceil(timeout), 1)
        try:
            context = self._context(config.get("caBundle") or "")
        except ValueError as err:
            raise CallError(webhook.name, f"could not get REST client: {err}") from None
        service = config.get("service")
        address = None
        if isinstance(service, dict):
            namespace, name = service.get("namespace", ""), service.get("name", "")
            port = service.get("port") or 443
            url = f"https://{name}.{namespace}.svc:{port}{service.get('path') or ''}"
        else:
            url = config.get("url") or ""
        url += ("&" if "?" in url else "?") + f"timeout={seconds}s"
        try:
            if isinstance(service, dict):
                try:
                    address = resolve_service(self.server, namespace, name, port)
                except LookupError as err:
                    raise CallFailed(f'Post "{url}": {err}') from None
            return self.http.post(url, review, context, timeout, address)
        except CallFailed as err:
            raise CallError(webhook.name, f"failed to call webhook: {err}") from None

    def close(self) -> None:
        self.http.close()


def new_review(webhook, attributes, gvr, gvk, obj, old) -> tuple[str, str, dict]:
    """``CreateAdmissionObjects``: ``(uid, review version, review)``."""
    version = next((v for v in webhook.review_versions if v in REVIEW_VERSIONS), None)
    if version is None:
        raise CallError(webhook.name, "could not create admission objects: webhook does not "
                        "accept known AdmissionReview versions: "
                        f"[{' '.join(webhook.review_versions)}]")
    uid = str(uuid.uuid4())
    return uid, version, {"kind": "AdmissionReview",
                          "apiVersion": f"{REVIEW_GROUP}/{version}",
                          "request": admission_request(uid, attributes, gvr, gvk, obj, old)}


class Response:
    """``VerifyAdmissionResponse``'s result."""

    __slots__ = ("allowed", "patch", "patch_type", "result", "warnings", "audit_annotations")


def verify_response(webhook, uid: str, version: str, answer: dict, mutating: bool) -> Response:
    """The answer's ``response``, checked as upstream checks it (``CallError`` otherwise)."""
    def invalid(reason: str):
        return CallError(webhook.name, f"received invalid webhook response: {reason}")

    response = answer.get("response")
    if response is None:
        raise invalid("webhook response was absent")
    if not isinstance(response, dict):
        raise invalid(f"json: cannot unmarshal {_json_kind(response)} into Go struct field "
                      "AdmissionReview.response of type "
                      f"{version}.AdmissionResponse")
    patch = response.get("patch") or ""
    patch_type = response.get("patchType")
    if version == "v1":
        got_uid = response.get("uid") or ""
        if got_uid != uid:
            raise invalid(f"expected response.uid={go_quote(uid)}, got {go_quote(str(got_uid))}")
        if (answer.get("apiVersion"), answer.get("kind")) != (f"{REVIEW_GROUP}/v1",
                                                              "AdmissionReview"):
            raise invalid(f"expected webhook response of {REVIEW_GROUP}/v1, "
                          f"Kind=AdmissionReview, got {_gvk_string(answer)}")
        if mutating:
            if patch and patch_type is None:
                raise invalid("webhook returned response.patch but not response.patchType")
            if not patch and patch_type is not None:
                raise invalid("webhook returned response.patchType but not response.patch")
            if patch_type is not None and not patch_type:
                raise invalid('webhook returned invalid response.patchType of ""')
        else:
            if patch:
                raise invalid("validating webhook may not return response.patch")
            if patch_type is not None:
                raise invalid("validating webhook may not return response.patchType")
    elif not mutating:
        patch = ""
    out = Response()
    out.allowed = response.get("allowed") is True
    out.patch = patch
    out.patch_type = patch_type or ""
    out.result = response.get("status")
    warnings = response.get("warnings")
    out.warnings = [w for w in warnings if isinstance(w, str)] if isinstance(warnings, list) \
        else []
    annotations = response.get("auditAnnotations")
    out.audit_annotations = annotations if isinstance(annotations, dict) else {}
    return out


def decode_patch(webhook, patch) -> list:
    """The JSON patch of a response (base64 in JSON, as Go encodes ``[]byte``)."""
    try:
        data = base64.b64decode(patch, validate=True) if isinstance(patch, str) else b""
        operations = json.loads(data)
    except (binascii.Error, ValueError) as err:
        raise CallError(webhook.name,
                        f"received undecodable patch in webhook response: {err}") from None
    if not isinstance(operations, list):
        raise CallError(webhook.name, "received undecodable patch in webhook response: json: "
                        f"cannot unmarshal {_json_kind(operations)} into Go value of type "
                        "jsonpatch.Patch")
    return operations


def _gvk_string(obj: dict) -> str:
    """``schema.GroupVersionKind.String()`` of a decoded answer."""
    api_version = obj.get("apiVersion") if isinstance(obj.get("apiVersion"), str) else ""
    group, _, version = api_version.rpartition("/")
    kind = obj.get("kind") if isinstance(obj.get("kind"), str) else ""
    return f"{group}/{version}, Kind={kind}"


def _json_kind(value) -> str:
    from kapiserver.runtime.gotypes import json_kind

    return json_kind(value)
