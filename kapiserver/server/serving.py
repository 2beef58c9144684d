"""Serving under gunicorn: TLS material, gunicorn settings, and the programmatic app.

``kapiserver serve`` and ``gunicorn -c conf/gunicorn.conf.py`` share ``gunicorn_settings``
and build the same WSGI app, so both run the same server.
"""

from __future__ import annotations

import gc
import inspect
import logging
import math
import os
import ssl

from gunicorn.app.base import BaseApplication

from .forked import call_in_child, start_in_child

log = logging.getLogger(__name__)

WORKER_CLASS = "kapiserver.server.worker.KapiserverWorker"
#: Seconds an idle keep-alive connection is kept; clients reconnect transparently.
KEEPALIVE = 10


def configure_logging(level: str) -> None:
    logging.basicConfig(level=level.upper(),
                        format="%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s")
    logging.getLogger().setLevel(level.upper())


def prepare_tls(config, pm=None) -> dict:
    """Generate or reuse the data dir's certificates; return the TLS file paths.

    With no ``--tls-cert-file``, a CA and a serving certificate are generated (and reused
    on later starts while they cover the bind address and ``--tls-sans``). The data dir's
    CA always signs ``admin.kubeconfig``'s client certificate, so it is always trusted for
    client certificates, besides ``--client-ca-file`` and the CAs plugins add
    (``kapiserver_client_ca_files``: a front proxy's, an extension server's main server's).
    """
    from ..pki import PKI, server_url, serving_hosts

    os.makedirs(config.data_dir, mode=0o700, exist_ok=True)
    pki = PKI(config.data_dir)
    if config.tls_cert_file:
        certfile, keyfile, embed_ca = config.tls_cert_file, config.tls_private_key_file, False
    else:
        pki.ensure_serving_cert(serving_hosts(config.bind_address, config.tls_sans))
        certfile, keyfile, embed_ca = pki.serving_cert_file, pki.serving_key_file, True
    extra = [] if pm is None else [path for files in pm.hook.kapiserver_client_ca_files(
        config=config) for path in files or ()]
    client_ca = pki.write_client_ca_bundle([config.client_ca_file, *extra])
    if not config.get("service_account_signing_key_file"):
        pki.ensure_service_account_key()  # before the workers, which all sign with it
    url = server_url(config.bind_address, config.secure_port)
    kubeconfig = pki.ensure_admin_kubeconfig(url, embed_ca=embed_ca)
    return {"certfile": certfile, "keyfile": keyfile, "ca_certs": client_ca,
            "kubeconfig": kubeconfig, "ca_file": pki.ca_cert_file, "url": url}


def prepare_tls_in_child(config, pm=None) -> dict:
    """``prepare_tls`` in a forked child: the gunicorn master stays free of ``cryptography``."""
    return call_in_child(prepare_tls, config, pm)


def preload() -> None:
    """Do once in the gunicorn master what every worker would do alike, before it forks
    them: the workers inherit the result, its pages shared until written.

    That is the web layer's imports (Flask, the filter chain, the endpoints), the built-in
    kinds' protobuf tables and OpenAPI index, and the version. Nothing here starts a
    thread or opens a file, socket or connection a worker would inherit: gevent patches
    each worker as it starts, and what a worker builds from its config (storage, threads,
    the app) it builds after the fork. ``gc.freeze()`` then keeps the collector of each
    worker from writing to (and so copying) every inherited object's page.
    """
    # gevent's thread module first: at exit, Python clears modules in the reverse order
    # of their import, and a logging handler made at import (Flask's) that outlives
    # gevent's module would find gevent's lock functions gone ("Exception ignored in
    # _removeHandlerRef") when each worker exits.
    import gevent.thread  # noqa: F401

    from ..openapi.schemas import builtin_index
    from ..runtime.protobuf import default_codec
    from ..version import version_info
    from . import app  # noqa: F401 (imported for the workers)

    default_codec()
    builtin_index()
    version_info()
    gc.collect()
    gc.freeze()


def ssl_context(conf, default_ssl_context_factory):
    """TLS 1.2 or newer, HTTP/1.1 only (watch streams are chunked HTTP/1.1 responses);
    failed handshakes answered as Go's server answers them (``handshake``)."""
    from .handshake import quiet_handshakes

    context = default_ssl_context_factory()
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return quiet_handshakes(context)


def worker_exit(server, worker):
    """gunicorn hook: close the worker's ``APIServer`` (flush audit, stop delegates)."""
    app = getattr(worker, "wsgi", None)
    apiserver = getattr(app, "extensions", {}).get("kapiserver") if app else None
    if apiserver is not None:
        apiserver.close()


def _metrics_hooks(data_dir: str) -> dict:
    """The master's part in metrics: an empty directory before the workers start, and a
    worker's live gauges dropped when it ends (``kapiserver.metrics``)."""
    from ..metrics import prepare_multiprocess, worker_exited

    def on_starting(arbiter):
        prepare_multiprocess(data_dir)

    def child_exit(arbiter, worker):
        worker_exited(data_dir, worker.pid)

    return {"on_starting": on_starting, "child_exit": child_exit}


def _inflight_hooks(config) -> dict:
    """The master's part in counting requests in flight across workers: the counters'
    file, a slot for each worker it forks, freed when the worker ends
    (``kapiserver.server.inflight``)."""
    from .inflight import Slots, slot_count

    slots = Slots(os.path.join(config.data_dir, "inflight"), slot_count(config.workers))
    return {"on_starting": lambda arbiter: slots.create(),
            "pre_fork": lambda arbiter, worker: slots.pre_fork(worker),
            "post_fork": lambda arbiter, worker: slots.post_fork(worker),
            "child_exit": lambda arbiter, worker: slots.exited(worker)}


def _chain_hooks(*sets: dict) -> dict:
    """gunicorn hooks of several parts: those of the same name called in turn."""
    chained: dict[str, list] = {}
    for hooks in sets:
        for name, hook in hooks.items():
            chained.setdefault(name, []).append(hook)

    def calling(hooks):
        # gunicorn checks a hook's arity: one argument (the arbiter) or two (and the worker).
        if len(inspect.signature(hooks[0]).parameters) == 1:
            def call(arbiter):
                for hook in hooks:
                    hook(arbiter)
        else:
            def call(arbiter, worker):
                for hook in hooks:
                    hook(arbiter, worker)
        return call

    return {name: hooks[0] if len(hooks) == 1 else calling(hooks)
            for name, hooks in chained.items()}


def gunicorn_settings(config, tls: dict) -> dict:
    """The gunicorn settings for ``config``: bind, TLS, worker class, limits and hooks."""
    host = config.bind_address
    bind = f"[{host}]:{config.secure_port}" if ":" in host else f"{host}:{config.secure_port}"
    return {
        "bind": [bind],
        "workers": config.workers,
        "worker_class": WORKER_CLASS,
        "worker_connections": config.worker_connections,
        "certfile": tls["certfile"],
        "keyfile": tls["keyfile"],
        "ca_certs": tls["ca_certs"],
        # Client certificates are optional: tokens and anonymous requests need none.
        "cert_reqs": ssl.CERT_OPTIONAL,
        "ssl_context": ssl_context,
        "graceful_timeout": math.ceil(config.shutdown_grace_period),
        "timeout": 30,
        "keepalive": KEEPALIVE,
        "preload_app": False,
        "loglevel": config.log_level,
        "proc_name": "kapiserver",
        "worker_exit": worker_exit,
        # gunicorn's control socket lives in $HOME by default: two servers would share
        # it. kapiserver is managed with signals (SIGTERM, SIGHUP) instead.
        "control_socket_disable": True,
        # The whole body of a request is bounded by the REST layer (3 MiB, like upstream);
        # headers may be long (impersonation, large bearer tokens).
        "limit_request_field_size": 65536,
        **_chain_hooks(_metrics_hooks(config.data_dir), _inflight_hooks(config)),
    }


class GunicornApplication(BaseApplication):
    """gunicorn run programmatically with kapiserver's settings and app factory."""

    def __init__(self, config, pm, settings: dict):
        self.kapiserver_config = config
        self.pm = pm
        self.settings = settings
        super().__init__()

    def load_config(self):
        for key, value in self.settings.items():
            self.cfg.set(key, value)

    def load(self):
        from .app import create_app

        return create_app(self.kapiserver_config, self.pm)


def run(config, pm) -> None:
    """Prepare TLS and run gunicorn in the foreground until it is stopped."""
    configure_logging(config.log_level)
    # Certificates are made in a child meanwhile (the master stays free of cryptography).
    pending = start_in_child(prepare_tls, config, pm)
    preload()
    tls = pending.result()
    log.info("serving on %s; admin kubeconfig: %s", tls["url"], tls["kubeconfig"])
    GunicornApplication(config, pm, gunicorn_settings(config, tls)).run()


#: The environment variable naming the options file for ``gunicorn -c conf/gunicorn.conf.py``.
CONFIG_ENV = "KAPISERVER_CONFIG"


def settings_from_environment(default_config_file: str) -> dict:
    """gunicorn settings for ``conf/gunicorn.conf.py``: options from ``$KAPISERVER_CONFIG``.

    Also sets ``wsgi_app`` to the factory that builds the app from the same file in each
    worker, and exports the resolved path so the workers read the same options.
    """
    from ..bootstrap import load_config

    config_file = os.environ.get(CONFIG_ENV) or default_config_file
    os.environ[CONFIG_ENV] = os.path.abspath(config_file)
    config, pm = load_config(["--config", config_file])
    configure_logging(config.log_level)
    pending = start_in_child(prepare_tls, config, pm)
    preload()
    settings = gunicorn_settings(config, pending.result())
    settings["wsgi_app"] = "kapiserver.server.serving:app_from_environment()"
    return settings


def app_from_environment():
    """The WSGI app built from ``$KAPISERVER_CONFIG`` (gunicorn's ``wsgi_app`` factory)."""
    from ..bootstrap import load_config
    from .app import create_app

    config, pm = load_config(["--config", os.environ[CONFIG_ENV]])
    return create_app(config, pm)
