"""The config producer (upstream's ``pkg/registry/flowcontrol/ensurer``): the bootstrap
FlowSchemas and PriorityLevelConfigurations made at start and kept.

* A mandatory object (``exempt``, ``catch-all``) is created when missing and its spec put
  back whenever it differs (validation also refuses other specs for them).
* A suggested object is created when missing; its spec is brought back to the bootstrap
  one only while it carries ``apf.kubernetes.io/autoupdate-spec: "true"`` (or, without a
  readable annotation, while it was never changed: ``generation`` 1). Setting the
  annotation to ``"false"`` keeps a user's changes.
* An object marked for auto-update whose name is no longer a bootstrap one is deleted.

Objects of other names are the users' own and are never touched. Every worker runs this
at start and then every ``PERIOD`` seconds; workers racing to create the same object
find it created.
"""

from __future__ import annotations

import contextlib
import logging
import threading

from kapiserver import errors
from kapiserver.controllers import concurrently
from kapiserver.flowcontrol.bootstrap import (AUTO_UPDATE_ANNOTATION, MANDATORY_FLOW_SCHEMAS,
                                              MANDATORY_PRIORITY_LEVELS, SUGGESTED_FLOW_SCHEMAS,
                                              SUGGESTED_PRIORITY_LEVELS)

log = logging.getLogger(__name__)

GROUP = "flowcontrol.apiserver.k8s.io"
#: The field manager of the bootstrap objects, upstream's.
MANAGER = "api-priority-and-fairness-config-producer-v1"
#: Seconds between two checks of the bootstrap objects.
PERIOD = 60.0
KINDS = (
    ("prioritylevelconfigurations", "PriorityLevelConfiguration", MANDATORY_PRIORITY_LEVELS,
     SUGGESTED_PRIORITY_LEVELS),
    ("flowschemas", "FlowSchema", MANDATORY_FLOW_SCHEMAS, SUGGESTED_FLOW_SCHEMAS),
)


def should_update_spec(obj: dict) -> bool:
    """``shouldUpdateSpec``: the annotation says so, or (unreadable or missing) the object
    is as it was made."""
    meta = obj.get("metadata") or {}
    value = (meta.get("annotations") or {}).get(AUTO_UPDATE_ANNOTATION)
    parsed = _parse_bool(value)
    if parsed is not None:
        return parsed
    return meta.get("generation") == 1


def _parse_bool(value) -> bool | None:
    """Go's ``strconv.ParseBool``."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def _ensure_one(registry, kind: str, name: str, spec: dict, mandatory: bool, manage) -> None:
    try:
        current = registry.get("", name)
    except errors.NotFound:
        obj = {"apiVersion": f"{GROUP}/v1", "kind": kind,
               "metadata": {"name": name, "annotations": {AUTO_UPDATE_ANNOTATION: "true"}},
               "spec": spec}
        try:
            registry.create(obj, manage=manage)
        except errors.AlreadyExists:
            pass
        return
    annotations = (current.get("metadata") or {}).get("annotations") or {}
    if mandatory:
        wanted = current.get("spec") != spec or annotations.get(AUTO_UPDATE_ANNOTATION) != "true"
    else:
        wanted = should_update_spec(current) and current.get("spec") != spec
    if not wanted:
        return

    def mutate(obj: dict) -> dict:
        obj["spec"] = spec
        meta = obj.setdefault("metadata", {})
        meta.setdefault("annotations", {})[AUTO_UPDATE_ANNOTATION] = "true"
        return obj

    registry.guaranteed_update("", name, mutate, manage=manage)
    log.info("priority and fairness: %s %s brought back to its bootstrap spec", kind, name)


def _remove_unwanted(registry, kind: str, names) -> None:
    for obj in registry.list()["items"]:
        meta = obj.get("metadata") or {}
        if meta.get("name") in names:
            continue
        if (meta.get("annotations") or {}).get(AUTO_UPDATE_ANNOTATION) != "true":
            continue
        try:
            registry.delete("", meta["name"])
            log.info("priority and fairness: %s %s is no longer a bootstrap object",
                     kind, meta["name"])
        except errors.NotFound:
            pass


def ensure(server) -> None:
    """Create or restore the bootstrap objects (see the module docstring)."""
    for resource, kind, mandatory, suggested in KINDS:
        registry = server.registries[(GROUP, resource)]
        manage = registry.field_manager(MANAGER)
        wanted = [(name, spec, True) for name, spec in mandatory.items()]
        wanted += [(name, spec, False) for name, spec in suggested.items()]
        # Together, the writes share fsyncs (the store's group commit).
        concurrently(lambda item, registry=registry, kind=kind, manage=manage:
                     _ensure_one(registry, kind, *item, manage), wanted)
        _remove_unwanted(registry, kind, set(mandatory) | set(suggested))


def produce(server) -> None:
    """The ``priority-and-fairness-config-producer`` post-start hook: ensure now, and
    every ``PERIOD`` seconds until the server stops."""
    # One worker at a time: the first makes the objects, the others find them made.
    taking_turns = getattr(server, "taking_turns", None)
    with taking_turns("apf-bootstrap") if taking_turns else contextlib.nullcontext():
        ensure(server)

    def loop():
        while not server.stopping.wait(PERIOD):
            try:
                ensure(server)
            except Exception as err:  # the store may be down for a while
                log.warning("priority and fairness: bootstrap objects not checked: %s", err)

    threading.Thread(target=loop, name="apf-config-producer", daemon=True).start()
