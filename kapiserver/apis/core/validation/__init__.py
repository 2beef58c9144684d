"""Validation of pod specs, pod templates and Pods, as kube-apiserver 1.32 words it.

Ports the pod parts of ``pkg/apis/core/validation`` (``ValidatePodSpec``,
``ValidatePodTemplateSpec``, ``ValidatePodCreate``, ``ValidatePodUpdate``,
``ValidatePodStatusUpdate``, ``ValidatePodEphemeralContainersUpdate``,
``ValidatePodBinding``) with upstream's messages and field paths, split by concern:
``volumes``, ``containers``, ``env``, ``probes``, ``resources``, ``security``,
``scheduling``, ``dns``, ``pod`` (specs, templates, create) and ``update``. Every function
takes decoded JSON (the v1 form) and returns a list of
:class:`~kapiserver.apimachinery.field_errors.FieldError`; an empty list means valid.
"""

from .options import (PodValidationOptions, pod_template_validation_options,
                      pod_validation_options, validation_options_from_pod_spec_and_meta)
from .pod import (validate_pod_create, validate_pod_metadata_and_spec, validate_pod_spec,
                  validate_pod_template, validate_pod_template_spec,
                  validate_pod_template_spec_for_rc, validate_pod_template_spec_update,
                  validate_pod_template_update)
from .update import (validate_pod_binding, validate_pod_ephemeral_containers_update,
                     validate_pod_status_update, validate_pod_update)

__all__ = [
    "PodValidationOptions", "pod_validation_options", "pod_template_validation_options",
    "validation_options_from_pod_spec_and_meta",
    "validate_pod_spec", "validate_pod_template_spec", "validate_pod_template_spec_update",
    "validate_pod_template_spec_for_rc", "validate_pod_template", "validate_pod_template_update",
    "validate_pod_metadata_and_spec", "validate_pod_create", "validate_pod_update",
    "validate_pod_status_update", "validate_pod_ephemeral_containers_update",
    "validate_pod_binding",
]
