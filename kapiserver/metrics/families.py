"""The metric families kapiserver exposes, as kube-apiserver 1.32 declares them.

Names, help texts (with component-base's ``[STABLE]``/``[ALPHA]`` prefix), label names and
buckets are upstream's (``k8s.io/apiserver/pkg/endpoints/metrics``,
``pkg/endpoints/filters/metrics.go``, ``pkg/admission/metrics``, ``pkg/audit/metrics.go``,
``component-base/metrics/prometheus/slis``). Labels are listed in upstream's declaration
order, which is the order ``labels(...)`` takes them; the exposition sorts them by name
as Go's text encoder does.
"""

from __future__ import annotations

from dataclasses import dataclass

COUNTER, GAUGE, HISTOGRAM = "counter", "gauge", "histogram"

#: How the workers' values of a gauge combine (prometheus_client's multiprocess modes):
#: ``livesum`` adds the live workers' values, ``livemostrecent`` takes the latest write.
LIVESUM, LIVEMOSTRECENT = "livesum", "livemostrecent"


@dataclass(frozen=True)
class Family:
    """One metric family: its name, help text, type, label names, buckets and, for a
    gauge, how the workers' values combine."""

    name: str
    help: str
    type: str
    labels: tuple[str, ...] = ()
    buckets: tuple[float, ...] = ()
    mode: str = ""


def _stable(text: str) -> str:
    return f"[STABLE] {text}"


def _alpha(text: str) -> str:
    return f"[ALPHA] {text}"


def _beta(text: str) -> str:
    return f"[BETA] {text}"


#: ``requestLatencies``' buckets: tuned for the API call latency SLO.
REQUEST_DURATION_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0,
                            3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0, 20.0, 30.0, 45.0, 60.0)
#: ``ExponentialBuckets(1000, 10.0, 7)``: 1 KB to 1 GB.
RESPONSE_SIZE_BUCKETS = tuple(1000.0 * 10 ** i for i in range(7))
#: ``ExponentialBuckets(1024, 2.0, 8)``: 1 KiB to 128 KiB.
WATCH_EVENT_SIZE_BUCKETS = tuple(1024.0 * 2 ** i for i in range(8))
ADMISSION_BUCKETS = (0.005, 0.025, 0.1, 0.5, 1.0, 2.5)
WEBHOOK_ADMISSION_BUCKETS = (0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10.0, 25.0)

REQUEST_TOTAL = Family(
    "apiserver_request_total",
    _stable("Counter of apiserver requests broken out for each verb, dry run value, group, "
            "version, resource, scope, component, and HTTP response code."),
    COUNTER, ("verb", "dry_run", "group", "version", "resource", "subresource", "scope",
              "component", "code"))
REQUEST_DURATION = Family(
    "apiserver_request_duration_seconds",
    _stable("Response latency distribution in seconds for each verb, dry run value, group, "
            "version, resource, subresource, scope and component."),
    HISTOGRAM, ("verb", "dry_run", "group", "version", "resource", "subresource", "scope",
                "component"), REQUEST_DURATION_BUCKETS)
RESPONSE_SIZES = Family(
    "apiserver_response_sizes",
    _stable("Response size distribution in bytes for each group, version, verb, resource, "
            "subresource, scope and component."),
    HISTOGRAM, ("verb", "group", "version", "resource", "subresource", "scope", "component"),
    RESPONSE_SIZE_BUCKETS)
CURRENT_INFLIGHT = Family(
    "apiserver_current_inflight_requests",
    _stable("Maximal number of currently used inflight request limit of this apiserver per "
            "request kind in last second."),
    GAUGE, ("request_kind",), mode=LIVESUM)
LONGRUNNING = Family(
    "apiserver_longrunning_requests",
    _stable("Gauge of all active long-running apiserver requests broken out by verb, group, "
            "version, resource, scope and component. Not all requests are tracked this way."),
    GAUGE, ("verb", "group", "version", "resource", "subresource", "scope", "component"),
    mode=LIVESUM)
WATCH_EVENTS = Family(
    "apiserver_watch_events_total", _alpha("Number of events sent in watch clients"),
    COUNTER, ("group", "version", "kind"))
WATCH_EVENT_SIZES = Family(
    "apiserver_watch_events_sizes", _alpha("Watch event size distribution in bytes"),
    HISTOGRAM, ("group", "version", "kind"), WATCH_EVENT_SIZE_BUCKETS)
STORAGE_OBJECTS = Family(
    "apiserver_storage_objects",
    _stable("Number of stored objects at the time of last check split by kind. In case of a "
            "fetching error, the value will be -1."),
    GAUGE, ("resource",))
ADMISSION_STEP = Family(
    "apiserver_admission_step_admission_duration_seconds",
    _stable("Admission sub-step latency histogram in seconds, broken out for each operation "
            "and API resource and step type (validate or admit)."),
    HISTOGRAM, ("type", "operation", "rejected"), ADMISSION_BUCKETS)
ADMISSION_CONTROLLER = Family(
    "apiserver_admission_controller_admission_duration_seconds",
    _stable("Admission controller latency histogram in seconds, identified by name and broken "
            "out for each operation and API resource and type (validate or admit)."),
    HISTOGRAM, ("name", "type", "operation", "rejected"), ADMISSION_BUCKETS)
ADMISSION_WEBHOOK = Family(
    "apiserver_admission_webhook_admission_duration_seconds",
    _stable("Admission webhook latency histogram in seconds, identified by name and broken "
            "out for each operation and API resource and type (validate or admit)."),
    HISTOGRAM, ("name", "type", "operation", "rejected"), WEBHOOK_ADMISSION_BUCKETS)
ADMISSION_WEBHOOK_REQUESTS = Family(
    "apiserver_admission_webhook_request_total",
    _alpha("Admission webhook request total, identified by name and broken out for each "
           "admission type (validating or admit) and operation. Additional labels specify "
           "whether the request was rejected or not and an HTTP status code. Codes greater "
           "than 600 are truncated to 600, to keep the metrics cardinality bounded."),
    COUNTER, ("name", "type", "operation", "code", "rejected"))
AUDIT_EVENTS = Family(
    "apiserver_audit_event_total",
    _alpha("Counter of audit events generated and sent to the audit backend."), COUNTER)
AUDIT_ERRORS = Family(
    "apiserver_audit_error_total",
    _alpha("Counter of audit events that failed to be audited properly. Plugin identifies "
           "the plugin affected by the error."), COUNTER, ("plugin",))
AUDIT_LEVELS = Family(
    "apiserver_audit_level_total",
    _alpha("Counter of policy levels for audit events (1 per request)."), COUNTER, ("level",))
AUDIT_REJECTED = Family(
    "apiserver_audit_requests_rejected_total",
    _alpha("Counter of apiserver requests rejected due to an error in audit logging "
           "backend."), COUNTER)
AUTHENTICATED_USER_REQUESTS = Family(
    "authenticated_user_requests",
    _alpha("Counter of authenticated requests broken out by username."), COUNTER,
    ("username",))
AUTHENTICATION_ATTEMPTS = Family(
    "authentication_attempts", _alpha("Counter of authenticated attempts."), COUNTER,
    ("result",))
BUILD_INFO = Family(
    "kubernetes_build_info",
    _alpha("A metric with a constant '1' value labeled by major, minor, git version, git "
           "commit, git tree state, build date, Go version, and compiler from which "
           "Kubernetes was built, and platform on which it is running."),
    GAUGE, ("major", "minor", "git_version", "git_commit", "git_tree_state", "build_date",
            "go_version", "compiler", "platform"))

#: ``/metrics/slis``: the health checks' results (``slis.ObserveHealthcheck``).
HEALTHCHECK = Family(
    "kubernetes_healthcheck", _beta("This metric records the result of a single healthcheck."),
    GAUGE, ("name", "type"), mode=LIVEMOSTRECENT)
HEALTHCHECKS_TOTAL = Family(
    "kubernetes_healthchecks_total", _beta("This metric records the results of all healthcheck."),
    COUNTER, ("name", "type", "status"))

#: The families every server declares at start (their label-less ones show 0 at once).
SERVER_FAMILIES = (
    REQUEST_TOTAL, REQUEST_DURATION, RESPONSE_SIZES, CURRENT_INFLIGHT, LONGRUNNING,
    WATCH_EVENTS, WATCH_EVENT_SIZES, ADMISSION_STEP, ADMISSION_CONTROLLER, ADMISSION_WEBHOOK,
    ADMISSION_WEBHOOK_REQUESTS, AUDIT_EVENTS, AUDIT_ERRORS, AUDIT_LEVELS, AUDIT_REJECTED,
    AUTHENTICATED_USER_REQUESTS, AUTHENTICATION_ATTEMPTS)
SLI_FAMILIES = (HEALTHCHECK, HEALTHCHECKS_TOTAL)
