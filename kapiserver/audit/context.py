"""AuditContext: one audited request's Event as it grows through its stages.

As upstream's ``audit.AuditContext`` and ``LogRequestMetadata`` / ``LogRequestObject`` /
``LogRequestPatch`` / ``LogResponseObject`` / ``LogImpersonatedUser``: the filter makes the
context once the policy gave the request a level above None; handlers add the object or
patch the request carried (``log_request_object``); each stage's Event is a fresh dict in
the field order of ``audit.k8s.io/v1`` ``Event``, handed to every backend.
"""

from __future__ import annotations

import copy
import functools
import time

from .policy import RANK, REQUEST, REQUEST_RECEIVED, REQUEST_RESPONSE, RequestAuditConfig

API_VERSION = "audit.k8s.io/v1"
MAX_USER_AGENT = 1024
USER_AGENT_TRUNCATED = "...TRUNCATED"


@functools.lru_cache(maxsize=8)
def _second(seconds: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def micro_time(moment: float) -> str:
    """A ``metav1.MicroTime``: RFC 3339 in UTC with microseconds."""
    seconds = int(moment)
    return f"{_second(seconds)}.{int((moment - seconds) * 1e6):06d}Z"


def user_v1(user) -> dict:
    """An ``authentication.k8s.io/v1`` UserInfo; the username key is always there."""
    return {"username": "", **user.to_v1()} if user is not None else {}


def truncate_user_agent(agent: str) -> str:
    if len(agent) > MAX_USER_AGENT:
        return agent[:MAX_USER_AGENT] + USER_AGENT_TRUNCATED
    return agent


def without_managed_fields(obj):
    """``obj`` (an object, a list or a Table) with ``metadata.managedFields`` left out of it
    and of its items and rows; ``obj`` itself is not changed."""
    if not isinstance(obj, dict):
        return obj
    result = obj
    meta = obj.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        result = dict(obj, metadata={k: v for k, v in meta.items() if k != "managedFields"})
    items = obj.get("items")
    if isinstance(items, list):
        result = dict(result, items=[without_managed_fields(i) for i in items])
    rows = obj.get("rows")
    if obj.get("kind") == "Table" and isinstance(rows, list):
        result = dict(result, rows=[dict(r, object=without_managed_fields(r["object"]))
                                    if isinstance(r, dict) and "object" in r else r
                                    for r in rows])
    return result


class AuditContext:
    """The Event of one audited request (see the module docstring)."""

    __slots__ = ("config", "level", "audit_id", "request_uri", "verb", "user", "source_ips",
                 "user_agent", "object_ref", "received", "request_object", "response_object",
                 "impersonated_user", "annotations", "response_status")

    def __init__(self, config: RequestAuditConfig, audit_id: str, request_uri: str, verb: str,
                 user, source_ips: list[str], user_agent: str, object_ref: dict | None,
                 received: float, annotations: dict):
        self.config = config
        self.level = config.level
        self.audit_id = audit_id
        self.request_uri = request_uri
        self.verb = verb
        self.user = user_v1(user)
        self.source_ips = source_ips
        self.user_agent = truncate_user_agent(user_agent)
        self.object_ref = object_ref
        self.received = received
        self.request_object = None
        self.response_object = None
        self.impersonated_user = None
        #: The request's annotations (``ctx.audit_annotations``), shared, read at each stage.
        self.annotations = annotations
        self.response_status = None

    @property
    def logs_request(self) -> bool:
        """The level logs request bodies (Request or RequestResponse)."""
        return RANK[self.level] >= RANK[REQUEST]

    @property
    def logs_response(self) -> bool:
        return self.level == REQUEST_RESPONSE

    def log_request_object(self, obj: dict) -> None:
        """``LogRequestObject``: complete ``objectRef`` from the object's metadata (at every
        level) and keep a copy of the object (Request and above)."""
        meta = obj.get("metadata") if isinstance(obj, dict) else None
        if isinstance(meta, dict):
            ref = dict(self.object_ref or {})  # an earlier stage's event keeps its own
            for key, field in (("namespace", "namespace"), ("name", "name"), ("uid", "uid"),
                               ("resourceVersion", "resourceVersion")):
                if not ref.get(key) and meta.get(field):
                    ref[key] = meta[field]
            self.object_ref = _ordered_ref(ref)
        if self.logs_request:
            if self.config.omit_managed_fields:
                obj = without_managed_fields(obj)
            self.request_object = copy.deepcopy(obj)

    def log_request_patch(self, patch) -> None:
        """``LogRequestPatch``: the patch as sent, as the request object."""
        if self.logs_request:
            self.request_object = patch

    def log_impersonated_user(self, user) -> None:
        self.impersonated_user = user_v1(user)

    def log_response_object(self, obj) -> None:
        if self.logs_response:
            if self.config.omit_managed_fields:
                obj = without_managed_fields(obj)
            self.response_object = obj

    def set_response(self, code: int, status: dict | None = None) -> None:
        """The ``responseStatus``: the code, and the bounded fields of an error ``Status``
        (``LogResponseObject`` copies status, message, reason and details)."""
        response_status = {"metadata": {}}
        if status is not None:
            for key in ("status", "message", "reason", "details"):
                if status.get(key):
                    response_status[key] = status[key]
        response_status["code"] = code
        self.response_status = response_status

    def event(self, stage: str, now: float | None = None) -> dict:
        """The Event at ``stage``; at RequestReceived it carries the receipt time."""
        event = {"kind": "Event", "apiVersion": API_VERSION, "level": self.level,
                 "auditID": self.audit_id, "stage": stage, "requestURI": self.request_uri,
                 "verb": self.verb, "user": self.user}
        if self.impersonated_user is not None:
            event["impersonatedUser"] = self.impersonated_user
        event["sourceIPs"] = self.source_ips
        if self.user_agent:
            event["userAgent"] = self.user_agent
        if self.object_ref is not None:
            event["objectRef"] = self.object_ref
        if self.response_status is not None and stage != REQUEST_RECEIVED:
            event["responseStatus"] = self.response_status
        if self.request_object is not None:
            event["requestObject"] = self.request_object
        if self.response_object is not None and stage != REQUEST_RECEIVED:
            event["responseObject"] = self.response_object
        received = micro_time(self.received)
        event["requestReceivedTimestamp"] = received
        event["stageTimestamp"] = received if stage == REQUEST_RECEIVED else \
            micro_time(time.time() if now is None else now)
        if self.annotations:
            event["annotations"] = dict(self.annotations)
        return event


#: ``ObjectReference``'s field order.
_REF_ORDER = ("resource", "namespace", "name", "uid", "apiGroup", "apiVersion",
              "resourceVersion", "subresource")


def _ordered_ref(ref: dict) -> dict:
    return {key: ref[key] for key in _REF_ORDER if ref.get(key)}


def object_ref(info) -> dict | None:
    """The ``objectRef`` of a resource request's RequestInfo (None for other paths)."""
    if info is None or not info.is_resource_request:
        return None
    return _ordered_ref({"resource": info.resource, "namespace": info.namespace,
                         "name": info.name, "apiGroup": info.api_group,
                         "apiVersion": info.api_version, "subresource": info.subresource})
