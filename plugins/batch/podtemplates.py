"""The pod template every Job (and every CronJob's job template) embeds: its defaults and
validation are ``kapiserver.apis.core``'s; this module only calls them."""

from __future__ import annotations

from kapiserver.apimachinery.field_errors import FieldPath
from kapiserver.apis.core.defaults import set_pod_template_spec_defaults
from kapiserver.apis.core.validation import (pod_template_validation_options,
                                             validate_pod_template_spec)


def set_template_defaults(template: dict) -> None:
    """``SetObjectDefaults_*`` reaching into a ``PodTemplateSpec``: its spec's defaults."""
    if not isinstance(template.get("spec"), dict):
        template["spec"] = {}
    set_pod_template_spec_defaults(template)


def validation_options(new: dict | None, old: dict | None = None):
    """``pod.GetValidationOptionsFromPodTemplate``: what a template may keep because the
    old one already had it."""
    return pod_template_validation_options(new, old)


def validate_template(template: dict, path: FieldPath, opts) -> list:
    """``ValidatePodTemplateSpec``: the template's labels, annotations and pod spec."""
    return validate_pod_template_spec(template, path, opts)
