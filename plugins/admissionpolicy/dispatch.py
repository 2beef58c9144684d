"""The ``ValidatingAdmissionPolicy`` admission plugin (upstream's ``policy/validating``
``dispatcher`` on ``policy/generic``).

For each request (never for policies and bindings themselves, nor the review resources
that store nothing) every policy that has bindings is matched by its ``matchConstraints``;
each of its bindings by its ``matchResources``; the binding's params are collected and the
policy evaluated once per param, with the objects in the version the policy matched
(``matchPolicy: Equivalent``). A failed validation does what the binding's
``validationActions`` say: ``Deny`` refuses the request (the first denial, in order, is
the answer), ``Warn`` sends a ``Warning`` header, ``Audit`` records the
``validation.policy.admission.k8s.io/validation_failure`` audit annotation. Configuration
errors (no params, an unknown paramKind, a selector that does not parse) and evaluation
errors deny unless the policy's ``failurePolicy`` is ``Ignore``.

A denial is upstream's: ``<resource> "<name>" is forbidden: ValidatingAdmissionPolicy 'p'
with binding 'b' denied request: <message>``, with the validation's ``reason`` and its code
(``Invalid`` and 422 by default, ``Forbidden`` 403, ``RequestEntityTooLarge`` 413), and the
message again as the one cause.
"""

from __future__ import annotations

import json

from kapiserver import errors
from kapiserver.admission import AdmissionPlugin
from kapiserver.admission.helpers import forbidden
from kapiserver_plugins.admissionwebhooks import predicates

from . import params
from .cel import Inputs
from .source import PolicySource, namespace_getter
from .validator import DENY

NAME = "ValidatingAdmissionPolicy"
FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure"
#: ``maxAuditAnnotationValueLength``
MAX_ANNOTATION_VALUE = 10 * 1024
_GROUP = "admissionregistration.k8s.io"
#: What policies never see: their own configuration (a policy must not lock it), and the
#: reviews, which store nothing (upstream's excluded admission resources).
EXCLUDED = frozenset({
    (_GROUP, "validatingadmissionpolicies"), (_GROUP, "validatingadmissionpolicybindings"),
    (_GROUP, "mutatingadmissionpolicies"), (_GROUP, "mutatingadmissionpolicybindings"),
    ("authentication.k8s.io", "tokenreviews"), ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews")})
_CODES = {"Forbidden": 403, "Unauthorized": 401, "RequestEntityTooLarge": 413,
          "Invalid": 422}


class _Denial:
    __slots__ = ("policy", "binding", "message", "reason")

    def __init__(self, policy: str, binding: str | None, message: str, reason: str = ""):
        self.policy, self.binding, self.message, self.reason = policy, binding, message, reason


class _Request:
    """What the evaluations of one request share: the objects in each version matched,
    the namespace object, and one activation per version and params object (binding the
    values to the runtime is most of an evaluation's cost)."""

    def __init__(self, plugin, attributes):
        self.plugin = plugin
        self.attributes = attributes
        self.versions: dict = {}
        self.activations: dict = {}
        self._namespace = None
        self._authz = None

    def objects(self, gvk) -> tuple:
        attributes = self.attributes
        wanted = (gvk[0], gvk[1])
        if wanted == attributes.gvk[:2]:
            return attributes.object, attributes.old_object
        found = self.versions.get(wanted)
        if found is None:
            found = self.versions[wanted] = tuple(
                predicates.convert(obj, attributes.gvk[:2], wanted)
                for obj in (attributes.object, attributes.old_object))
        return found

    def namespace(self):
        """``CreateNamespaceObject`` of the request's namespace (None for cluster-scoped
        requests and for a namespace itself); a missing namespace is its 404."""
        if self._namespace is None:
            attributes = self.attributes
            name = attributes.namespace
            if attributes.gvk == ("", "v1", "Namespace"):
                name = ""
            self._namespace = (_namespace_object(self.plugin.namespaces(name))
                               if name else False)
        return self._namespace or None

    def activation(self, gvr, gvk, param, policy):
        """The activation for ``policy`` matched as ``gvr``/``gvk`` with ``param``;
        ``namespaceObject`` is read, and the authorizer's values made, only for policies
        that use them."""
        needs_namespace, needs_authz = policy.uses_namespace, policy.uses_authorizer
        key = (gvr, gvk, id(param), needs_namespace, needs_authz)
        found = self.activations.get(key)
        if found is None:
            runtime = self.plugin.source.runtime
            attributes = self.attributes
            obj, old = self.objects(gvk)
            namespace = self.namespace() if needs_namespace else None
            request = cel_request(attributes, gvr, gvk)
            if needs_authz and self._authz is None:
                authz = runtime.authz
                self._authz = (authz.authorizer_value(attributes.user),
                               authz.request_resource(attributes.user, attributes))
            values = self._authz if needs_authz else (None, None)
            data = {"object": obj, "oldObject": old, "params": param, "request": request,
                    "namespaceObject": namespace, "authorizer": values[0],
                    "authorizer.requestResource": values[1], "variables": {}}
            found = (runtime.activation(data), Inputs(obj, old, param, request, namespace))
            # the param is kept alive with its activation, so its id stays its own
            self.activations[key] = found + (param,)
        return found[0], found[1]


def cel_request(attributes, gvr, gvk) -> dict:
    """``CreateAdmissionRequest``: the ``request`` of the expressions (the objects are
    variables of their own)."""
    from kapiserver_plugins.admissionwebhooks.review import admission_request

    request = admission_request("", attributes, gvr, gvk, None, None)
    for key in ("uid", "object", "oldObject"):
        request.pop(key, None)
    if request.get("options") is None:
        request.pop("options", None)
    return request


_NAMESPACE_META = ("name", "generateName", "namespace", "uid", "resourceVersion",
                   "generation", "creationTimestamp", "deletionTimestamp",
                   "deletionGracePeriodSeconds", "labels", "annotations", "finalizers")


def _namespace_object(namespace: dict) -> dict:
    """``CreateNamespaceObject``: the metadata policies may see, the spec and the status."""
    meta = namespace.get("metadata") or {}
    out = {"metadata": {k: meta[k] for k in _NAMESPACE_META if k in meta}}
    for key in ("spec", "status"):
        if key in namespace:
            out[key] = namespace[key]
    return out


class ValidatingAdmissionPolicy(AdmissionPlugin):
    """Enforces ValidatingAdmissionPolicies through their bindings (module docstring)."""

    name = NAME

    def __init__(self, server):
        self.server = server
        self.source = PolicySource(server)
        self.namespaces = namespace_getter(self.source)

    def validate(self, attributes) -> None:
        if (attributes.gvr[0], attributes.gvr[2]) in EXCLUDED:
            return
        hooks = self.source.hooks()
        if not hooks:
            return
        request = _Request(self, attributes)
        denials: list[_Denial] = []
        for hook in hooks:
            policy = hook.policy
            failure = policy.failure_policy

            def config_error(message, binding=None, policy=policy, failure=failure):
                if failure == "Ignore":
                    return
                what = "binding" if binding is not None else "policy"
                denials.append(_Denial(policy.name, binding,
                                       f"failed to configure {what}: {message}"))

            if policy.criteria is None:
                config_error("policy contained no match constraints, a required field")
                continue
            try:
                matched = policy.criteria.matches(attributes, self.namespaces)
            except errors.StatusError as err:
                config_error(err.message)
                continue
            if matched is None:
                continue
            if hook.error:
                config_error(hook.error)
                continue
            gvr, gvk = matched
            annotations: dict[str, list[str]] = {}
            for binding in hook.bindings:
                if binding.criteria is not None:
                    try:
                        if binding.criteria.matches(attributes, self.namespaces) is None:
                            continue
                    except errors.StatusError as err:
                        config_error(err.message, binding.name)
                        continue
                try:
                    found = params.collect(self.source.params, hook.param_kind,
                                           binding.param_ref, attributes.namespace)
                except params.ParamError as err:
                    config_error(str(err), binding.name)
                    continue
                for param in found:
                    activation, inputs = request.activation(gvr, gvk, param, policy)
                    result = policy.validate(activation, inputs)
                    self._conclude(attributes, policy, binding, result, denials, annotations)
            for key, values in annotations.items():
                attributes.add_annotation(f"{policy.name}/{key}", ", ".join(values))
        if denials:
            raise _denied(attributes, denials[0])

    @staticmethod
    def _conclude(attributes, policy, binding, result, denials, annotations) -> None:
        for index, decision in enumerate(result.decisions):
            if decision.action != DENY:
                continue
            for action in binding.actions:
                if action == "Deny":
                    denials.append(_Denial(policy.name, binding.name, decision.message,
                                           decision.reason))
                elif action == "Audit":
                    value = json.dumps([{"message": decision.message,
                                         "policy": policy.name, "binding": binding.name,
                                         "expressionIndex": index,
                                         "validationActions": binding.actions}],
                                       separators=(",", ":"))
                    attributes.add_annotation(FAILURE_ANNOTATION, value)
                elif action == "Warn":
                    attributes.add_warning(
                        f"Validation failed for ValidatingAdmissionPolicy '{policy.name}' "
                        f"with binding '{binding.name}': {decision.message}")
        for key, value in result.annotations:
            values = annotations.setdefault(key, [])
            value = value[:MAX_ANNOTATION_VALUE]
            if value not in values:
                values.append(value)
        for message in result.annotation_errors:
            denials.append(_Denial(policy.name, binding.name, message))


def _denied(attributes, denial: _Denial) -> errors.StatusError:
    if denial.binding is not None:
        message = (f"ValidatingAdmissionPolicy '{denial.policy}' with binding "
                   f"'{denial.binding}' denied request: {denial.message}")
    else:
        message = f"ValidatingAdmissionPolicy '{denial.policy}' denied request: {denial.message}"
    err = forbidden(attributes, message)
    reason = denial.reason or "Invalid"
    err.reason = reason
    err.code = _CODES.get(reason, 422)
    details = err.details if err.details is not None else {}
    details.setdefault("causes", []).append({"message": message})
    err.details = details
    return err
