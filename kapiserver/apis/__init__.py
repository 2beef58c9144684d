"""Shared definitions of built-in API groups that other groups embed (upstream's
``pkg/apis``): the core group's pod specs, their defaults and their validation."""
