"""The webhooks of one kind of configuration, kept current from the worker's watch cache
(upstream's ``configuration.mutatingWebhookConfigurationManager`` and its validating twin).

Each server (each gunicorn worker) lists the configurations once, on the first request
admission sees, then has its watch cache hand it every later write under their key prefix
(``Watcher.deliver``): admitting a request never lists or reads configurations from the
store. Before answering, it only checks that the watch cache has read the store's latest
revision (waiting briefly if not), so a configuration created, changed or deleted takes
effect on every worker for the very next request, whichever worker wrote it. The configurations are
ordered by name and their webhooks keep their order, as upstream's; each is compiled once
(selectors parsed, match conditions compiled) and reused until its configuration changes.
"""

from __future__ import annotations

import logging
import threading

from kapiserver.admission.informers import catch_up
from kapiserver.apimachinery import labels
from kapiserver.registry.feed import ResourceFeed

from .conditions import MatchConditions

log = logging.getLogger(__name__)

GROUP = "admissionregistration.k8s.io"


class Webhook:
    """One webhook of a configuration (upstream's ``WebhookAccessor``)."""

    __slots__ = ("uid", "configuration", "name", "hook", "mutating", "rules",
                 "namespace_selector", "object_selector", "selector_error", "match_policy",
                 "failure_policy", "side_effects", "timeout", "reinvoke", "review_versions",
                 "client_config", "conditions")

    def __init__(self, configuration: str, index: int, hook: dict, mutating: bool):
        self.uid = f"{configuration}/{hook.get('name', '')}/{index}"
        self.configuration = configuration
        self.name = hook.get("name", "")
        self.hook = hook
        self.mutating = mutating
        self.rules = [r for r in hook.get("rules") or [] if isinstance(r, dict)]
        self.selector_error = ""
        self.namespace_selector = self._selector(hook.get("namespaceSelector"))
        self.object_selector = self._selector(hook.get("objectSelector"))
        self.match_policy = hook.get("matchPolicy") or "Equivalent"
        self.failure_policy = hook.get("failurePolicy") or "Fail"
        self.side_effects = hook.get("sideEffects")
        self.timeout = hook.get("timeoutSeconds")
        self.reinvoke = mutating and hook.get("reinvocationPolicy") == "IfNeeded"
        self.review_versions = list(hook.get("admissionReviewVersions") or ())
        self.client_config = hook.get("clientConfig") or {}
        self.conditions = MatchConditions(hook.get("matchConditions") or [],
                                          self.failure_policy)

    def _selector(self, value):
        try:
            return labels.selector_from_label_selector(value or {})
        except labels.SelectorError as err:
            # Stored configurations were validated; one that is not fails its requests
            # with an internal error, as upstream's GetParsedNamespaceSelector.
            self.selector_error = str(err)
            return labels.nothing()

    @property
    def ignores_failures(self) -> bool:
        return self.failure_policy == "Ignore"


class WebhookSource:
    """The webhooks of the mutating or the validating configurations of one server."""

    def __init__(self, server, mutating: bool):
        self.server = server
        self.mutating = mutating
        self.resource = ("mutatingwebhookconfigurations" if mutating
                         else "validatingwebhookconfigurations")
        #: configuration name -> (resourceVersion, [Webhook])
        self._configurations: dict[str, tuple[str, list[Webhook]]] = {}
        self._webhooks: list[Webhook] = []
        self._feed = ResourceFeed(server, "webhook configurations", replaced=self._replace,
                                  updated=self._update)
        self._lock = threading.Lock()

    def webhooks(self) -> list[Webhook]:
        """Every webhook, configurations ordered by name (a list never changed in place)."""
        if not self._feed.live():
            self._start()
        self._sync()
        return self._webhooks

    def _sync(self) -> None:
        """Wait (briefly) until the watch cache has read the store's latest write, so that
        a request sees a configuration written just before, by any worker: one look at the
        store's revision, as the admission informers take."""
        registry = self.server.registries.get((GROUP, self.resource))
        if registry is not None:
            catch_up(self.server, registry.storage, "webhook configurations")

    def _start(self) -> None:
        with self._lock:
            feed = self._feed
            if feed.live():
                return
            if feed.watcher is not None:
                log.info("webhook configurations (%s): watch ended (%s); listing again",
                         self.resource, feed.watcher.close_reason)
            registry = self.server.registries.get((GROUP, self.resource))
            if registry is None:  # the group is not served: there are no webhooks
                return
            feed.load(registry)

    def _replace(self, objects: dict) -> None:
        self._configurations = {}
        for name, obj in objects.items():
            self._configurations[name] = self._compile(name, obj)
        self._publish()

    def _update(self, name: str, obj) -> None:
        if obj is None:
            self._configurations.pop(name, None)
        else:
            self._configurations[name] = self._compile(name, obj)
        self._publish()

    def _compile(self, name: str, obj: dict) -> tuple[str, list[Webhook]]:
        version = (obj.get("metadata") or {}).get("resourceVersion", "")
        known = self._configurations.get(name)
        if known is not None and known[0] == version:
            return known
        hooks = [Webhook(name, i, hook, self.mutating)
                 for i, hook in enumerate(obj.get("webhooks") or []) if isinstance(hook, dict)]
        return version, hooks

    def _publish(self) -> None:
        self._webhooks = [hook for name in sorted(self._configurations)
                          for hook in self._configurations[name][1]]
