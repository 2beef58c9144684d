"""The aggregator's controllers, run by the elected worker.

* ``AutoRegistrationController`` (upstream's autoregister and CRD-registration
  controllers): a local APIService for every group version this server serves — built-in
  ones labelled ``automanaged: onstart`` with upstream's priorities, the others (custom
  resources) ``automanaged: true`` with 1000/100, removed when their group version goes.
* ``AvailabilityController`` (``AvailableConditionController``): local APIServices are
  Available (``Local``); one backed by a Service is Available when the Service, its
  Endpoints and the backend's discovery answer, else not, with upstream's reasons.
"""

from __future__ import annotations

import http.client
import logging

from kapiserver import errors
from kapiserver.controllers import Controller
from kapiserver.registry.store import RegistryStore

from . import priorities
from .apiservices import (APISERVICES, AUTOMANAGED_LABEL, APIServiceStatusStrategy,
                          APIServiceStrategy, available_condition, is_local, set_available)
from .proxy import BackendConnection, identity_headers

log = logging.getLogger(__name__)
MANAGER = "kube-apiserver"
#: How long the discovery check waits for a backend (upstream: 5 s).
CHECK_TIMEOUT = 5.0


def _stores(server):
    main = RegistryStore(APISERVICES, APIServiceStrategy(APISERVICES), server.storage,
                         server.watch_cache.written)
    status = RegistryStore(APISERVICES, APIServiceStatusStrategy(APISERVICES), server.storage,
                           server.watch_cache.written)
    return main, status


def desired_apiservices(server) -> dict[str, dict]:
    """The local APIServices this server's groups call for, by name."""
    installed = {g.name for g in server._installed_groups}
    wanted = {}
    for group in server.discovery.groups:
        if group.name == priorities.AGGREGATOR_GROUP:
            continue
        for version in group.versions:
            onstart = group.name in installed
            minimum, version_priority = (priorities.priority(group.name, version) if onstart
                                         else priorities.DEFAULT)
            spec = {"version": version, "groupPriorityMinimum": minimum,
                    "versionPriority": version_priority}
            if group.name:
                spec = {"group": group.name, **spec}
            wanted[f"{version}.{group.name}"] = {
                "apiVersion": APISERVICES.api_version, "kind": APISERVICES.kind,
                "metadata": {"name": f"{version}.{group.name}",
                             "labels": {AUTOMANAGED_LABEL: "onstart" if onstart else "true"}},
                "spec": spec}
    return wanted


class AutoRegistrationController(Controller):
    """Keep a local APIService for each served group version (module docstring)."""

    name = "apiservice-registration"
    interval = 1.0

    def __init__(self, server):
        self.server = server
        self.main, _ = _stores(server)
        self.manage = self.main.field_manager(MANAGER)

    def sync(self) -> None:
        wanted = desired_apiservices(self.server)
        existing = {item["metadata"]["name"]: item for item in self.main.list("")["items"]}
        for name, apiservice in wanted.items():
            current = existing.get(name)
            if current is None:
                try:
                    self.main.create(apiservice, manage=self.manage)
                except errors.AlreadyExists:
                    pass
                continue
            labels = (current["metadata"].get("labels") or {})
            if AUTOMANAGED_LABEL not in labels:
                continue  # someone else's: leave it be
            if current.get("spec") != apiservice["spec"] or \
                    labels.get(AUTOMANAGED_LABEL) != apiservice["metadata"]["labels"][
                        AUTOMANAGED_LABEL]:
                def mutate(obj, apiservice=apiservice):
                    obj["spec"] = apiservice["spec"]
                    obj["metadata"].setdefault("labels", {}).update(
                        apiservice["metadata"]["labels"])
                    return obj

                self._update(name, mutate)
        for name, current in existing.items():
            labels = current["metadata"].get("labels") or {}
            if labels.get(AUTOMANAGED_LABEL) == "true" and name not in wanted:
                try:
                    self.main.delete("", name)
                except errors.NotFound:
                    pass

    def _update(self, name, mutate) -> None:
        try:
            self.main.guaranteed_update("", name, mutate, manage=self.manage)
        except errors.NotFound:
            pass


class AvailabilityController(Controller):
    """Set each APIService's ``Available`` condition (module docstring)."""

    name = "apiservice-availability"
    interval = 2.0

    def __init__(self, server, registry):
        self.server = server
        self.registry = registry
        self.main, self.status = _stores(server)
        self.manage = self.status.field_manager(MANAGER, "status")

    def sync(self) -> None:
        for apiservice in self.main.list("")["items"]:
            status, reason, message = self.check(apiservice)
            current = available_condition(apiservice)
            if current is not None and (current.get("status"), current.get("reason"),
                                        current.get("message")) == (status, reason, message):
                continue

            def mutate(obj, status=status, reason=reason, message=message):
                set_available(obj, status, reason, message)
                return obj

            try:
                self.status.guaranteed_update("", apiservice["metadata"]["name"], mutate,
                                              manage=self.manage)
            except errors.NotFound:
                pass

    def check(self, apiservice: dict) -> tuple[str, str, str]:
        if is_local(apiservice):
            return "True", "Local", "Local APIServices are always available"
        spec = apiservice["spec"]
        try:
            handler = self.registry.proxy(apiservice)
        except errors.StatusError as err:
            text = err.message.removeprefix("service unavailable: ")
            if "is not present" in text:
                return "False", "ServiceNotFound", text
            if "is not listening" in text:
                return "False", "ServicePortError", text
            if "cannot find endpoints" in text:
                return "False", "EndpointsNotFound", text
            return "False", "MissingEndpoints", text
        path = f"/apis/{spec.get('group', '')}/{spec.get('version', '')}"
        url = f"https://{handler.address[0]}:{handler.address[1]}{path}"
        conn = BackendConnection(handler.address, handler.backend.server_name,
                                 handler.backend.context, read_timeout=CHECK_TIMEOUT)
        try:
            from .registry import AggregatorUser

            conn, response = handler._send(conn, "GET", path, None,
                                           identity_headers(AggregatorUser))
            response.read()
            conn.close()
        except (OSError, http.client.HTTPException) as err:
            conn.close()
            return ("False", "FailedDiscoveryCheck",
                    f"failing or missing response from {url}: {err}")
        if response.status != 200:
            return ("False", "FailedDiscoveryCheck",
                    f"failing or missing response from {url}: bad status from {url}: "
                    f"{response.status}")
        return "True", "Passed", "all checks passed"
