"""Structural schemas of custom resources: validation, defaulting and pruning."""
