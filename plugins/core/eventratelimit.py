"""EventRateLimit admission: a cap on how fast events are written
(``plugin/pkg/admission/eventratelimit``).

Each limit of the plugin's configuration (an ``eventratelimit.admission.k8s.io/v1alpha1``
``Configuration`` in ``--admission-control-config-file``) is a token bucket — ``qps``
tokens a second, at most ``burst`` — for the whole server (``Server``), or one per
namespace, per user or per event source and involved object (``Namespace``, ``User``,
``SourceAndObject``; the ``cacheSize`` most recent keys are remembered, 4096 by default).
Creating or updating a core ``Event`` takes a token from every limit; when one has none
the write is refused with a 429. Dry runs take none. The buckets are per server process
(each gunicorn worker has its own, as each kube-apiserver replica has). Off by default,
as in kube-apiserver 1.32 (``--enable-admission-plugins=EventRateLimit``), and it needs
its configuration.
"""

from __future__ import annotations

import collections
import threading
import time

from kapiserver import errors
from kapiserver.admission import CREATE, UPDATE, AdmissionPlugin
from kapiserver.admission.config import plugin_configuration
from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.errors import ConfigError

NAME = "EventRateLimit"
API_VERSION = "eventratelimit.admission.k8s.io/v1alpha1"
SERVER, NAMESPACE, USER, SOURCE_AND_OBJECT = "Server", "Namespace", "User", "SourceAndObject"
LIMIT_TYPES = (NAMESPACE, SERVER, SOURCE_AND_OBJECT, USER)
DEFAULT_CACHE_SIZE = 4096


class TokenBucket:
    """``flowcontrol.NewTokenBucketRateLimiter``: full at first, ``qps`` tokens a second up
    to ``burst``; ``try_accept`` takes one if there is one."""

    def __init__(self, qps: float, burst: int, clock=time.monotonic):
        self.rate = float(qps)
        self.burst = burst
        self.clock = clock
        self.tokens = float(burst)
        self.last = clock()

    def try_accept(self) -> bool:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.rate)
        self.last = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


def _source_and_object_key(attributes) -> str:
    """``getSourceAndObjectKey``: the event's source and involved object, run together."""
    event = attributes.object if isinstance(attributes.object, dict) else {}
    source = event.get("source") if isinstance(event.get("source"), dict) else {}
    involved = event.get("involvedObject") if isinstance(event.get("involvedObject"),
                                                          dict) else {}
    return "".join(str(value or "") for value in (
        source.get("component"), source.get("host"), involved.get("kind"),
        involved.get("namespace"), involved.get("name"), involved.get("uid"),
        involved.get("apiVersion")))


_KEYS = {
    SERVER: lambda attributes: "",
    NAMESPACE: lambda attributes: attributes.namespace or "",
    USER: lambda attributes: attributes.user.name if attributes.user is not None else "",
    SOURCE_AND_OBJECT: _source_and_object_key,
}


class LimitEnforcer:
    """One limit: its buckets by key (an LRU of ``cache_size`` keys; one for ``Server``)."""

    def __init__(self, limit: dict, clock=time.monotonic):
        self.type = limit["type"]
        self.qps, self.burst = limit["qps"], limit["burst"]
        self.cache_size = 1 if self.type == SERVER else \
            (limit.get("cacheSize") or DEFAULT_CACHE_SIZE)
        self.clock = clock
        self.buckets: collections.OrderedDict = collections.OrderedDict()
        self.key = _KEYS[self.type]

    def accept(self, attributes) -> str:
        """Take a token for the write's key; why not, or ""."""
        key = self.key(attributes)
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = TokenBucket(self.qps, self.burst, self.clock)
            while len(self.buckets) > self.cache_size:
                self.buckets.popitem(last=False)
        else:
            self.buckets.move_to_end(key)
        if bucket.try_accept():
            return ""
        # Each enforcer's error is already a TooManyRequests one upstream: its text
        # ("Too many requests: …") is wrapped again by the plugin's.
        return f"Too many requests: limit reached on type {self.type} for key {key}"


def parse_configuration(document: dict | None) -> list[dict]:
    """The limits of the plugin's configuration, defaulted and validated as upstream's
    ``ValidateConfiguration``; ``ConfigError`` lists what is wrong."""
    prefix = f"--admission-control-config-file: {NAME}"
    if document is None:
        raise ConfigError(f"{prefix}: a configuration (kind: Configuration, apiVersion: "
                          f"{API_VERSION}) with its limits is required")
    if document.get("kind") != "Configuration" or document.get("apiVersion") != API_VERSION:
        raise ConfigError(f"{prefix}: expected a Configuration of {API_VERSION}")
    limits = document.get("limits")
    path = FieldPath("limits")
    problems: list[FieldError] = []
    if not isinstance(limits, list) or not limits:
        problems.append(FieldError.invalid(path, GoValue("[]eventratelimit.Limit(nil)"),
                                           "must not be empty"))
        limits = []
    parsed = []
    for index, limit in enumerate(limits):
        here = path.index(index)
        limit = limit if isinstance(limit, dict) else {}
        kind = limit.get("type", "")
        if kind not in LIMIT_TYPES:
            problems.append(FieldError.not_supported(here.child("type"), kind, LIMIT_TYPES))
        numbers = {}
        for field, minimum, wording in (("qps", 1, "must be positive"),
                                        ("burst", 1, "must be positive"),
                                        ("cacheSize", 0, "must not be negative")):
            value = limit.get(field, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                problems.append(FieldError.invalid(here.child(field), value, wording))
            numbers[field] = value
        parsed.append(dict(numbers, type=kind))
    if problems:
        raise ConfigError([f"{prefix}: {problem.error_text()}" for problem in problems])
    return parsed


def check_configuration(config) -> None:
    """Raise ``ConfigError`` at start-up when the plugin is enabled without a valid
    configuration (rather than when each worker builds it)."""
    if NAME in (config.get("enable_admission_plugins") or []):
        parse_configuration(plugin_configuration(config, NAME))


class EventRateLimit(AdmissionPlugin):
    """Refuse event writes beyond the configured rates (429)."""

    name = NAME
    default_enabled = False
    operations = frozenset({CREATE, UPDATE})

    def __init__(self, server, clock=time.monotonic):
        self.server = server
        limits = parse_configuration(plugin_configuration(server.config, NAME))
        self.enforcers = [LimitEnforcer(limit, clock) for limit in limits]
        self._lock = threading.Lock()

    def validate(self, attributes):
        spec = attributes.resource
        if spec.group != "" or spec.kind != "Event" or attributes.dry_run:
            return
        with self._lock:
            refusals = [reason for reason in (e.accept(attributes) for e in self.enforcers)
                        if reason]
        if refusals:
            unique = list(dict.fromkeys(refusals))
            aggregated = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
            raise errors.TooManyRequests(f"Too many requests: {aggregated}")
