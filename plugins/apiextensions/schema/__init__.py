"""Structural schemas of custom resources: validation, defaulting and pruning."""

from .defaulting import default, prune_nulls
from .pruning import prune
from .validation import validate, validate_list_types

__all__ = ["default", "prune", "prune_nulls", "validate", "validate_list_types"]
