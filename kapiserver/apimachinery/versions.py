"""Kube-aware version ordering (``version.CompareKubeAwareVersionStrings``)."""

from __future__ import annotations

import re

_KUBE_VERSION = re.compile(r"v(\d+)(?:(alpha|beta)(\d+))?")


def kube_version_key(version: str):
    """A sort key putting the best version first: GA, then beta, then alpha; higher major,
    then higher minor first; strings that are not kube versions last, alphabetically
    (``v10, v2, v1, v11beta2, v10beta3, v3beta1, v12alpha1, v11alpha2, foo1, foo10``)."""
    match = _KUBE_VERSION.fullmatch(version)
    if not match:
        return (1, 0, 0, 0, version)
    major, stage, minor = match.groups()
    return (0, {None: 0, "beta": 1, "alpha": 2}[stage], -int(major), -int(minor or 0), "")
