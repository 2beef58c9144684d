"""Request metrics (upstream's ``InstrumentRouteFunc``, ``RecordLongRunning``) and the
``/metrics`` and ``/metrics/slis`` endpoints.

``with_request_metrics`` wraps the handlers inside authorization, as upstream instruments
its REST routes: requests refused by authentication, impersonation, authorization or the
in-flight limit never reach it (a 429 is counted by ``record_dropped``, as upstream's
``RecordDroppedRequest``). Durations run from when the request was received. A resource
request is counted when a resource served here answers it: one of the installed or
custom resources discovery lists, or any answer but a 404 (a worker whose discovery has not
yet seen a new custom resource); paths nothing serves and aggregated APIs proxied to
another server are not. Outside the API only the health roots and ``/openapi/v3`` count.

A long-running request (watch, exec, proxy, logs) is in ``apiserver_longrunning_requests``
while its stream is open and is counted when it ends, as upstream records it when its
handler returns.
"""

from __future__ import annotations

import gzip
import time

import gevent
from flask import Response

from prometheus_client.metrics_core import Metric

from ..endpoints.responses import status_response
from ..errors import StatusError
from ..metrics import MUTATING, READ_ONLY, exposition, families
from ..metrics.request import (COMPONENT, clean_dry_run, clean_scope, non_resource_label,
                               reported_verb)


class ServedResources:
    """Whether a resource request names a resource served here (``info in served``),
    from the groups discovery lists; rebuilt when discovery is."""

    def __init__(self, server):
        self.server = server
        self._discovery = None
        self._served: frozenset = frozenset()
        self._remote: frozenset = frozenset()

    def _refresh(self, discovery) -> None:
        served, remote = set(), set()
        for group in discovery.all_groups:
            for version, resources in group.versions.items():
                if getattr(group, "remote", False):
                    remote.add((group.name, version))
                else:
                    served.update((group.name, version, key) for key in resources)
        self._served, self._remote, self._discovery = frozenset(served), frozenset(remote), \
            discovery

    def counts(self, info, code: int) -> bool:
        discovery = self.server.discovery
        if discovery is not self._discovery:
            self._refresh(discovery)
        key = f"{info.resource}/{info.subresource}" if info.subresource else info.resource
        if (info.api_group, info.api_version, key) in self._served:
            return True
        return code != 404 and (info.api_group, info.api_version) not in self._remote


def request_labels(ctx) -> tuple | None:
    """The label values of ``apiserver_request_duration_seconds`` for ``ctx`` (verb, dry_run,
    group, version, resource, subresource, scope, component), or None when upstream does
    not instrument the path."""
    request, info = ctx.request, ctx.info
    if not info.is_resource_request:
        label = non_resource_label(info.path)
        if label is None:
            return None
        return (reported_verb(request.method, info, request.args, "", ""), "", "", "", "",
                label, "", "")
    scope = clean_scope(info)
    method = request.method
    # Only a PATCH's content type matters (an apply patch is APPLY): parsed for it only.
    verb = reported_verb(method, info, request.args,
                         request.mimetype if method == "PATCH" else "", scope)
    return (verb, clean_dry_run(request.query_string, request.args), info.api_group,
            info.api_version, info.resource, info.subresource, scope, COMPONENT)


def _status_code(error: BaseException) -> int:
    if isinstance(error, StatusError):
        return error.code
    if isinstance(error, gevent.Timeout):
        return 504  # the deadline filter answers it with upstream's Timeout Status
    return 500


def with_request_metrics(server, handler):
    """Record the requests the handlers serve (see the module docstring)."""
    metrics = server.metrics
    served = ServedResources(server)
    request_total = metrics.request_total
    durations = metrics.request_duration
    sizes = metrics.response_sizes
    inflight = metrics.inflight

    def record(ctx, labels, code: int, size) -> None:
        if ctx.info.is_resource_request and not served.counts(ctx.info, code):
            return
        request_total.labels(*labels, str(code)).inc()
        durations.labels(*labels).observe(time.perf_counter() - ctx.started)
        if size is not None and labels[0] in ("GET", "LIST"):
            verb, _, group, version, resource, subresource, scope, component = labels
            sizes.labels(verb, group, version, resource, subresource, scope,
                         component).observe(size)

    def instrumented(ctx):
        labels = request_labels(ctx)
        if labels is None:
            return handler(ctx)
        info = ctx.info
        long_running = info.is_long_running
        kind = None
        if not long_running:
            kind = READ_ONLY if info.is_read_only else MUTATING
            inflight.enter(kind)
        try:
            response = handler(ctx)
        except StatusError as err:
            # The recovery filter answers it with its Status: that answer's size.
            record(ctx, labels, err.code, len(status_response(err, ctx.accept).get_data()))
            raise
        except BaseException as err:
            record(ctx, labels, _status_code(err), None)
            raise
        finally:
            if kind is not None:
                inflight.leave(kind)
        if not response.is_streamed:
            record(ctx, labels, response.status_code, response.content_length or 0)
            return response
        code = response.status_code
        gauge = None
        if long_running and code < 300:
            verb, _, group, version, resource, subresource, scope, component = labels
            gauge = metrics.longrunning.labels(verb, group, version, resource, subresource,
                                               scope, component)
            gauge.inc()

        def finished():
            if gauge is not None:
                gauge.dec()
            record(ctx, labels, code, None)

        response.call_on_close(finished)
        return response

    return instrumented


def record_dropped(server, ctx) -> None:
    """Count a request the in-flight limit (or fairness) refused with 429
    (``RecordDroppedRequest``)."""
    labels = request_labels(ctx)
    if labels is not None:
        server.metrics.request_total.labels(*labels, "429").inc()


#: Seconds a worker keeps the stored object counts it read (upstream polls each minute).
OBJECT_COUNT_TTL = 5.0


class ObjectCounts:
    """``apiserver_storage_objects``: the objects stored for each resource served from this
    server's storage, counted at scrape time (``-1`` when the count failed), kept for
    ``OBJECT_COUNT_TTL`` seconds."""

    def __init__(self, server):
        self.server = server
        self._metric = None
        self._expires = 0.0

    def __call__(self) -> list:
        now = time.monotonic()
        if self._metric is None or now >= self._expires:
            family = families.STORAGE_OBJECTS
            metric = Metric(family.name, family.help, "gauge")
            storage = self.server.storage
            for (group, resource), registry in sorted(self.server.registries.items()):
                try:
                    page = storage.list(registry.spec.key_prefix(""), limit=1)
                    count = float(len(page.items) + page.remaining)
                except Exception:
                    count = -1.0
                label = f"{resource}.{group}" if group else resource
                metric.add_sample(family.name, {"resource": label}, count)
            self._metric, self._expires = metric, now + OBJECT_COUNT_TTL
        return [self._metric]


def build_info(version: dict) -> list:
    """``kubernetes_build_info``: 1, labelled with what ``/version`` answers."""
    family = families.BUILD_INFO
    metric = Metric(family.name, family.help, "gauge")
    metric.add_sample(family.name, {
        "major": version.get("major", ""), "minor": version.get("minor", ""),
        "git_version": version.get("gitVersion", ""),
        "git_commit": version.get("gitCommit", ""),
        "git_tree_state": version.get("gitTreeState", ""),
        "build_date": version.get("buildDate", ""), "go_version": version.get("goVersion", ""),
        "compiler": version.get("compiler", ""), "platform": version.get("platform", "")}, 1.0)
    return [metric]


def install_collectors(server) -> None:
    """The metrics computed when ``/metrics`` is scraped."""
    from ..version import version_info

    version = version_info()
    server.metrics.add_collector(ObjectCounts(server))
    server.metrics.add_collector(lambda: build_info(version))


def _accepts_gzip(header: str) -> bool:
    return any(part.split(";")[0].strip().lower() == "gzip" for part in header.split(","))


def serve_metrics(server, ctx, slis: bool = False) -> Response:
    """``/metrics`` (or ``/metrics/slis``): the whole server's metrics, gzip-compressed
    for a client that accepts it, as promhttp does."""
    if ctx.request.method not in ("GET", "HEAD"):
        from ..endpoints.responses import http_error

        return http_error("Method Not Allowed", 405)
    body = server.metrics.exposition(slis=slis)
    response = Response(status=200, content_type=exposition.CONTENT_TYPE)
    if _accepts_gzip(ctx.request.headers.get("Accept-Encoding", "")):
        body = gzip.compress(body, compresslevel=1)
        response.headers["Content-Encoding"] = "gzip"
    response.set_data(body)
    return response
