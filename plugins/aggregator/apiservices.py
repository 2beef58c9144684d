"""APIService objects (``apiregistration.k8s.io/v1``): defaults, validation, the table and
OpenAPI schemas.

Upstream's ``kube-aggregator/pkg/apis/apiregistration`` validation and
``pkg/registry/apiservice``: the name is ``VERSION.GROUP``, priorities are bounded, a
local APIService (no ``spec.service``) has neither ``caBundle`` nor
``insecureSkipTLSVerify``, and only ``/status`` writes the conditions. The schemas are
upstream's definitions (``openapi_definitions.json``, kube-apiserver v1.32's v3 form).
"""

from __future__ import annotations

import base64
import copy
import os

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.openapi.schemas import read_definitions
from kapiserver.registry.printers import AGE_COLUMN, NAME_COLUMN, age
from kapiserver.registry.resource import ResourceSpec
from kapiserver.registry.store import now_rfc3339
from kapiserver.registry.strategy import Strategy

GROUP = "apiregistration.k8s.io"
APISERVICES = ResourceSpec(group=GROUP, version="v1", kind="APIService", resource="apiservices",
                           singular="apiservice", namespaced=False,
                           categories=("api-extensions",),
                           storage_version_hash="InPBPD7+PqM=")
PREFIX = APISERVICES.key_prefix()
#: Upstream's definitions of the APIService kinds
#: (``io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService``, ...).
OPENAPI_DEFINITIONS_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                        "openapi_definitions.json")
AVAILABLE = "Available"
AUTOMANAGED_LABEL = "kube-aggregator.kubernetes.io/automanaged"

SERVICE_COLUMN = {"name": "Service", "type": "string", "format": "",
                  "description": "The reference to the service that hosts this API endpoint.",
                  "priority": 0}
AVAILABLE_COLUMN = {"name": "Available", "type": "string", "format": "",
                    "description": "Whether this service is available.", "priority": 0}
#: Upstream's APIService table declares its Age column as a string.
STRING_AGE_COLUMN = dict(AGE_COLUMN, type="string")


def openapi_definitions() -> dict:
    """The definitions of ``APIService``, its list and every type under them, by upstream's
    names (read from the data file on each call)."""
    return read_definitions(OPENAPI_DEFINITIONS_FILE)


def is_local(apiservice: dict) -> bool:
    return not (apiservice.get("spec") or {}).get("service")


def available_condition(apiservice: dict) -> dict | None:
    for entry in (apiservice.get("status") or {}).get("conditions") or []:
        if entry.get("type") == AVAILABLE:
            return entry
    return None


def is_available(apiservice: dict) -> bool:
    entry = available_condition(apiservice)
    return entry is not None and entry.get("status") == "True"


def set_available(apiservice: dict, status: str, reason: str, message: str) -> None:
    """``SetAPIServiceCondition``: the transition time moves only when the status does."""
    current = available_condition(apiservice)
    conditions = [c for c in (apiservice.get("status") or {}).get("conditions") or []
                  if c.get("type") != AVAILABLE]
    when = current["lastTransitionTime"] if current and current.get("status") == status \
        and current.get("lastTransitionTime") else now_rfc3339()
    conditions.append({"type": AVAILABLE, "status": status, "lastTransitionTime": when,
                       "reason": reason, "message": message})
    apiservice.setdefault("status", {})["conditions"] = conditions


def validate_apiservice(obj: dict) -> list[FieldError]:
    """``ValidateAPIService`` (metadata, then spec)."""
    from kapiserver.apimachinery.validation import (is_dns1035_label, is_dns1123_subdomain,
                                                    validate_object_meta,
                                                    validate_path_segment_name)

    spec = obj.get("spec") or {}
    group, version = spec.get("group") or "", spec.get("version") or ""
    required = f"{version}.{group}"

    def name_rule(name: str, prefix: bool) -> list[str]:
        problems = validate_path_segment_name(name)
        if problems:
            return problems
        if name != required:
            return [f'must be `spec.version+"."+spec.group`: "{required}"']
        return []

    errs = validate_object_meta(obj.get("metadata") or {}, False, name_rule)
    path = FieldPath("spec")
    if not group and version != "v1":
        errs.append(FieldError.required(path.child("group"), "only v1 may have an empty group "
                                                             "and it better be legacy kube"))
    if group:
        errs += [FieldError.invalid(path.child("group"), group, m)
                 for m in is_dns1123_subdomain(group)]
    errs += [FieldError.invalid(path.child("version"), version, m)
             for m in is_dns1035_label(version)]
    minimum = spec.get("groupPriorityMinimum", 0)
    if not isinstance(minimum, int) or minimum <= 0 or minimum > 20000:
        errs.append(FieldError.invalid(path.child("groupPriorityMinimum"), minimum,
                                       "must be positive and less than 20000"))
    priority = spec.get("versionPriority", 0)
    if not isinstance(priority, int) or priority <= 0 or priority > 1000:
        errs.append(FieldError.invalid(path.child("versionPriority"), priority,
                                       "must be positive and less than 1000"))
    ca_bundle = spec.get("caBundle") or ""
    skip = bool(spec.get("insecureSkipTLSVerify"))
    service = spec.get("service")
    if not service:
        if ca_bundle:
            errs.append(FieldError.invalid(path.child("caBundle"),
                                           f"{len(_bundle_bytes(ca_bundle))} bytes",
                                           "local APIServices may not have a caBundle"))
        if skip:
            errs.append(FieldError.invalid(path.child("insecureSkipTLSVerify"), skip,
                                           "local APIServices may not have "
                                           "insecureSkipTLSVerify"))
        return errs
    if not service.get("namespace"):
        errs.append(FieldError.required(path.child("service", "namespace"), ""))
    if not service.get("name"):
        errs.append(FieldError.required(path.child("service", "name"), ""))
    port = service.get("port", 443)
    if not isinstance(port, int) or not 1 <= port <= 65535:
        errs.append(FieldError.invalid(path.child("service", "port"), port,
                                       "port is not valid: must be between 1 and 65535, "
                                       "inclusive"))
    if skip and ca_bundle:
        errs.append(FieldError.invalid(path.child("insecureSkipTLSVerify"), skip,
                                       "may not be true if caBundle is present"))
    return errs


def _bundle_bytes(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        return value.encode()


class APIServiceStrategy(Strategy):
    """``apiservice.apiServerStrategy``: defaults, validation, generation, the table."""

    has_generation = False
    status_subresource = True
    #: ``APIServiceStatus.Conditions``: ``patchStrategy:"merge" patchMergeKey:"type"``.
    merge_keys = {"status.conditions": "type"}

    def apply_defaults(self, obj):
        service = (obj.get("spec") or {}).get("service")
        if isinstance(service, dict) and "port" not in service:
            service["port"] = 443

    def prepare_for_create(self, obj):
        obj["status"] = {}
        if is_local(obj):
            # "mark local API services as immediately available on create"
            set_available(obj, "True", "Local", "Local APIServices are always available")

    def validate(self, obj):
        return validate_apiservice(obj)

    def validate_update(self, new, old):
        from kapiserver.apimachinery.validation import validate_object_meta_update

        return validate_object_meta_update(new.get("metadata") or {},
                                           old.get("metadata") or {}) + validate_apiservice(new)

    def name_validator(self):  # the spec-dependent rule lives in validate_apiservice
        return lambda name, prefix: []

    def table_columns(self):
        return [NAME_COLUMN, SERVICE_COLUMN, AVAILABLE_COLUMN, STRING_AGE_COLUMN]

    def table_cells(self, obj):
        meta = obj.get("metadata") or {}
        service = (obj.get("spec") or {}).get("service")
        where = f"{service.get('namespace', '')}/{service.get('name', '')}" if service \
            else "Local"
        condition = available_condition(obj)
        if condition is None:
            shown = "Unknown"
        elif condition.get("status") == "True":
            shown = "True"
        else:
            shown = f"{condition.get('status')} ({condition.get('reason', '')})"
        return [meta.get("name", ""), where, shown, age(meta.get("creationTimestamp"))]


class APIServiceStatusStrategy(APIServiceStrategy):
    """``apiservices/status``: writes the conditions only."""

    def apply_defaults(self, obj):
        pass

    def prepare_for_update(self, new, old):
        status = copy.deepcopy(new.get("status") or {})
        meta = new.get("metadata") or {}
        managed, version = meta.get("managedFields"), meta.get("resourceVersion")
        new.clear()
        new.update(copy.deepcopy(old))
        new["status"] = status
        if managed is not None:
            new["metadata"]["managedFields"] = managed
        if version is not None:
            new["metadata"]["resourceVersion"] = version

    def validate_update(self, new, old):
        return []
