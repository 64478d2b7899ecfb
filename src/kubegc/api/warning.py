"""The request's warning recorder (cf. k8s.io/apiserver/pkg/warning ``AddWarning`` and
``filters.WithWarningRecorder``): what a layer below the server (an admission webhook's
``response.warnings``) adds is sent back as ``Warning: 299`` headers, on success and on
failure alike. Outside a request (in-process clients) nothing records, and warnings are
dropped, as upstream's ``AddWarning`` does without a recorder.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_recorder: ContextVar[list[str] | None] = ContextVar("kubegc_warnings", default=None)


def add_warning(text: str) -> None:
    """Record ``text`` for the current request (a duplicate is recorded once)."""
    recorded = _recorder.get()
    if recorded is not None and text and text not in recorded:
        recorded.append(text)


@contextmanager
def recording() -> Iterator[list[str]]:
    """Record the warnings added while the block runs (tasks it starts share the list)."""
    recorded: list[str] = []
    token = _recorder.set(recorded)
    try:
        yield recorded
    finally:
        _recorder.reset(token)


__all__ = ["add_warning", "recording"]
