"""kube-apiserver's audit backends: a log file and a webhook (``--audit-log-*``,
``--audit-webhook-*``), provided through ``kapiserver_audit_backends``.

Both need ``--audit-policy-file``: without it upstream records nothing, and so does this
plugin (it says so in the log). Each backend runs in its mode (``blocking`` by default for
the log, ``batch`` for the webhook); the events it fails to store, and those the batch
buffer had no room for, are counted in ``apiserver_audit_error_total``.
"""

from __future__ import annotations

import logging
import os

from kapiserver.audit.backends import (BatchConfig, LogBackend, StandardOutput,
                                       WebhookBackend, with_mode)
from kapiserver.audit.rotation import RotatingFile
from kapiserver.plugin_manager import hookimpl

log = logging.getLogger(__name__)


def _batch_config(config, plugin: str) -> BatchConfig:
    def option(name):
        return config.get(f"audit_{plugin}_batch_{name}")

    return BatchConfig(buffer_size=option("buffer_size"), max_batch_size=option("max_size"),
                       max_batch_wait=option("max_wait"),
                       throttle_enable=option("throttle_enable"),
                       throttle_qps=option("throttle_qps"),
                       throttle_burst=option("throttle_burst"),
                       # upstream sends the webhook's batches concurrently, writes the log's
                       async_delegate=plugin == "webhook")


def _errors(server):
    errors = server.metrics.audit_errors

    def count(plugin: str, events: int) -> None:
        errors.labels(plugin).inc(events)

    return count


def log_backend(server):
    """``--audit-log-path``: a rotated file of JSON lines (or legacy text), or stdout."""
    config = server.config
    path = config.audit_log_path
    if path == "-":
        writer = StandardOutput()
    else:
        writer = RotatingFile(path, config.audit_log_maxsize, config.audit_log_maxbackup,
                              config.audit_log_maxage, config.audit_log_compress)
    errors = _errors(server)
    backend = LogBackend(writer, config.audit_log_format, errors)
    return with_mode(backend, config.audit_log_mode, _batch_config(config, "log"), errors)


def webhook_backend(server):
    """``--audit-webhook-config-file``: EventLists POSTed to the kubeconfig's server."""
    from kapiserver.webhookclient import WebhookClient

    config = server.config
    client = WebhookClient.from_kubeconfig(config.audit_webhook_config_file,
                                           os.path.join(config.data_dir, "audit-webhook"),
                                           "audit-webhook-config-file")
    errors = _errors(server)
    backend = WebhookBackend(client, config.audit_webhook_initial_backoff, errors)
    return with_mode(backend, config.audit_webhook_mode, _batch_config(config, "webhook"),
                     errors)


@hookimpl
def kapiserver_audit_backends(config):
    wanted = {}
    if config.audit_log_path:
        wanted["log"] = log_backend
    if config.audit_webhook_config_file:
        wanted["webhook"] = webhook_backend
    if wanted and not config.audit_policy_file:
        log.info("No audit policy file provided, no events will be recorded for %s backend",
                 " and ".join(sorted(wanted)))
        return {}
    return wanted
