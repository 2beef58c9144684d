"""Admission: plugins that mutate or validate objects on their way to storage.

Admission is not a filter: the REST handlers call the chain after decoding and
defaulting — mutating plugins first, then validation, then validating plugins
(``k8s.io/apiserver/pkg/admission``). Plugins arrive through
``kapiserver_admission_plugins`` and are ordered by ``RECOMMENDED_ORDER``.
"""

from __future__ import annotations

import logging
import time

from ..errors import ConfigError

log = logging.getLogger(__name__)

CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"

#: Upstream's ``AllOrderedPlugins`` (pkg/kubeapiserver/options/plugins.go). A plugin whose
#: name is not listed runs after the listed ones that precede ``_THIRD_PARTY_SLOT`` and
#: before the webhook, quota and deny plugins, ordered by name.
RECOMMENDED_ORDER = (
    "AlwaysAdmit", "NamespaceAutoProvision", "NamespaceLifecycle", "NamespaceExists",
    "LimitPodHardAntiAffinityTopology", "LimitRanger", "ServiceAccount", "NodeRestriction",
    "TaintNodesByCondition", "AlwaysPullImages", "ImagePolicyWebhook", "PodSecurity",
    "PodNodeSelector", "Priority", "DefaultTolerationSeconds", "PodTolerationRestriction",
    "EventRateLimit", "ExtendedResourceToleration", "DefaultStorageClass",
    "StorageObjectInUseProtection", "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize", "RuntimeClass", "CertificateApproval",
    "CertificateSigning", "ClusterTrustBundleAttest", "CertificateSubjectRestriction",
    "DefaultIngressClass", "DenyServiceExternalIPs",
    "MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook", "ResourceQuota", "AlwaysDeny",
)
_THIRD_PARTY_SLOT = RECOMMENDED_ORDER.index("MutatingAdmissionPolicy")


class AdmissionPlugin:
    """Base class of admission plugins.

    Override ``admit`` to mutate (a ``MutationInterface`` in upstream's terms) and/or
    ``validate`` to accept or refuse; raise a ``kapiserver.errors.StatusError`` to refuse.
    ``operations`` limits the plugin to some of CREATE, UPDATE, DELETE, CONNECT. A factory
    (often the class itself) with ``default_enabled = False`` must be named in
    ``--enable-admission-plugins`` to run.
    """

    name = ""
    default_enabled = True
    operations = frozenset({CREATE, UPDATE, DELETE, CONNECT})

    def handles(self, operation: str) -> bool:
        return operation in self.operations

    def admit(self, attributes) -> None:
        """Mutate ``attributes.object`` in place; the default does nothing."""

    def validate(self, attributes) -> None:
        """Refuse by raising a ``StatusError``; the default accepts."""

    @property
    def mutating(self) -> bool:
        return type(self).admit is not AdmissionPlugin.admit

    @property
    def validating(self) -> bool:
        return type(self).validate is not AdmissionPlugin.validate


def order(names) -> list[str]:
    """Return plugin names in the recommended order (see ``RECOMMENDED_ORDER``)."""
    head = [n for n in RECOMMENDED_ORDER[:_THIRD_PARTY_SLOT] if n in names]
    tail = [n for n in RECOMMENDED_ORDER[_THIRD_PARTY_SLOT:] if n in names]
    others = sorted(n for n in names if n not in RECOMMENDED_ORDER)
    return head + others + tail


def select(factories: dict, enable: list[str], disable: list[str]) -> list[str]:
    """Choose the enabled plugin names: defaults, plus ``enable``, minus ``disable``.

    Raises ``ConfigError`` naming every unknown plugin, with the valid choices.
    """
    errors = []
    for option, names in (("--enable-admission-plugins", enable),
                          ("--disable-admission-plugins", disable)):
        unknown = [n for n in names if n not in factories]
        if unknown:
            errors.append(f"{option}: unknown admission plugin(s) {', '.join(unknown)}; "
                          f"valid choices: {', '.join(order(factories)) or '(none)'}")
    both = sorted(set(enable) & set(disable))
    if both:
        errors.append(f"--enable-admission-plugins: {', '.join(both)} also in "
                      "--disable-admission-plugins")
    if errors:
        raise ConfigError(errors)
    chosen = {n for n, f in factories.items() if getattr(f, "default_enabled", True)}
    chosen = (chosen | set(enable)) - set(disable)
    return order(chosen)


class AdmissionChain:
    """The enabled plugins in order: ``admit`` runs the mutating ones, ``validate`` the rest.

    With ``metrics`` (the server's ``kapiserver.metrics.Metrics``), each plugin's time is
    observed in ``apiserver_admission_controller_admission_duration_seconds`` and each
    phase's in ``apiserver_admission_step_admission_duration_seconds``, as upstream's
    ``WithControllerMetrics`` and ``WithStepMetrics`` wrap them.
    """

    def __init__(self, plugins: list[AdmissionPlugin], metrics=None):
        self.plugins = list(plugins)
        self.mutating = [p for p in self.plugins if p.mutating]
        self.validating = [p for p in self.plugins if p.validating]
        self._controller = metrics.admission_controller if metrics is not None else None
        self._step = metrics.admission_step if metrics is not None else None
        log.info("admission plugins, in order: %s",
                 ", ".join(p.name for p in self.plugins) or "(none)")

    def admit(self, attributes) -> None:
        """Run the mutating plugins; when one of them asks for it (a mutating webhook whose
        patch changed the object sets ``attributes.should_reinvoke``), run them all once
        more with ``attributes.reinvoking`` set, as upstream's ``reinvoker``."""
        self._phase(self.mutating, "admit", attributes)

    def validate(self, attributes) -> None:
        self._phase(self.validating, "validate", attributes)

    def _phase(self, plugins, step: str, attributes) -> None:
        from .informers import caught_up_once

        # The plugins' informers ask the store for its revision once per request, not once
        # per read: every write made before the request is in the first answer.
        with caught_up_once(getattr(attributes, "caught_up", None)):
            self._run_phase(plugins, step, attributes)

    def _run_phase(self, plugins, step: str, attributes) -> None:
        operation = attributes.operation
        if self._step is None:
            for plugin in plugins:
                if plugin.handles(operation):
                    getattr(plugin, step)(attributes)
            if step == "admit" and getattr(attributes, "should_reinvoke", False):
                attributes.reinvoking = True
                for plugin in plugins:
                    if plugin.handles(operation):
                        plugin.admit(attributes)
            return
        started = time.perf_counter()
        rejected = "true"
        try:
            self._timed(plugins, step, attributes)
            if step == "admit" and getattr(attributes, "should_reinvoke", False):
                attributes.reinvoking = True
                self._timed(plugins, step, attributes)
            rejected = "false"
        finally:
            self._step.labels(step, operation, rejected).observe(
                time.perf_counter() - started)

    def _timed(self, plugins, step: str, attributes) -> None:
        operation = attributes.operation
        controller = self._controller
        for plugin in plugins:
            if not plugin.handles(operation):
                continue
            started = time.perf_counter()
            rejected = "true"
            try:
                getattr(plugin, step)(attributes)
                rejected = "false"
            finally:
                controller.labels(plugin.name, step, operation, rejected).observe(
                    time.perf_counter() - started)
