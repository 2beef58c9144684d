"""APIServer: the server object that owns every component and all per-server state.

Built once per worker from a validated ``Config`` and a ``PluginManager``: it calls each
factory hook once, builds plain components from the answers, composes them (authenticator
union, authorizer union, admission chain, delegation chain) and wraps them in the filter
chain. Nothing here lives at module level, so two servers in one process stay apart.
"""

from __future__ import annotations

import logging
import os
import threading

from flask import Response

from .. import admission
from ..authentication import union as authn_union
from ..authorization import union as authz_union
from ..controllers import ALL as ALL_CONTROLLERS
from ..controllers import select as select_controllers
from ..controllers.manager import LEASE_KEY, ControllerManager
from ..endpoints.discovery import Discovery
from ..endpoints.handlers import RESTHandler
from ..endpoints.responses import raw_json_response
from ..errors import ConfigError
from ..metrics import Metrics
from ..openapi.builder import OpenAPIBuilder
from ..openapi.service import OpenAPIService
from ..registry.keys import migrate_legacy_key
from ..registry.store import RegistryStore
from ..storage.compactor import Compactor
from ..storage.expiry import Expirer
from ..storage.sqlite import SQLiteStore
from ..storage.wakeups import PeerWakeups
from ..storage.watchcache import WatchCache
from ..version import version_info
from . import filters, healthz, instrumentation
from .auditing import Auditor
from .apigroups import ResourceRoutes
from .blocking import offload
from .delegation import DelegationChain
from .bootstrapping import one_at_a_time

log = logging.getLogger(__name__)

HEALTH_PATHS = ("healthz", "livez", "readyz")
#: Seconds between two sweeps for storage keys whose TTL ran out (events).
EXPIRY_INTERVAL = 1.0
#: Logged (at info) by each worker once its post-start hooks have all finished.
READY_LOG = "worker ready"


def open_storage(config):
    """The store ``--storage-backend`` names: etcd3, or the embedded SQLite file.

    Both keep keys in upstream's layout. A SQLite data dir written before kapiserver
    used it (``/registry/apps/deployments/…``) has its keys renamed once, on first open.
    etcd's client is cooperative under gevent (grpc's gevent support): no thread pool.
    """
    os.makedirs(config.data_dir, exist_ok=True)
    if getattr(config, "storage_backend", "sqlite") == "etcd3":
        from ..storage.etcd import EtcdStore

        return EtcdStore(config.etcd_servers, prefix=config.etcd_prefix,
                         ca_file=config.etcd_cafile, cert_file=config.etcd_certfile,
                         key_file=config.etcd_keyfile, timeout=config.request_timeout,
                         lease_reuse=config.lease_reuse_duration_seconds)
    store = SQLiteStore(os.path.join(config.data_dir, "kapiserver.db"),
                        synchronous=getattr(config, "sqlite_synchronous", "full"))
    moved = store.migrate_keys("upstream-key-layout", migrate_legacy_key)
    if moved:
        log.info("storage: %d key(s) moved to kube-apiserver's key layout", moved)
    return offload(store)


class APIServer:
    """One kapiserver: components built from plugins, the filter chain and the delegates.

    ``handle(request)`` serves one Flask request. ``post_start_hooks`` run after
    ``start()``; readiness waits for them. ``begin_shutdown()`` fails readiness and tells
    long-running requests to end (``stopping`` is set).
    """

    def __init__(self, config, pm):
        self.config = config
        self.pm = pm
        self.stopping = threading.Event()
        self.post_start_hooks: list[healthz.PostStartHook] = []
        self.health_checks: list[healthz.HealthCheck] = [
            healthz.HealthCheck("ping", healthz.ping),
            healthz.HealthCheck("log", healthz.log_check),
        ]
        self._version = version_info()
        #: This server's metrics, summed across the workers at /metrics.
        self.metrics = Metrics.for_data_dir(config.data_dir)

        authenticators = {name: factory(self) for name, factory in
                          pm.collect("kapiserver_authenticators", config=config).items()}
        self.authenticator = authn_union.build(
            {n: a for n, a in authenticators.items() if a is not None},
            config.authenticator_order or None)

        authorizer_factories = pm.collect("kapiserver_authorizers", config=config)
        self.authorizer = authz_union.build(
            config.authorization_mode,
            {mode: authorizer_factories[mode](self) for mode in config.authorization_mode})

        admission_factories = pm.collect("kapiserver_admission_plugins", config=config)
        enabled = admission.select(admission_factories, config.enable_admission_plugins,
                                   config.disable_admission_plugins)
        plugins = []
        for name in enabled:
            plugin = admission_factories[name](self)
            plugin.name = plugin.name or name
            plugins.append(plugin)
        self.admission = admission.AdmissionChain(plugins, self.metrics)

        backends = pm.collect("kapiserver_audit_backends", config=config)
        self.audit_backends = [backends[name](self) for name in sorted(backends)]
        #: The audit policy and backends (None: nothing is audited).
        self.auditor = Auditor.build(self)

        self.storage = open_storage(config)
        health = getattr(self.storage, "health", None)
        if health is not None:  # etcd: upstream's "etcd" check, a quorum read
            timeout = config.etcd_healthcheck_timeout
            self.add_health_check("etcd", lambda: health(timeout))
        # Wake-ups tell the other workers of a SQLite file to read its log; etcd's watch
        # tells every worker of every host by itself.
        self.wakeups = (PeerWakeups.create(os.path.join(config.data_dir, "kapiserver.db"))
                        if getattr(self.storage, "event_stream", None) is None else None)
        self.watch_cache = WatchCache(self.storage, peers=self.wakeups)
        #: (group, resource) -> RegistryStore, filled as API groups are installed.
        self.registries = {}
        #: owner -> the API groups it serves beyond the installed ones (custom resources).
        self._dynamic_groups: dict[str, list] = {}
        #: Called before discovery and OpenAPI answer, so they include what another worker
        #: has just registered (``add_discovery_refresher``).
        self._discovery_refreshers: list = []
        self._discovery_order = None
        #: What the namespace controller deletes besides this server's stored objects
        #: (``add_namespace_content``).
        self.namespace_content: list = []
        #: Providers of requests to group versions served elsewhere, for the controllers
        #: inside the server (``add_remote_api``).
        self.remote_apis: list = []
        # pluggy's call order is registration order: sort, the core group first.
        installers = sorted((i for result in pm.hook.kapiserver_api_groups(config=config)
                             for i in (result or [])), key=lambda i: (i.group != "", i.group))
        delegate_factories = pm.collect("kapiserver_delegates", config=config)
        chosen = list(config.delegation)
        orphans = sorted({i.delegate for i in installers} - set(chosen))
        if orphans:
            raise ConfigError(f"--delegation: API groups need delegate(s) {', '.join(orphans)} "
                              "which are not in the chain")
        delegates, all_groups = [], []
        for name in chosen:
            groups = [i.install(self) for i in installers if i.delegate == name]
            ResourceRoutes(groups)  # rejects a group version installed twice
            all_groups += groups
            delegate = delegate_factories[name](self, groups)
            delegate.name = delegate.name or name
            delegates.append(delegate)
        self.delegation = DelegationChain(delegates)
        self._installed_groups = sorted(all_groups, key=lambda g: g.name != "")
        self.discovery = Discovery(self._installed_groups,
                                   f"{config.bind_address}:{config.secure_port}")
        #: Builds /openapi/v2 and /openapi/v3 from the groups discovery lists, on the first
        #: request; whoever changes the installed groups calls ``openapi.invalidate()``.
        self.openapi = OpenAPIBuilder(lambda: self.discovery.groups, self._version,
                                      issuer_discovery=True)
        self._openapi_service = OpenAPIService(self.openapi)
        controllers = pm.collect("kapiserver_controllers", config=config)
        chosen = select_controllers(controllers, config.get("controllers", [ALL_CONTROLLERS]))
        log.info("controllers: %s", ", ".join(chosen) or "(none)")
        self.controllers = ControllerManager(
            self.storage, LEASE_KEY, [controllers[name](self) for name in chosen],
            self.stopping)
        instrumentation.install_collectors(self)
        self.handler = filters.build(self, self._serve_generic)

    def rest_handler(self, spec, strategy, subresource: str = "", verbs=None,
                     registry_class=RegistryStore):
        """A ``ResourceHandler`` serving ``spec`` (or its ``subresource``) from storage.

        A subresource handler shares the resource's storage keys; its strategy decides
        which part of the object it writes. ``verbs`` default to the spec's own;
        ``registry_class`` is a ``RegistryStore`` subclass for a resource whose verbs
        differ from the generic ones (upstream's custom ``REST`` types).
        """
        registry = registry_class(spec, strategy, self.storage, self.watch_cache.written)
        if not subresource:
            self.registries[(spec.group, spec.resource)] = registry
        return RESTHandler(registry, self, verbs)

    def set_dynamic_groups(self, owner: str, groups: list) -> None:
        """Serve ``groups`` in discovery and OpenAPI beside the installed ones.

        ``owner`` (e.g. ``"apiextensions"``) replaces its previous groups; the groups are
        listed after the installed ones, in the order given. Routing requests to them is
        the owner's delegate's business.
        """
        self._dynamic_groups[owner] = list(groups)
        self._rebuild_discovery()

    def set_discovery_order(self, order) -> None:
        """Order discovery with ``order(groups) -> groups`` (the aggregator's APIService
        priorities); it may reorder versions and add ``RemoteGroup`` entries."""
        self._discovery_order = order
        self._rebuild_discovery()

    def _rebuild_discovery(self) -> None:
        groups = self._installed_groups + [g for owned in self._dynamic_groups.values()
                                           for g in owned]
        if self._discovery_order is not None:
            groups = self._discovery_order(groups)
        self.discovery = Discovery(groups,
                                   f"{self.config.bind_address}:{self.config.secure_port}")
        self.openapi.invalidate()

    def add_discovery_refresher(self, refresh) -> None:
        """Call ``refresh()`` before answering discovery or OpenAPI requests: it brings
        this worker's dynamic groups up to date with the store (bounded wait)."""
        self._discovery_refreshers.append(refresh)

    def add_namespace_content(self, provider) -> None:
        """Have the namespace controller also delete ``provider``'s objects when a
        namespace goes (a ``kapiserver.controllers.namespace_content.NamespaceContent``:
        namespaced resources served elsewhere, as the aggregator's extension servers)."""
        self.namespace_content.append(provider)

    def add_remote_api(self, provider) -> None:
        """Let the controllers inside the server reach group versions another server
        serves through ``provider`` (a ``kapiserver.controllers.remote.RemoteAPI``: the
        aggregator's proxies to its APIServices' backends)."""
        self.remote_apis.append(provider)

    def _refresh_discovery(self) -> None:
        for refresh in self._discovery_refreshers:
            refresh()

    # -- lifecycle -----------------------------------------------------------------------

    def add_post_start_hook(self, name: str, fn) -> None:
        """Run ``fn(server)`` once the server starts; ``/readyz`` fails until it returns."""
        if any(h.name == name for h in self.post_start_hooks):
            raise ConfigError(f"post-start hook {name!r} added twice")
        self.post_start_hooks.append(healthz.PostStartHook(name, fn))

    def taking_turns(self, name: str):
        """A context manager the workers of this data dir hold one at a time: for
        post-start hooks that write bootstrap objects, so that one worker writes them and
        the others then find them there (``kapiserver.server.bootstrapping``)."""
        return one_at_a_time(os.path.join(self.config.data_dir, "turns", name))

    def add_health_check(self, name: str, fn) -> None:
        """Add a check to ``/healthz``, ``/livez`` and ``/readyz`` (``fn`` returns an error or None)."""
        self.health_checks.append(healthz.HealthCheck(name, fn))

    def start(self) -> None:
        """Start the compactor and the post-start hooks, each in a background thread."""
        Compactor(self.storage, self.config.etcd_compaction_interval, self.stopping).start()
        self.metrics.start(self.stopping)
        Expirer(self.storage, EXPIRY_INTERVAL, self.stopping).start()
        self.controllers.start()
        for hook in self.post_start_hooks:
            threading.Thread(target=hook.run, args=(self,), name=f"poststarthook/{hook.name}",
                             daemon=True).start()
        threading.Thread(target=self._log_when_ready, name="ready-log", daemon=True).start()

    def _log_when_ready(self) -> None:
        # One line per worker: with several workers, /readyz answering 200 says only that
        # the worker which took that connection is ready.
        for hook in self.post_start_hooks:
            hook.done.wait()
        log.info("%s (pid %d): every post-start hook finished", READY_LOG, os.getpid())

    def begin_shutdown(self) -> None:
        """Fail readiness and ask long-running requests to end."""
        if not self.stopping.is_set():
            log.info("shutting down: readiness now fails, long-running requests end")
            self.stopping.set()

    def close(self) -> None:
        self.begin_shutdown()
        self.controllers.stop()
        for delegate in self.delegation.delegates:
            delegate.close()
        for backend in self.audit_backends:
            backend.shutdown()
        self.watch_cache.close()
        if self.wakeups is not None:
            self.wakeups.close()
        self.storage.close()
        self.metrics.close()

    # -- serving -------------------------------------------------------------------------

    def handle(self, request):
        """Serve one request through the filter chain."""
        return self.handler(request)

    def _checks(self, kind: str) -> list:
        checks = list(self.health_checks)
        checks += [healthz.HealthCheck(f"poststarthook/{h.name}", h.check)
                   for h in healthz.hook_order(self.post_start_hooks)]
        if kind == "readyz":
            checks.append(healthz.HealthCheck("shutdown", self._shutdown_check))
        return checks

    def _shutdown_check(self):
        return "process is shutting down" if self.stopping.is_set() else None

    def _serve_generic(self, ctx):
        """The outermost server's own paths (health, version, OpenAPI), then the delegates."""
        path = ctx.request.path
        head, _, rest = path.lstrip("/").partition("/")
        if head in HEALTH_PATHS:
            return healthz.serve(head, self._checks(head), rest, ctx.request.args,
                                 self.metrics.observe_healthcheck)
        if path in ("/metrics", "/metrics/slis"):
            return instrumentation.serve_metrics(self, ctx, slis=path == "/metrics/slis")
        if path in ("/version", "/version/"):  # the Python client asks for /version/
            return raw_json_response(self._version)
        if path in ("/.well-known/openid-configuration", "/openid/v1/jwks"):
            from .oidc import serve_issuer_discovery  # cryptography: imported when asked
            return serve_issuer_discovery(self, path)
        if head == "openapi":
            self._refresh_discovery()
            answer = self._openapi_service.serve(ctx.request.method, path, ctx.request.args,
                                                 ctx.request.headers)
            if answer is not None:
                response = Response(answer.body, answer.status, headers=answer.headers)
                if answer.header("Content-Type") is None:
                    del response.headers["Content-Type"]  # Go sends none with no body
                return response
        if head in ("api", "apis") and ctx.request.method in ("GET", "HEAD"):
            if head == "apis" and path.rstrip("/").count("/") <= 3:
                self._refresh_discovery()
            aggregated = self.discovery.aggregated(path, ctx.accept)
            if aggregated is not None:
                body, content_type, etag = aggregated
                if ctx.request.headers.get("If-None-Match") == etag:
                    response = Response(b"", 304)
                else:
                    response = Response(body, 200, content_type=content_type)
                response.headers["ETag"] = etag
                response.headers["Cache-Control"] = "public"
                return response
            document = self.discovery.document(path)
            if document is not None:
                return Response(document, 200, content_type="application/json")
        return self.delegation.serve(ctx)
