"""The audit options, named and defaulted as kube-apiserver's (``server/options/audit.go``).

``--audit-policy-file`` is checked when the options load (decoded and validated: its
errors are reported with every other option's). Without a policy file the log and webhook
backends record nothing, as upstream; audit backends from plugins then receive every
request at level Metadata, from ResponseStarted on (``DEFAULT_PLUGIN_POLICY``).
"""

from __future__ import annotations

from marshmallow import ValidationError, fields, validate

from ..options.types import Duration, Path, kubeconfig_file, readable_file
from .backends import BLOCKING, FORMAT_JSON, FORMATS, LOG_BATCH, MODES, WEBHOOK_BATCH, BATCH
from .policy import METADATA, REQUEST_RECEIVED, Policy, PolicyError

GROUP_VERSIONS = ["audit.k8s.io/v1"]
#: What plugins' backends receive when no policy file is given.
DEFAULT_PLUGIN_POLICY = Policy.everything(METADATA, omit_stages=(REQUEST_RECEIVED,))


def policy_file(path: str) -> None:
    if not path:
        return
    readable_file(path)
    try:
        Policy.load(path)
    except PolicyError as err:
        raise ValidationError(f"loading audit policy file: {err}") from None


def _count(default: int):
    return fields.Integer(load_default=default, strict=False,
                          validate=validate.Range(0, error="can't be a negative number"))


def _positive(default: int):
    return fields.Integer(load_default=default, strict=False,
                          validate=validate.Range(1, error="must be a positive number"))


def _mode(default: str):
    return fields.String(load_default=default, validate=validate.OneOf(
        MODES, error="invalid mode {input}, allowed modes are " + ",".join(MODES)))


def _batch_options(add, plugin: str, mode: str, batch) -> None:
    add(f"audit-{plugin}-mode", _mode(mode),
        "strategy for sending audit events: blocking (the request waits for the write), "
        "blocking-strict (and fails when the first event cannot be stored) or batch "
        "(buffered and sent by a background greenlet)")
    add(f"audit-{plugin}-batch-buffer-size", _positive(batch.buffer_size),
        "events buffered before they are dropped (and counted in "
        "apiserver_audit_error_total); batch mode only")
    add(f"audit-{plugin}-batch-max-size", _positive(batch.max_batch_size),
        "the most events in one batch; batch mode only")
    add(f"audit-{plugin}-batch-max-wait", Duration(load_default=batch.max_batch_wait),
        "how long a batch that is not full waits before it is sent; batch mode only")
    add(f"audit-{plugin}-batch-throttle-enable",
        fields.Boolean(load_default=batch.throttle_enable),
        "whether batches are throttled; batch mode only")
    add(f"audit-{plugin}-batch-throttle-qps",
        fields.Float(load_default=batch.throttle_qps if batch.throttle_enable else 0.0,
                     validate=validate.Range(0)),
        "the most batches sent per second on average; batch mode only")
    add(f"audit-{plugin}-batch-throttle-burst",
        _count(batch.throttle_burst if batch.throttle_enable else 0),
        "the most batches sent at once when the QPS was not used before; batch mode only")
    add(f"audit-{plugin}-version", fields.String(
        load_default=GROUP_VERSIONS[0], validate=validate.OneOf(
            GROUP_VERSIONS, error="invalid group version, allowed versions are "
                                  + str(GROUP_VERSIONS))),
        "API group and version of the events written")


def add_audit_options(options) -> None:
    """Declare the audit options on ``options`` (an ``OptionRegistry``)."""
    add = options.add
    add("audit-policy-file", Path(load_default="", validate=policy_file),
        "the audit policy (audit.k8s.io/v1 Policy): which requests are audited at which "
        "level; without it the log and webhook backends record nothing")
    add("audit-log-path", fields.String(load_default=""),
        "if set, audit events are written to this file, one per line; '-' means standard "
        "out")
    add("audit-log-maxage", _count(0),
        "days old audit log files are kept, by the time in their names (0: no limit)")
    add("audit-log-maxbackup", _count(0),
        "old audit log files kept (0: no limit)")
    add("audit-log-maxsize", _count(0),
        "megabytes the audit log file reaches before it is rotated (0: 100)")
    add("audit-log-format", fields.String(load_default=FORMAT_JSON, validate=validate.OneOf(
        FORMATS, error="invalid audit log format {input}, allowed formats are "
                       + ",".join(FORMATS))),
        "format of the audit log: json (one JSON event per line) or legacy (one line of "
        "text per event)")
    add("audit-log-compress", fields.Boolean(load_default=False),
        "gzip-compress rotated audit log files")
    _batch_options(add, "log", BLOCKING, LOG_BATCH)
    add("audit-webhook-config-file", Path(load_default="", validate=kubeconfig_file),
        "a kubeconfig naming the audit webhook: events are POSTed to it as EventLists")
    add("audit-webhook-initial-backoff", Duration(load_default=10.0),
        "how long to wait before retrying a failed webhook request (then 1.5 times longer, "
        "5 attempts in all)")
    _batch_options(add, "webhook", BATCH, WEBHOOK_BATCH)


def check_audit(config) -> list[str]:
    """Options that only mean something together (upstream logs and ignores them)."""
    errors = []
    for plugin in ("log", "webhook"):
        if config.get(f"audit_{plugin}_mode") == BATCH and \
                config.get(f"audit_{plugin}_batch_throttle_enable"):
            if not config.get(f"audit_{plugin}_batch_throttle_qps"):
                errors.append(f"--audit-{plugin}-batch-throttle-qps: must be a positive "
                              "number when throttling is enabled")
            if not config.get(f"audit_{plugin}_batch_throttle_burst"):
                errors.append(f"--audit-{plugin}-batch-throttle-burst: must be a positive "
                              "number when throttling is enabled")
    return errors
