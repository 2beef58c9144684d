"""RuntimeClasses: ``ValidateRuntimeClass``/``Update`` of ``pkg/apis/node/validation`` and
the ``runtimeclass`` registry strategy, as in 1.32: the handler is a DNS label that never
changes, the overhead is validated as container limits, the scheduling's node selector as
labels and its tolerations as a pod's (each one once)."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue, go_quote
from kapiserver.apimachinery.validation import (name_is_dns_label, name_is_dns_subdomain,
                                                validate_immutable_field, validate_labels,
                                                validate_object_meta,
                                                validate_object_meta_update)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import BuiltinStrategy
from kapiserver.registry.printers import age

RUNTIME_CLASSES = builtin_spec("node.k8s.io", "v1", "runtimeclasses")


def _dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _str(value) -> str:
    return value if isinstance(value, str) else ""


def _go_toleration(toleration: dict) -> GoValue:
    """A ``core.Toleration`` as ``%#v`` prints it (a duplicate's bad value)."""
    seconds = toleration.get("tolerationSeconds")
    pointer = "(*int64)(0xc000000000)" if seconds is not None else "(*int64)(nil)"
    return GoValue("core.Toleration{" + ", ".join(
        f"{name}:{go_quote(_str(toleration.get(key)))}"
        for name, key in (("Key", "key"), ("Operator", "operator"), ("Value", "value"),
                          ("Effect", "effect"))) + f", TolerationSeconds:{pointer}}}")


def _validate_overhead(overhead: dict, path: FieldPath) -> list[FieldError]:
    """``validateOverhead``: ``podFixed`` checked as a container's resource limits."""
    from kapiserver.apis.core.validation.options import PodValidationOptions
    from kapiserver.apis.core.validation.resources import \
        validate_container_resource_requirements

    requirements = {"limits": _dict(overhead.get("podFixed"))}
    return validate_container_resource_requirements(requirements, set(), path,
                                                    PodValidationOptions())


def _validate_tolerations(tolerations: list, path: FieldPath) -> list[FieldError]:
    """``validateTolerations``: as a pod's, and no (key, operator, value, effect) twice."""
    from kapiserver.apis.core.validation.scheduling import validate_tolerations

    errs = validate_tolerations(tolerations, path)
    seen = set()
    for i, toleration in enumerate(tolerations):
        toleration = _dict(toleration)
        key = tuple(_str(toleration.get(k)) for k in ("key", "operator", "value", "effect"))
        if key in seen:
            errs.append(FieldError.duplicate(path.index(i), _go_toleration(toleration)))
        seen.add(key)
    return errs


def validate_runtime_class(obj: dict) -> list[FieldError]:
    """``ValidateRuntimeClass``."""
    errs = validate_object_meta(_dict(obj.get("metadata")), False, name_is_dns_subdomain)
    handler = _str(obj.get("handler"))
    errs += [FieldError.invalid(FieldPath("handler"), handler, msg)
             for msg in name_is_dns_label(handler)]
    if isinstance(obj.get("overhead"), dict):
        errs += _validate_overhead(obj["overhead"], FieldPath("overhead"))
    scheduling = obj.get("scheduling")
    if isinstance(scheduling, dict):
        path = FieldPath("scheduling")
        if isinstance(scheduling.get("nodeSelector"), dict):
            errs += validate_labels(scheduling["nodeSelector"], path.child("nodeSelector"))
        errs += _validate_tolerations(_list(scheduling.get("tolerations")),
                                      path.child("tolerations"))
    return errs


def validate_runtime_class_update(new: dict, old: dict) -> list[FieldError]:
    """``ValidateRuntimeClassUpdate``: the handler never changes."""
    errs = validate_object_meta_update(_dict(new.get("metadata")), _dict(old.get("metadata")))
    return errs + validate_immutable_field(_str(new.get("handler")), _str(old.get("handler")),
                                           FieldPath("handler"))


class RuntimeClassStrategy(BuiltinStrategy):
    """``pkg/registry/node/runtimeclass`` strategy: no generation; a PUT may create, but
    must name the resourceVersion it replaces; an update is checked by the create rules and
    the update rules."""

    allow_create_on_update = True
    allow_unconditional_update = False

    def validate(self, obj):
        return validate_runtime_class(obj)

    def validate_update(self, new, old):
        return validate_runtime_class(new) + validate_runtime_class_update(new, old)

    def table_cells(self, obj):
        meta = _dict(obj.get("metadata"))
        return [meta.get("name", ""), _str(obj.get("handler")),
                age(meta.get("creationTimestamp"))]
