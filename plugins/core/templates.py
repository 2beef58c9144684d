"""The pod templates PodTemplates and ReplicationControllers embed: their defaults and
validation come from ``kapiserver.apis.core`` (the pod spec every workload shares); this
module only adapts them to where each kind keeps its template."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldPath


def set_template_defaults(template: dict) -> None:
    """``SetObjectDefaults_*`` reaching into a ``PodTemplateSpec`` (its spec's defaults)."""
    from kapiserver.apis.core.defaults import set_pod_template_spec_defaults

    if not isinstance(template.get("spec"), dict):
        template["spec"] = {}
    set_pod_template_spec_defaults(template)


def drop_disabled_template_fields(template, old_template=None) -> None:
    """``DropDisabledTemplateFields``: fields of features off in 1.32 leave the template's
    pod spec unless the stored template already uses them."""
    from .pods.disabled import drop_disabled_pod_spec_fields

    if isinstance(template, dict):
        old_spec = old_template.get("spec") if isinstance(old_template, dict) else None
        drop_disabled_pod_spec_fields(template.get("spec"),
                                      old_spec if isinstance(old_spec, dict) else None)


def validation_options(new: dict | None, old: dict | None = None):
    """``pod.GetValidationOptionsFromPodTemplate``: what a template may keep because the
    old one already had it."""
    from kapiserver.apis.core.validation import pod_template_validation_options

    return pod_template_validation_options(new, old)


def validate_template(template: dict, path: FieldPath, opts) -> list:
    """``ValidatePodTemplateSpec``: the template's labels, annotations and pod spec."""
    from kapiserver.apis.core.validation import validate_pod_template_spec

    return validate_pod_template_spec(template, path, opts)


def validate_template_for_rc(template, selector: dict, path: FieldPath, opts) -> list:
    """``ValidatePodTemplateSpecForRC``: required, its labels matching the selector,
    ``restartPolicy: Always``, no ``activeDeadlineSeconds``."""
    from kapiserver.apis.core.validation import validate_pod_template_spec_for_rc

    return validate_pod_template_spec_for_rc(template, selector, path, opts)
