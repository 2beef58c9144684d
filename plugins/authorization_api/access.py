"""Subject, local and self access reviews (``pkg/registry/authorization/*subjectaccessreview``).

The spec is validated as upstream's ``authorization/validation``, turned into authorizer
``Attributes`` as ``authorizationutil.ResourceAttributesFrom`` does (an empty version
means every version, ``*``) and put to the server's authorizer union.
"""

from __future__ import annotations

from kapiserver import errors
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, new_invalid
from kapiserver.authentication import UserInfo
from kapiserver.authorization import Attributes, Decision
from kapiserver.endpoints.virtual import echo_metadata

GROUP = "authorization.k8s.io"
#: ``ResourceAttributes``' JSON fields in Go's order (selectors are echoed, not evaluated).
RESOURCE_FIELDS = ("namespace", "verb", "group", "version", "resource", "subresource", "name",
                   "fieldSelector", "labelSelector")
NON_RESOURCE_FIELDS = ("path", "verb")
_GO_NAMES = {"group": "Group", "version": "Version", "namespace": "Namespace", "verb": "Verb",
             "resource": "Resource", "subresource": "Subresource", "name": "Name",
             "path": "Path"}


def _strings(value) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _attributes(value, names) -> dict | None:
    """A ``*Attributes`` struct of the spec with empty fields dropped (None when absent)."""
    if value is None:
        return None
    value = value if isinstance(value, dict) else {}
    return {k: value[k] for k in names if value.get(k) not in (None, "", {}, [])}


def _go_struct(type_name: str, attrs: dict, names) -> GoValue:
    # %#v of a typed struct: every string field, empty ones included.
    fields = ", ".join(f"{_GO_NAMES[k]}:{errors.go_quote(str(attrs.get(k, '')))}"
                       for k in names if k in _GO_NAMES)
    return GoValue(f"authorization.{type_name}{{{fields}}}")


def _spec_errors(resource, non_resource) -> list[FieldError]:
    spec = FieldPath("spec")
    found = []
    if resource is not None and non_resource is not None:
        found.append(FieldError.invalid(
            spec.child("nonResourceAttributes"),
            _go_struct("NonResourceAttributes", non_resource, NON_RESOURCE_FIELDS),
            "cannot be specified in combination with resourceAttributes"))
    if resource is None and non_resource is None:
        found.append(FieldError.invalid(
            spec.child("resourceAttributes"), None,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    return found


class AccessReviewer:
    """Answer one kind of access review: ``SubjectAccessReview``,
    ``LocalSubjectAccessReview`` or ``SelfSubjectAccessReview``."""

    def __init__(self, server, kind: str):
        self.server = server
        self.kind = kind

    def __call__(self, ctx, obj: dict) -> dict:
        spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
        meta = obj.get("metadata") or {}
        resource = _attributes(spec.get("resourceAttributes"), RESOURCE_FIELDS)
        non_resource = _attributes(spec.get("nonResourceAttributes"), NON_RESOURCE_FIELDS)
        self_review = self.kind == "SelfSubjectAccessReview"
        found = _spec_errors(resource, non_resource)
        subject = None
        echoed = {}
        if resource is not None:
            echoed["resourceAttributes"] = resource
        if non_resource is not None:
            echoed["nonResourceAttributes"] = non_resource
        if not self_review:
            user, groups = spec.get("user") or "", _strings(spec.get("groups"))
            extra = spec.get("extra") if isinstance(spec.get("extra"), dict) else {}
            extra = {k: _strings(v) for k, v in extra.items()}
            uid = spec.get("uid") or ""
            if not user and not groups:
                found.append(FieldError.invalid(FieldPath("spec", "user"), user,
                                                "at least one of user or group must be "
                                                "specified"))
            for key, value in (("user", user), ("groups", groups), ("extra", extra),
                               ("uid", uid)):
                if value:
                    echoed[key] = value
            subject = UserInfo(user, uid, tuple(groups),
                               {k: tuple(v) for k, v in extra.items()})
        else:
            subject = ctx.user
        found += self._meta_errors(meta, resource, non_resource)
        if found:
            raise new_invalid(self.kind, GROUP, "", found)

        if resource is not None:
            attributes = Attributes(
                user=subject, verb=resource.get("verb", ""), resource_request=True,
                namespace=resource.get("namespace", ""), api_group=resource.get("group", ""),
                api_version=resource.get("version") or "*",
                resource=resource.get("resource", ""),
                subresource=resource.get("subresource", ""), name=resource.get("name", ""))
        else:
            attributes = Attributes(user=subject, verb=non_resource.get("verb", ""),
                                    resource_request=False, path=non_resource.get("path", ""))
        decision, reason = self.server.authorizer.authorize(attributes)
        status = {"allowed": decision is Decision.ALLOW}
        if decision is Decision.DENY:
            status["denied"] = True
        if reason:
            status["reason"] = reason
        return {"kind": self.kind, "apiVersion": f"{GROUP}/v1",
                "metadata": echo_metadata(meta), "spec": echoed, "status": status}

    def _meta_errors(self, meta, resource, non_resource) -> list[FieldError]:
        local = self.kind == "LocalSubjectAccessReview"
        rest = {k: v for k, v in echo_metadata(meta).items()
                if not (k == "creationTimestamp" and v is None)
                and not (local and k in ("namespace", "managedFields"))}
        found = []
        if rest:
            found.append(FieldError.invalid(
                FieldPath("metadata"), GoValue(_object_meta(meta)),
                "must be empty except for namespace" if local else "must be empty"))
        if local:
            namespace = meta.get("namespace") or ""
            if resource is not None and resource.get("namespace", "") != namespace:
                found.append(FieldError.invalid(FieldPath("spec", "resourceAttributes",
                                                          "namespace"),
                                                resource.get("namespace", ""),
                                                "must match metadata.namespace"))
            if non_resource is not None:
                found.append(FieldError.invalid(
                    FieldPath("spec", "nonResourceAttributes"),
                    _go_struct("NonResourceAttributes", non_resource, NON_RESOURCE_FIELDS),
                    "disallowed on this kind of request"))
        return found


def _object_meta(meta: dict) -> str:
    """A short ``%#v``-like rendering of the offending metadata (names the set fields)."""
    parts = ", ".join(f"{k[0].upper()}{k[1:]}:{errors.go_quote(str(v))}"
                      for k, v in echo_metadata(meta).items() if v is not None)
    return f"v1.ObjectMeta{{{parts}}}"
