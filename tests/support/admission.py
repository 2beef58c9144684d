"""Admission plugins in-process: a server with a real SQLite store, watch cache and the
registries the plugins read (no HTTP), and the attributes of one write."""

from __future__ import annotations

import copy
import threading
from types import SimpleNamespace

from kapiserver.admission import CREATE
from kapiserver.authentication import UserInfo
from kapiserver.registry.store import RegistryStore
from kapiserver.storage.sqlite import SQLiteStore
from kapiserver.storage.watchcache import WatchCache

#: The option values the plugins read, as the defaults give them.
CONFIG = {"default_not_ready_toleration_seconds": 300,
          "default_unreachable_toleration_seconds": 300,
          "admission_control_config_file": ""}


class Config(SimpleNamespace):
    def get(self, name, default=None):
        return getattr(self, name.replace("-", "_"), default)


class AdmissionServer:
    """What admission plugins read of an APIServer: config, registries, storage, watch
    cache and (for the certificate plugins) an authorizer."""

    def __init__(self, path: str, kinds=(), authorizer=None, **config):
        self.config = Config(**dict(CONFIG, **config))
        self.storage = SQLiteStore(path)
        self.watch_cache = WatchCache(self.storage)
        self.stopping = threading.Event()
        self.authorizer = authorizer
        self.registries = {}
        for spec, strategy in kinds:
            self.registries[(spec.group, spec.resource)] = RegistryStore(
                spec, strategy(spec), self.storage, self.watch_cache.written)

    def create(self, group: str, resource: str, obj: dict, namespace: str = "") -> dict:
        return self.registries[(group, resource)].create(copy.deepcopy(obj), namespace)

    def close(self):
        self.stopping.set()
        self.watch_cache.close()
        self.watch_cache.thread.join(5)
        self.storage.close()


class Attributes:
    """One write as the REST handler hands it to admission."""

    def __init__(self, spec, obj, operation=CREATE, old=None, namespace="", name="",
                 subresource="", user=None):
        self.operation = operation
        self.object = obj
        self.old_object = old
        self.namespace = namespace
        self.name = name
        self.resource = spec
        self.subresource = subresource
        self.kind = spec.kind
        self.user = user or UserInfo("alice")
        self.dry_run = False


def run(plugin, attributes) -> None:
    """The chain's two phases for one plugin: mutate, then validate."""
    if plugin.handles(attributes.operation):
        if plugin.mutating:
            plugin.admit(attributes)
        if plugin.validating:
            plugin.validate(attributes)
