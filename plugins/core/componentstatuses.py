"""ComponentStatuses: the health of the control plane's parts, probed when asked
(``pkg/registry/core/componentstatus``; get and list only, deprecated since 1.19).

As kube-apiserver, kapiserver probes ``scheduler`` at ``https://127.0.0.1:10259/healthz``
and ``controller-manager`` at ``https://127.0.0.1:10257/healthz`` (certificates not
verified, 20 s at most): users run kube-scheduler and kube-controller-manager against
kapiserver as against kube-apiserver, and a refused connection is reported as upstream
reports it (``Healthy: False`` with Go's ``Get "...": dial tcp ...`` message).

Where kube-apiserver lists one ``etcd-<i>`` per ``--etcd-servers`` entry, kapiserver lists
the store it really writes to, named after its backend and numbered the same way: the
embedded SQLite database is ``sqlite-0``, healthy (``ok``) when a read of its current
revision succeeds, unhealthy with the error otherwise. Naming it ``etcd-0`` would make
scripts that check etcd believe in an etcd that does not exist.
"""

from __future__ import annotations

import concurrent.futures
import warnings

from kapiserver import errors
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.printers import NAME_COLUMN

#: Nothing is stored: discovery names no storage version hash, as upstream's.
COMPONENT_STATUSES = builtin_spec("", "v1", "componentstatuses", storage_version_hash="")
DEPRECATION_WARNING = "v1 ComponentStatus is deprecated in v1.19+"
#: ``probeTimeOut``.
PROBE_TIMEOUT = 20.0
#: Upstream's ``http.prober`` reads at most this much of a body.
MAX_BODY = 10 * 1024
USER_AGENT = "kube-probe/1.32"
#: The components kube-apiserver probes, in the order it lists them.
HTTP_COMPONENTS = (("scheduler", "https://127.0.0.1:10259/healthz"),
                   ("controller-manager", "https://127.0.0.1:10257/healthz"))
COLUMNS = [
    NAME_COLUMN,
    {"name": "Status", "type": "string", "format": "",
     "description": "Status of the component conditions", "priority": 0},
    {"name": "Message", "type": "string", "format": "",
     "description": "Message of the component conditions", "priority": 0},
    {"name": "Error", "type": "string", "format": "",
     "description": "Error of the component conditions", "priority": 0},
]


def probe_http(url: str, timeout: float = PROBE_TIMEOUT) -> tuple[str, str, str]:
    """An HTTP(S) health probe as upstream's ``httpprober``: ``(status, message, error)``.
    2xx and 3xx answers are healthy with the body as message; others, and connections
    that fail, unhealthy with what went wrong as message."""
    import requests
    import urllib3

    from kapiserver.webhookerrors import request_error

    parsed = urllib3.util.parse_url(url)
    address = (parsed.host, parsed.port or 443)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
        try:
            response = requests.get(url, verify=False, timeout=timeout, stream=True,
                                    headers={"User-Agent": USER_AGENT, "Accept": "*/*"})
        except requests.RequestException as err:
            return "False", request_error(err, "GET", url, address, parsed.host, False), ""
    try:
        body = response.raw.read(MAX_BODY, decode_content=True) or b""
    except (OSError, requests.RequestException):
        body = b""
    finally:
        response.close()
    if 200 <= response.status_code < 400:
        return "True", body.decode("utf-8", "replace"), ""
    return "False", f"HTTP probe failed with statuscode: {response.status_code}", ""


def store_components(storage) -> list[tuple[str, object]]:
    """The store's entries: ``(name, storage)``, named ``<backend>-<index>``."""
    backend = type(getattr(storage, "_store", storage)).__name__.lower()
    for suffix in ("store", "storage"):
        if backend.endswith(suffix) and backend != suffix:
            backend = backend[:-len(suffix)]
    return [(f"{backend}-0", storage)]


def probe_store(storage) -> tuple[str, str, str]:
    """Healthy when the store answers a read, as upstream's etcd prober."""
    try:
        storage.current_revision()
    except Exception as err:  # any failure of the store is its ill health, reported
        return "False", "", str(err) or type(err).__name__
    return "True", "ok", ""


def component_status(name: str, result: tuple[str, str, str]) -> dict:
    status, message, error = result
    condition = {"type": "Healthy", "status": status}
    if message:
        condition["message"] = message
    if error:
        condition["error"] = error
    return {"metadata": {"name": name, "creationTimestamp": None}, "conditions": [condition]}


def table_cells(item: dict) -> list:
    """``printComponentStatus``."""
    status, message, error = "Unknown", "", ""
    for condition in item.get("conditions") or []:
        if condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            message, error = condition.get("message", ""), condition.get("error", "")
            break
    return [item["metadata"]["name"], status, message, error]


class ComponentStatusHandler:
    """Serves ``componentstatuses``: each get or list probes the components anew."""

    verbs = ("get", "list")

    def __init__(self, server):
        self.server = server
        self.spec = COMPONENT_STATUSES

    def components(self) -> dict:
        """Name -> a probe returning ``(status, message, error)``, in listing order."""
        probes = {name: (lambda url=url: probe_http(url)) for name, url in HTTP_COMPONENTS}
        for name, storage in store_components(self.server.storage):
            probes[name] = lambda storage=storage: probe_store(storage)
        return probes

    def serve(self, ctx):
        info = ctx.info
        if info.verb not in self.verbs:
            raise errors.MethodNotAllowed()
        ctx.warnings.append(DEPRECATION_WARNING)
        probes = self.components()
        if info.verb == "get":
            if info.name not in probes:
                # Upstream's words, but not its plain error's 500: asking for a component
                # that does not exist is the client's mistake.
                raise errors.NotFound(f"Component not found: {info.name}",
                                      errors.status_details(info.name, "", "componentstatuses"))
            item = component_status(info.name, probes[info.name]())
            return self.respond(ctx, {"kind": "ComponentStatus", "apiVersion": "v1", **item})
        label_selector, field_selector = self._selectors(ctx.request.args)
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(probes)) as pool:
            results = dict(zip(probes, pool.map(lambda probe: probe(), probes.values())))
        items = [component_status(name, result) for name, result in results.items()]
        items = [item for item in items
                 if (label_selector is None or label_selector.matches({}))
                 and (field_selector is None or field_selector.matches(
                     {"metadata.name": item["metadata"]["name"]}))]
        return self.respond(ctx, {"kind": "ComponentStatusList", "apiVersion": "v1",
                                  "metadata": {}, "items": items})

    def _selectors(self, args):
        from kapiserver.apimachinery import fields, labels

        try:
            label_selector = labels.parse(args["labelSelector"]) \
                if args.get("labelSelector") else None
            field_selector = fields.parse(args["fieldSelector"]) \
                if args.get("fieldSelector") else None
            if field_selector is not None:
                fields.check_supported(field_selector, {"metadata.name"}, "ComponentStatus")
        except (labels.SelectorError, fields.SelectorError) as err:
            raise errors.BadRequest(str(err)) from None
        return label_selector, field_selector

    def respond(self, ctx, obj: dict):
        from flask import Response

        from kapiserver.endpoints.responses import JSON, YAML, prefers_yaml
        from kapiserver.serialization import dumps_json, dumps_yaml

        accept = ctx.accept
        if "as=Table" in accept and "g=meta.k8s.io" in accept:
            obj = self.table(obj, ctx.request.args.get("includeObject", "Metadata"))
        if prefers_yaml(accept):
            return Response(dumps_yaml(obj), 200, content_type=YAML)
        return Response(dumps_json(obj), 200, content_type=JSON)

    @staticmethod
    def table(obj: dict, include: str) -> dict:
        items = obj["items"] if obj["kind"] == "ComponentStatusList" else [obj]
        rows = []
        for item in items:
            row = {"cells": table_cells(item)}
            if include == "Object":
                row["object"] = {"kind": "ComponentStatus", "apiVersion": "v1", **{
                    k: v for k, v in item.items() if k not in ("kind", "apiVersion")}}
            elif include != "None":
                row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                                 "metadata": item["metadata"]}
            rows.append(row)
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {},
                "columnDefinitions": COLUMNS, "rows": rows}


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    return {"componentstatuses": ComponentStatusHandler(server)}
