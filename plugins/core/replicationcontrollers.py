"""ReplicationControllers (with ``status`` and ``scale``): ``pkg/registry/core/
replicationcontroller``.

The selector and the object's labels default to the template's labels
(``SetDefaults_ReplicationController``), replicas to 1; the template gets the pod spec's
defaults and validation plus the controller's own rules (``ValidatePodTemplateSpecForRC``:
labels matching the selector, ``restartPolicy: Always``, no ``activeDeadlineSeconds``).
The Scale's selector is the map selector's text (``labels.SelectorFromSet``).
"""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath, GoValue
from kapiserver.apimachinery.gosyntax import go_string_map
from kapiserver.apimachinery.labels import selector_from_set
from kapiserver.apimachinery.validation import (validate_core_object_meta_update,
                                                validate_nonnegative_field)
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import ScaleAccessor
from kapiserver.registry.printers import age

from .kind_helpers import (CoreStrategy, as_dict, as_int, container_cells, format_labels, meta_of,
                           spec_of, status_of)
from .templates import (drop_disabled_template_fields, set_template_defaults,
                        validate_template_for_rc, validation_options)

REPLICATION_CONTROLLERS = builtin_spec("", "v1", "replicationcontrollers",
                                       selectable_fields=("status.replicas",))
#: ``core.NonConvertibleAnnotationPrefix``: fields a conversion from another kind lost.
NON_CONVERTIBLE_PREFIX = "non-convertible.kubernetes.io"
NOT_GREATER_THAN_REPLICAS = "cannot be greater than status.replicas"
SPEC = FieldPath("spec")


def set_controller_defaults(obj: dict) -> None:
    """``SetObjectDefaults_ReplicationController``."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        spec = obj["spec"] = {}
    template = spec.get("template")
    if isinstance(template, dict):
        labels = as_dict(template.get("metadata")).get("labels")
        if isinstance(labels, dict):
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = obj.setdefault("metadata", {})
            if not meta.get("labels"):
                meta["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if isinstance(template, dict):
        set_template_defaults(template)


def validate_controller_spec(spec: dict, path: FieldPath, opts) -> list:
    """``ValidateReplicationControllerSpec``."""
    selector = as_dict(spec.get("selector"))
    errs = validate_nonnegative_field(as_int(spec.get("minReadySeconds")),
                                      path.child("minReadySeconds"))
    if not selector:
        errs.append(FieldError.required(path.child("selector")))
    errs += validate_nonnegative_field(as_int(spec.get("replicas")), path.child("replicas"))
    errs += validate_template_for_rc(spec.get("template"), selector, path.child("template"),
                                     opts)
    return errs


def validate_controller_status(status: dict, path: FieldPath) -> list:
    """``ValidateReplicationControllerStatus``."""
    counts = {name: as_int(status.get(name)) for name in (
        "replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
        "observedGeneration")}
    errs = []
    for name, value in counts.items():
        errs += validate_nonnegative_field(value, path.child(name))
    for name in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(FieldError.invalid(path.child(name), counts[name],
                                           NOT_GREATER_THAN_REPLICAS))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(FieldError.invalid(path.child("availableReplicas"),
                                       counts["availableReplicas"],
                                       "cannot be greater than readyReplicas"))
    return errs


def _non_convertible_errors(new: dict, old: dict) -> list:
    """Fields a conversion could not carry (``non-convertible.kubernetes.io/<field>``
    annotations of the old object) may not change."""
    errs = []
    annotations = as_dict(meta_of(old).get("annotations"))
    for key in sorted(annotations):
        if not key.startswith(NON_CONVERTIBLE_PREFIX):
            continue
        parts = key.split("/")
        if len(parts) != 2:
            continue
        broken = parts[1]
        if "selector" in broken:
            new_selector = spec_of(new).get("selector")
            if new_selector != spec_of(old).get("selector"):
                errs.append(FieldError.invalid(
                    SPEC.child("selector"),
                    GoValue(go_string_map(new_selector if isinstance(new_selector, dict)
                                          else None)),
                    "cannot update non-convertible selector"))
        else:
            errs.append(FieldError("FieldValueNotFound", broken, annotations[key],
                                   "unknown non-convertible field"))
    return errs


class ControllerScale(ScaleAccessor):
    """The Scale of a ReplicationController: its selector is a map."""

    def selector(self, obj: dict) -> str:
        return str(selector_from_set(as_dict(spec_of(obj).get("selector"))))


class ReplicationControllerStrategy(CoreStrategy):
    """``replicationcontroller.Strategy`` and its status strategy."""

    has_generation = True
    scale = ControllerScale()
    #: v1 ReplicationControllers orphan their pods by default, for backwards compatibility
    #: (upstream's ``DefaultGarbageCollectionPolicy``).
    default_garbage_collection_policy = "OrphanDependents"

    def set_defaults(self, obj):
        set_controller_defaults(obj)

    def on_create(self, obj):
        drop_disabled_template_fields(spec_of(obj).get("template"))

    def on_update(self, new, old):
        drop_disabled_template_fields(spec_of(new).get("template"),
                                      spec_of(old).get("template"))

    def validate(self, obj):
        template = spec_of(obj).get("template")
        opts = validation_options(template if isinstance(template, dict) else None)
        return super().validate(obj) + validate_controller_spec(spec_of(obj), SPEC, opts)

    def validate_update(self, new, old):
        # ValidateReplicationController and ValidateReplicationControllerUpdate, both of
        # which check the spec (upstream reports a spec error twice; the message once).
        template = spec_of(new).get("template")
        old_template = spec_of(old).get("template")
        opts = validation_options(template if isinstance(template, dict) else None,
                                  old_template if isinstance(old_template, dict) else None)
        errs = self.validate_meta(meta_of(new))
        errs += validate_controller_spec(spec_of(new), SPEC, opts)
        errs += validate_core_object_meta_update(meta_of(new), meta_of(old))
        errs += validate_controller_spec(spec_of(new), SPEC, opts)
        return errs + _non_convertible_errors(new, old)

    def validate_status(self, new, old):
        return validate_controller_status(status_of(new), FieldPath("status"))

    def selectable_fields(self, obj):
        fields = super().selectable_fields(obj)
        fields["status.replicas"] = str(as_int(status_of(obj).get("replicas")))
        return fields

    def table_cells(self, obj):
        meta, spec, status = meta_of(obj), spec_of(obj), status_of(obj)
        template = as_dict(spec.get("template"))
        names, images = container_cells(as_dict(template.get("spec")).get("containers"))
        return [meta.get("name", ""), as_int(spec.get("replicas")),
                as_int(status.get("replicas")), as_int(status.get("readyReplicas")),
                age(meta.get("creationTimestamp")), names, images,
                format_labels(spec.get("selector"))]


def install(server) -> dict:
    """The handlers of this module's resources, keyed as ``APIGroupInfo`` keys them."""
    from kapiserver.server.apigroups import builtin_handlers

    return builtin_handlers(server, ReplicationControllerStrategy(REPLICATION_CONTROLLERS))
