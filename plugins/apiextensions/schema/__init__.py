"""Structural schemas of custom resources: validation, defaulting and pruning."""

from .defaulting import default, prune_nulls
from .listtype import validate_list_types
from .objectmeta import validate_embedded_resources
from .pruning import prune
from .validation import has_extensions, validate, validate_openapi_update

__all__ = ["default", "has_extensions", "prune", "prune_nulls", "validate",
           "validate_embedded_resources", "validate_list_types", "validate_openapi_update"]
