"""Warnings for the client, added from anywhere a request's work reaches.

Mirrors upstream's ``k8s.io/apiserver/pkg/warning``, which hangs a recorder on the
request's ``context.Context``: code deep in a strategy calls ``warning.AddWarning(ctx, "",
text)`` and the text becomes a ``Warning: 299 - "..."`` header. Strategies here are not
handed the request, so the recorder is a ``ContextVar``: set for the time a request is
served (:func:`recording`), and private to that request's greenlet or thread — two
requests, or two servers in one process, never see each other's. Outside a request
:func:`add_warning` does nothing. :func:`header_texts` is what upstream's recorder lets
through to the headers.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

__all__ = ["add_warning", "header_texts", "recording"]

#: ``truncateAtTotalRunes`` and ``truncateItemRunes`` of upstream's warning recorder
#: (``apiserver/pkg/endpoints/filters/warning.go``).
TOTAL_LIMIT = 4 * 1024
ITEM_LIMIT = 256

_SINK: ContextVar[list | None] = ContextVar("kapiserver.warnings", default=None)


def add_warning(text: str) -> None:
    """Add ``text`` to the warnings of the request being served."""
    sink = _SINK.get()
    if sink is not None and text:
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


def header_texts(texts) -> list[str]:
    """The texts of the ``Warning`` headers for warnings added in the order of ``texts``,
    as upstream's recorder writes them: each text once; when they would pass 4096
    characters in all, every one is cut to 256 characters, and once those reach 4096 the
    rest are dropped."""
    out, ordered, seen = [], [], set()
    written, truncating = 0, False
    for text in texts:
        if not text:
            continue
        if truncating and written >= TOTAL_LIMIT:
            break
        if text in seen:
            continue
        seen.add(text)
        ordered.append(text)
        if truncating and len(text) > ITEM_LIMIT:
            text = text[:ITEM_LIMIT]
        if written + len(text) <= TOTAL_LIMIT or truncating:
            written += len(text)
            out.append(text)
            continue
        # Over the limit: start again with every text so far cut short.
        truncating = True
        out = [t[:ITEM_LIMIT] for t in ordered]
        written = sum(len(t) for t in out)
    return out
