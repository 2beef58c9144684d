"""Helpers for Table cells, worded as upstream's printers (``duration.HumanDuration``)."""

from __future__ import annotations

import calendar
import time


def human_duration(seconds: float) -> str:
    """Upstream's ``duration.HumanDuration``: ``0s``, ``90s``, ``5m3s``, ``3h2m``, ``4d``…"""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def age(timestamp: str | None, now: float | None = None) -> str:
    """The AGE cell of an object created at RFC 3339 ``timestamp`` (``<unknown>`` if unset)."""
    if not timestamp:
        return "<unknown>"
    created = calendar.timegm(time.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ"))
    return human_duration((time.time() if now is None else now) - created)


NAME_COLUMN = {
    "name": "Name", "type": "string", "format": "name",
    "description": "Name must be unique within a namespace. Is required when creating "
                   "resources, although some resources may allow a client to request the "
                   "generation of an appropriate name automatically. Name is primarily "
                   "intended for creation idempotence and configuration definition. Cannot "
                   "be updated. More info: https://kubernetes.io/docs/concepts/overview/"
                   "working-with-objects/names#names",
    "priority": 0}
AGE_COLUMN = {
    "name": "Age", "type": "string", "format": "",
    "description": "CreationTimestamp is a timestamp representing the server time when this "
                   "object was created. It is not guaranteed to be set in happens-before order "
                   "across separate operations. Clients may not set this value. It is "
                   "represented in RFC3339 form and is in UTC.\n\nPopulated by the system. "
                   "Read-only. Null for lists. More info: https://git.k8s.io/community/"
                   "contributors/devel/sig-architecture/api-conventions.md#metadata",
    "priority": 0}
