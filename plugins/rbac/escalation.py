"""Escalation prevention: nobody grants, through a role or a binding, more than they hold.

Mirrors the ``policybased`` storages of ``pkg/registry/rbac/{role,clusterrole,rolebinding,
clusterrolebinding}`` and ``rbacregistryvalidation.ConfirmNoEscalation``: a member of
``system:masters`` passes; a role write passes with ``escalate`` on the role, a binding
write with ``bind`` on the role it refers to; otherwise the requester must already hold
every rule granted, resolved by the server's RBAC index whatever the authorization mode.
The check runs before admission and validation, as upstream's storage wrapper does.
"""

from __future__ import annotations

import copy

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE
from kapiserver.authentication import SYSTEM_PRIVILEGED_GROUP
from kapiserver.authorization import Attributes, Decision
from kapiserver.endpoints.handlers import RESTHandler

from .index import Binding
from .rules import FULL_AUTHORITY, covers, escalation_message

GROUP = "rbac.authorization.k8s.io"
#: Metadata the garbage collector writes (``IsOnlyMutatingGCFields``).
_GC_FIELDS = ("ownerReferences", "finalizers")


def only_gc_fields_changed(new: dict, old: dict) -> bool:
    """True when ``new`` differs from ``old`` at most in ownerReferences and finalizers."""
    def strip(obj):
        obj = copy.deepcopy(obj)
        meta = obj.get("metadata") or {}
        for field in _GC_FIELDS + ("resourceVersion", "managedFields", "generation"):
            meta.pop(field, None)
        return obj

    return strip(new) == strip(old)


class EscalationCheck:
    """The check for one resource; ``__call__(ctx, operation, obj, old)`` raises 403."""

    def __init__(self, server, spec):
        self.server = server
        self.spec = spec
        self.binding = spec.resource.endswith("bindings")

    def _forbidden(self, name: str, message: str) -> errors.Forbidden:
        return errors.Forbidden.for_resource(GROUP, self.spec.resource, name, message)

    def _allowed(self, user, verb: str, namespace: str, resource: str, name: str) -> bool:
        attributes = Attributes(user=user, verb=verb, resource_request=True,
                                namespace=namespace, api_group=GROUP, api_version="*",
                                resource=resource, name=name)
        decision, _ = self.server.authorizer.authorize(attributes)
        return decision is Decision.ALLOW

    def _confirm(self, user, namespace: str, name: str, rules: list[dict], message=None):
        from .authorizer import index_for

        owned, resolution_errors = index_for(self.server).resolve(user, namespace, plural=True)
        ok, missing = covers(owned, rules)
        if not ok:
            raise self._forbidden(name, message or escalation_message(user, missing,
                                                                      resolution_errors))

    def __call__(self, ctx, operation: str, obj: dict, old: dict | None) -> None:
        user = ctx.user
        if operation not in (CREATE, UPDATE) or user is None:
            return
        if SYSTEM_PRIVILEGED_GROUP in user.groups:  # rbacregistry.EscalationAllowed
            return
        if old is not None and only_gc_fields_changed(obj, old):
            return
        namespace = ctx.info.namespace if self.spec.namespaced else ""
        name = (obj.get("metadata") or {}).get("name", "")
        if self.binding:
            self._check_binding(user, namespace, name, obj)
        else:
            self._check_role(ctx, user, namespace, name, obj)

    def _check_role(self, ctx, user, namespace, name, obj) -> None:
        # RoleEscalationAuthorized: "escalate" on the resource the request names.
        if self._allowed(user, "escalate", namespace, self.spec.resource, ctx.info.name):
            return
        self._confirm(user, namespace, name, [r for r in obj.get("rules") or []
                                              if isinstance(r, dict)])
        if not self.spec.namespaced and isinstance(obj.get("aggregationRule"), dict):
            # An aggregation rule can gather anything: it takes "*" on everything.
            self._confirm(user, "", name, list(FULL_AUTHORITY),
                          "must have cluster-admin privileges to use the aggregationRule")

    def _check_binding(self, user, namespace, name, obj) -> None:
        from .authorizer import index_for

        ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), dict) else {}
        kind = ref.get("kind")
        if kind not in ("Role", "ClusterRole"):
            return  # validation refuses it next
        resource = "roles" if kind == "Role" else "clusterroles"
        # BindingAuthorized: "bind" on the role, in the binding's namespace.
        if self._allowed(user, "bind", namespace, resource, ref.get("name") or ""):
            return
        binding = Binding({"metadata": {"namespace": namespace}, "roleRef": ref})
        rules, error = index_for(self.server).rules_of(binding, plural=True)
        if error:
            raise errors.NotFound.for_object(GROUP, resource, ref.get("name") or "")
        self._confirm(user, namespace, name, [r.rule for r in rules])


class EscalationCheckingHandler(RESTHandler):
    """A ``RESTHandler`` whose admission step starts with an ``EscalationCheck``."""

    def __init__(self, store, server, verbs, check: EscalationCheck):
        super().__init__(store, server, verbs)
        self.check = check

    def _admitter(self, ctx, operation, name, dry_run):
        admit = super()._admitter(ctx, operation, name, dry_run)

        def checked(obj, old=None):
            self.check(ctx, operation, obj, old)
            admit(obj, old)

        return checked


def checked_handler(server, spec, strategy) -> EscalationCheckingHandler:
    """A REST handler for ``spec`` whose writes pass the escalation check first."""
    base = server.rest_handler(spec, strategy)
    return EscalationCheckingHandler(base.store, server, base.verbs,
                                     EscalationCheck(server, spec))
