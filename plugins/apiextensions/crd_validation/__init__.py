"""Defaulting and validation of CustomResourceDefinitions, as kube-apiserver v1.32 does them.

Ports ``k8s.io/apiextensions-apiserver``: ``apis/apiextensions/v1/defaults.go`` (``defaults``)
and ``apis/apiextensions/validation/validation.go`` with the structural-schema checks of
``apiserver/schema`` (the other modules). Errors come back as ``FieldError`` lists with
upstream's messages and paths; the 422 ``Status`` is built from them by the registry.
"""

from kapiserver.apimachinery.field_errors import FieldError, FieldPath

from .crd import validate_crd, validate_crd_update
from .defaults import set_defaults
from .names import validate_status


def validate_crd_status(status: dict, path: FieldPath) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionStatus``: the accepted names of ``status``."""
    return validate_status(status, path)


__all__ = ["set_defaults", "validate_crd", "validate_crd_update", "validate_crd_status"]
