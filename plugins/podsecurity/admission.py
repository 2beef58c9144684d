"""The PodSecurity admission plugin (``plugin/pkg/admission/security/podsecurity``).

Pods are checked against their namespace's policy: ``enforce`` refuses with a 403
(``pods "x" is forbidden: violates PodSecurity "restricted:latest": …``), ``warn`` adds a
``Warning`` header (``would violate PodSecurity …``) and ``audit`` an audit annotation
(``pod-security.kubernetes.io/audit-violations``). The pod templates of workload resources
(Deployments, Jobs, …) are warned and audited but never refused, as upstream. A namespace
whose labels are invalid is refused (422); one whose enforce level is made stricter has
its existing pods checked, and the answer warns of those that would now be refused.
Exemptions (users, namespaces, runtime classes) and defaults come from the
``PodSecurityConfiguration`` in ``--admission-control-config-file``.
"""

from __future__ import annotations

import logging
import time

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.config import plugin_configuration
from kapiserver.admission.informers import informers_for
from kapiserver.apimachinery.field_errors import new_invalid

from .checks import AggregateResult, Evaluator
from .config import parse_configuration
from .policy import (AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL, AUDIT_VIOLATIONS_ANNOTATION,
                     ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL, ENFORCED_POLICY_ANNOTATION,
                     EXEMPTION_REASON_ANNOTATION, LABEL_PREFIX, LATEST_VERSION, PRIVILEGED,
                     WARN_LEVEL_LABEL, WARN_VERSION_LABEL, LevelVersion, Policy,
                     compare_levels, policy_to_evaluate)

log = logging.getLogger(__name__)

NAME = "PodSecurity"
#: ``defaultNamespaceMaxPodsToCheck`` and ``defaultNamespacePodCheckTimeout``.
NAMESPACE_MAX_PODS_TO_CHECK = 3000
NAMESPACE_POD_CHECK_TIMEOUT = 1.0

#: Resources whose objects embed a pod template, and where the template is.
POD_SPEC_RESOURCES = {
    ("", "replicationcontrollers"): ("spec", "template"),
    ("", "podtemplates"): ("template",),
    ("apps", "replicasets"): ("spec", "template"),
    ("apps", "deployments"): ("spec", "template"),
    ("apps", "statefulsets"): ("spec", "template"),
    ("apps", "daemonsets"): ("spec", "template"),
    ("batch", "jobs"): ("spec", "template"),
    ("batch", "cronjobs"): ("spec", "jobTemplate", "spec", "template"),
}
#: Pod subresources that cannot change the pod's spec (``ignoredPodSubresources``).
IGNORED_POD_SUBRESOURCES = frozenset({"exec", "attach", "binding", "eviction", "log",
                                      "portforward", "proxy", "status"})


class _Response:
    """What one evaluation decided: ``error`` (a ``StatusError``) refuses; ``warnings`` and
    ``annotations`` (keys without the ``pod-security.kubernetes.io/`` prefix) are added."""

    def __init__(self, error=None, warnings=(), annotations=None):
        self.error = error
        self.warnings = list(warnings)
        self.annotations = dict(annotations or {})


ALLOWED = _Response()


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _meta(obj) -> dict:
    return _dict(_dict(obj).get("metadata"))


def _aggregate_error(errs) -> str:
    """``field.ErrorList.ToAggregate().Error()``: one message, or ``[a, b]``."""
    messages = []
    for err in errs:
        text = str(err)
        if text not in messages:
            messages.append(text)
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def is_significant_pod_update(pod: dict, old: dict) -> bool:
    """``isSignificantPodUpdate``: containers added or removed, an image changed, an
    ephemeral container added or its image changed."""
    spec, old_spec = _dict(pod.get("spec")), _dict(old.get("spec"))
    for key in ("containers", "initContainers"):
        new_list = spec.get(key) if isinstance(spec.get(key), list) else []
        old_list = old_spec.get(key) if isinstance(old_spec.get(key), list) else []
        if len(new_list) != len(old_list):
            return True
        if any(_dict(a).get("image") != _dict(b).get("image")
               for a, b in zip(new_list, old_list)):
            return True
    old_ephemeral = {_dict(c).get("name"): _dict(c)
                     for c in old_spec.get("ephemeralContainers") or [] if isinstance(c, dict)}
    for container in spec.get("ephemeralContainers") or []:
        container = _dict(container)
        previous = old_ephemeral.get(container.get("name"))
        if previous is None or previous.get("image") != container.get("image"):
            return True
    return False


def pod_template(obj: dict, path: tuple) -> tuple[dict | None, dict | None]:
    """``ExtractPodSpec`` of a workload: the template's metadata and spec, or
    ``(None, None)`` when the object has no template (a ReplicationController's is
    optional)."""
    node = obj
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    if not isinstance(node, dict):
        return None, None
    return _dict(node.get("metadata")), _dict(node.get("spec"))


class PodSecurity(AdmissionPlugin):
    """Enforce, audit and warn of the Pod Security Standards (see the module docstring)."""

    name = NAME
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server):
        self.server = server
        self.configuration = parse_configuration(plugin_configuration(server.config, NAME))
        self.defaults = self.configuration.defaults
        self.evaluator = Evaluator()

    # -- lookups ---------------------------------------------------------------------------

    def _namespace(self, name: str) -> dict:
        # Upstream reads a namespace lister; the informer is caught up with the request.
        obj = informers_for(self.server).informer("", "namespaces").get("", name)
        if obj is None:
            raise errors.NotFound.for_object("", "namespaces", name)
        return obj

    def _pods(self, namespace: str) -> list[dict]:
        registry = self.server.registries.get(("", "pods"))
        return [] if registry is None else registry.list(namespace)["items"]

    def exempt_namespace(self, namespace: str) -> bool:
        return bool(namespace) and namespace in self.configuration.namespaces

    def exempt_user(self, username: str) -> bool:
        return bool(username) and username in self.configuration.usernames

    def exempt_runtime_class(self, name) -> bool:
        return bool(name) and name in self.configuration.runtime_classes

    def policy(self, labels) -> tuple[Policy, list]:
        return policy_to_evaluate(labels, self.defaults)

    # -- the plugin ------------------------------------------------------------------------

    def validate(self, attributes) -> None:
        group, resource = self._group_resource(attributes)
        if (group, resource) == ("", "namespaces"):
            response = self.validate_namespace(attributes)
        elif (group, resource) == ("", "pods"):
            response = self.validate_pod(attributes)
        elif (group, resource) in POD_SPEC_RESOURCES:
            response = self.validate_pod_controller(attributes, POD_SPEC_RESOURCES[
                (group, resource)])
        else:
            return
        for warning in response.warnings:
            attributes.add_warning(warning)
        for key, value in response.annotations.items():
            attributes.add_annotation(LABEL_PREFIX + key, value)
        if response.error is not None:
            raise response.error

    @staticmethod
    def _group_resource(attributes) -> tuple[str, str]:
        gvr = getattr(attributes, "gvr", None)
        if gvr:
            return gvr[0], gvr[2]
        return attributes.resource.group, attributes.resource.resource

    @staticmethod
    def _name(attributes) -> str:
        return attributes.name or str(_meta(attributes.object).get("name") or "")

    def _forbidden(self, attributes, message: str) -> errors.Forbidden:
        group, resource = self._group_resource(attributes)
        return errors.Forbidden.for_resource(group, resource, self._name(attributes), message)

    # -- namespaces ------------------------------------------------------------------------

    def validate_namespace(self, attributes) -> _Response:
        if attributes.subresource:
            return ALLOWED
        namespace = _dict(attributes.object)
        labels = _meta(namespace).get("labels")
        new_policy, new_errs = self.policy(labels)
        if attributes.operation == CREATE:
            if new_errs:
                return _Response(new_invalid("Namespace", "", self._name(attributes), new_errs))
            if self.exempt_namespace(attributes.namespace):
                return _Response(warnings=self._exempt_warning(namespace, new_policy))
            return ALLOWED
        old_policy, old_errs = self.policy(_meta(attributes.old_object).get("labels"))
        if new_errs and (not old_errs or new_errs != old_errs):
            return _Response(new_invalid("Namespace", "", self._name(attributes), new_errs))
        # Existing pods are checked only when the enforce level becomes stricter or its
        # version changes to a non-privileged level.
        if new_policy.enforce == old_policy.enforce or new_policy.enforce.level == PRIVILEGED:
            return ALLOWED
        if new_policy.enforce.version == old_policy.enforce.version and \
                compare_levels(new_policy.enforce.level, old_policy.enforce.level) < 1:
            return ALLOWED
        if self.exempt_namespace(attributes.namespace):
            return _Response(warnings=self._exempt_warning(namespace, new_policy))
        return _Response(warnings=self.evaluate_pods_in_namespace(
            _meta(namespace).get("name", ""), new_policy.enforce))

    def _exempt_warning(self, namespace: dict, policy: Policy) -> list[str]:
        """``exemptNamespaceWarning``: the policy an exempt namespace's labels ask for is
        ignored."""
        if policy.fully_privileged() or policy.equivalent(self.defaults):
            return []
        labels = _dict(_meta(namespace).get("labels"))
        parts = []
        for mode, level_label, version_label in (
                ("enforce", ENFORCE_LEVEL_LABEL, ENFORCE_VERSION_LABEL),
                ("audit", AUDIT_LEVEL_LABEL, AUDIT_VERSION_LABEL),
                ("warn", WARN_LEVEL_LABEL, WARN_VERSION_LABEL)):
            lv = getattr(policy, mode)
            if lv.level != PRIVILEGED and (level_label in labels or version_label in labels):
                parts.append(f"{mode}={lv}")
        name = _meta(namespace).get("name", "")
        return [f'namespace "{name}" is exempt from Pod Security, and the policy '
                f"({', '.join(parts)}) will be ignored"]

    def evaluate_pods_in_namespace(self, namespace: str, enforce: LevelVersion) -> list[str]:
        """``EvaluatePodsInNamespace``: warnings naming the existing pods the new enforce
        level would refuse (grouped by reason), checked for at most a second."""
        deadline = time.monotonic() + NAMESPACE_POD_CHECK_TIMEOUT
        try:
            pods = self._pods(namespace)
        except errors.StatusError as err:
            log.warning("PodSecurity: listing pods of namespace %s failed: %s", namespace,
                        err.message)
            return ["failed to list pods while checking new PodSecurity enforce level"]
        pods = self._prioritize(pods)
        total = len(pods)
        pods = pods[:NAMESPACE_MAX_PODS_TO_CHECK]
        checked = len(pods)
        first: dict[str, str] = {}
        counts: dict[str, int] = {}
        order: list[str] = []
        for index, pod in enumerate(pods):
            result = self.evaluator.evaluate(enforce, _meta(pod), _dict(pod.get("spec")))
            if not result.allowed:
                warning = result.forbidden_reason()
                name = _meta(pod).get("name", "")
                if warning not in counts:
                    first[warning], counts[warning] = name, 0
                    order.append(warning)
                elif name < first[warning]:
                    first[warning] = name
                counts[warning] += 1
            if time.monotonic() > deadline:
                checked = index + 1
                break
        warnings = []
        if checked < total:
            warnings.append(f"new PodSecurity enforce level only checked against the first "
                            f"{checked} of {total} existing pods")
        if order:
            warnings.append(f'existing pods in namespace "{namespace}" violate the new '
                            f'PodSecurity enforce level "{enforce}"')
        decorated = []
        for warning in order:
            count = counts[warning]
            if count == 1:
                decorated.append(f"{first[warning]}: {warning}")
            elif count == 2:
                decorated.append(f"{first[warning]} (and 1 other pod): {warning}")
            else:
                decorated.append(f"{first[warning]} (and {count - 1} other pods): {warning}")
        return warnings + sorted(decorated)

    def _prioritize(self, pods: list[dict]) -> list[dict]:
        """``prioritizePods``: pods of exempt runtime classes dropped; one pod per
        controller first, the other replicas after."""
        first, duplicates, seen = [], [], set()
        for pod in pods:
            if self.exempt_runtime_class(_dict(pod.get("spec")).get("runtimeClassName")):
                continue
            controller = next((ref for ref in _meta(pod).get("ownerReferences") or []
                               if isinstance(ref, dict) and ref.get("controller") is True), None)
            if controller is None:
                first.append(pod)
            elif controller.get("uid") in seen:
                duplicates.append(pod)
            else:
                seen.add(controller.get("uid"))
                first.append(pod)
        return first + duplicates

    # -- pods ------------------------------------------------------------------------------

    def validate_pod(self, attributes) -> _Response:
        if attributes.subresource in IGNORED_POD_SUBRESOURCES:
            return ALLOWED
        if self.exempt_namespace(attributes.namespace):
            return _Response(annotations={EXEMPTION_REASON_ANNOTATION: "namespace"})
        if self.exempt_user(self._username(attributes)):
            return _Response(annotations={EXEMPTION_REASON_ANNOTATION: "user"})
        try:
            namespace = self._namespace(attributes.namespace)
        except errors.StatusError as err:
            message = f"failed to lookup namespace {errors.go_quote(attributes.namespace)}"
            error = errors.InternalError.wrap(message)
            return _Response(error, annotations={"error": f"{error.message}: {err.message}"})
        policy, policy_errs = self.policy(_meta(namespace).get("labels"))
        if not policy_errs and policy.fully_privileged():
            return _Response(annotations={ENFORCED_POLICY_ANNOTATION:
                                          str(LevelVersion(PRIVILEGED, LATEST_VERSION))})
        pod = _dict(attributes.object)
        if pod.get("kind", "Pod") != "Pod":
            return _Response(errors.BadRequest("failed to decode pod"),
                             annotations={"error": "failed to decode pod"})
        if attributes.operation == UPDATE and not is_significant_pod_update(
                pod, _dict(attributes.old_object)):
            return ALLOWED
        return self.evaluate_pod(attributes, policy, policy_errs, _meta(pod),
                                 _dict(pod.get("spec")), enforce=True)

    def validate_pod_controller(self, attributes, template_path: tuple) -> _Response:
        if attributes.subresource:
            return ALLOWED
        if self.exempt_namespace(attributes.namespace):
            return _Response(annotations={EXEMPTION_REASON_ANNOTATION: "namespace"})
        if self.exempt_user(self._username(attributes)):
            return _Response(annotations={EXEMPTION_REASON_ANNOTATION: "user"})
        try:
            namespace = self._namespace(attributes.namespace)
        except errors.StatusError as err:
            return _Response(annotations={"error": f"failed to lookup namespace "
                                                   f"{errors.go_quote(attributes.namespace)}: "
                                                   f"{err.message}"})
        policy, policy_errs = self.policy(_meta(namespace).get("labels"))
        if not policy_errs and policy.warn.level == PRIVILEGED and \
                policy.audit.level == PRIVILEGED:
            return ALLOWED
        meta, spec = pod_template(_dict(attributes.object), template_path)
        if meta is None and spec is None:
            return ALLOWED
        return self.evaluate_pod(attributes, policy, policy_errs, meta, spec, enforce=False)

    @staticmethod
    def _username(attributes) -> str:
        user = attributes.user
        return getattr(user, "name", "") or "" if user is not None else ""

    def evaluate_pod(self, attributes, policy: Policy, policy_errs, meta: dict, spec: dict,
                     enforce: bool) -> _Response:
        """``EvaluatePod``: enforce (pods only), audit and warn, each level evaluated once."""
        if self.exempt_runtime_class(spec.get("runtimeClassName")):
            return _Response(annotations={EXEMPTION_REASON_ANNOTATION: "runtimeClass"})
        annotations: dict[str, str] = {}
        if policy_errs:
            annotations["error"] = f"Failed to parse policy: {_aggregate_error(policy_errs)}"
        results: dict[LevelVersion, AggregateResult] = {}

        def result_for(lv: LevelVersion) -> AggregateResult:
            if lv not in results:
                results[lv] = self.evaluator.evaluate(lv, meta, spec)
            return results[lv]

        error = None
        if enforce:
            annotations[ENFORCED_POLICY_ANNOTATION] = str(policy.enforce)
            result = result_for(policy.enforce)
            if not result.allowed:
                error = self._forbidden(attributes, f'violates PodSecurity "{policy.enforce}": '
                                                    f"{result.forbidden_detail()}")
        audit = result_for(policy.audit)
        if not audit.allowed:
            annotations[AUDIT_VIOLATIONS_ANNOTATION] = (
                f'would violate PodSecurity "{policy.audit}": {audit.forbidden_detail()}')
        warnings = []
        if error is None:
            warn = result_for(policy.warn)
            if not warn.allowed:
                warnings.append(f'would violate PodSecurity "{policy.warn}": '
                                f"{warn.forbidden_detail()}")
        return _Response(error, warnings, annotations)
