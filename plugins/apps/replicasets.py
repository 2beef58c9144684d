"""ReplicaSets: ``SetDefaults_ReplicaSet``, ``ValidateReplicaSet``/``…Update``/``…Status``,
``status`` and ``scale``, and the DESIRED/CURRENT/READY Table."""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath
from kapiserver.apimachinery.selector_validation import go_label_selector
from kapiserver.apimachinery.validation import validate_object_meta_update
from kapiserver.registry.builtin import builtin_spec
from kapiserver.registry.builtin_strategy import ScaleAccessor

from . import workloads as w
from .base import AppsStrategy

#: Field selectors: name and namespace only. ``GetAttrs`` offers ``status.replicas`` too,
#: but apps/v1 registers no field label conversion, so upstream's default one refuses it.
REPLICASETS = builtin_spec("apps", "v1", "replicasets")
STATUS_COUNTERS = ("replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                   "observedGeneration")


def set_replica_set_defaults(obj: dict) -> None:
    """``SetDefaults_ReplicaSet`` and the pod template's defaults."""
    spec = obj.setdefault("spec", {})
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    w.set_template_defaults(spec)


def validate_replica_set_spec(spec: dict, path: FieldPath, opts) -> list[FieldError]:
    """``ValidateReplicaSetSpec``."""
    errs = w.nonnegative(spec, "replicas", path)
    errs += w.nonnegative(spec, "minReadySeconds", path)
    # Upstream's wording, "deployment" included.
    errs += w.validate_selector(spec, path, "deployment")
    selector = w.parse_selector(spec)
    if selector is None:
        errs.append(FieldError.invalid(path.child("selector"),
                                       go_label_selector(spec.get("selector")),
                                       "invalid label selector"))
    else:
        errs += w.validate_pod_template_for_replica_set(w.template_of(spec), selector,
                                                        path.child("template"), opts)
    return errs


def validate_replica_set_status(status: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateReplicaSetStatus``."""
    errs = w.validate_counters(status, path, STATUS_COUNTERS)
    for key in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
        errs += w.not_above(status, key, "replicas", path)
    errs += w.not_above(status, "availableReplicas", "readyReplicas", path,
                        "cannot be greater than readyReplicas")
    return errs


class ReplicaSetStrategy(AppsStrategy):
    """``pkg/registry/apps/replicaset`` strategy."""

    template_path = "spec.template"
    has_generation = True
    scale = ScaleAccessor()

    def set_defaults(self, obj):
        set_replica_set_defaults(obj)

    def validate(self, obj):
        spec = w.spec_of(obj)
        opts = w.pod_validation_options(w.template_of(spec))
        return super().validate(obj) + validate_replica_set_spec(spec, FieldPath("spec"), opts)

    def warnings_on_create(self, obj):
        return w.name_warnings(obj)

    def validate_update(self, new, old):
        # ValidateReplicaSet, ValidateReplicaSetUpdate (which checks the spec again), and
        # the selector's immutability: upstream's ValidateUpdate, repeats included.
        spec, old_spec = w.spec_of(new), w.spec_of(old)
        opts = w.pod_validation_options(w.template_of(spec), w.template_of(old_spec))
        errs = super().validate(new) + validate_replica_set_spec(spec, FieldPath("spec"), opts)
        errs += validate_object_meta_update(new.get("metadata") or {}, old.get("metadata") or {})
        errs += validate_replica_set_spec(spec, FieldPath("spec"), opts)
        return errs + w.selector_immutable(spec, old_spec)

    def validate_status(self, new, old):
        return validate_replica_set_status(w.as_dict(new.get("status")), FieldPath("status"))

    def selectable_fields(self, obj):
        # GetAttrs (unreachable through apps/v1 selectors; see REPLICASETS).
        fields = super().selectable_fields(obj)
        fields["status.replicas"] = str(w.as_int(w.as_dict(obj.get("status")).get("replicas")))
        return fields

    def table_cells(self, obj):
        spec, status = w.spec_of(obj), w.as_dict(obj.get("status"))
        names, images = w.container_cells(w.template_spec_of(spec))
        return [obj["metadata"].get("name", ""), w.as_int(spec.get("replicas")),
                w.as_int(status.get("replicas")), w.as_int(status.get("readyReplicas")),
                w.created(obj), names, images, w.format_label_selector(spec.get("selector"))]
