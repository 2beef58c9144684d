"""Warnings for the client, added from anywhere a request's work reaches (upstream's
``k8s.io/apiserver/pkg/warning``).

Upstream hangs a recorder on the request's ``context.Context``: code deep in a strategy
calls ``warning.AddWarning(ctx, "", text)`` and the text becomes a ``Warning: 299 - "..."``
header. Strategies here are not handed the request, so the recorder is a ``ContextVar``:
set for the time a request is served (:func:`recording`), and private to that request's
greenlet or thread — two requests, or two servers in one process, never see each other's.
Outside a request :func:`add_warning` does nothing.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

__all__ = ["add_warning", "recording"]

_SINK: ContextVar[list | None] = ContextVar("kapiserver.warnings", default=None)


def add_warning(text: str) -> None:
    """Add ``text`` to the warnings of the request being served; a text already there is
    not added twice (upstream's recorder keeps each text once)."""
    sink = _SINK.get()
    if sink is not None and text and text not in sink:
        sink.append(text)


@contextlib.contextmanager
def recording(sink: list):
    """Collect the warnings added while the block runs into ``sink`` (a request's
    ``RequestContext.warnings``)."""
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)
