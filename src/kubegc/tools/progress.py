"""Progress on long reads, on stderr, only when stderr is a terminal (so pipes and files
stay clean): one line, rewritten in place, cleared when done."""

from __future__ import annotations

from typing import TextIO


class Progress:
    def __init__(self, stream: TextIO, *, enabled: bool | None = None) -> None:
        self.stream = stream
        isatty = getattr(stream, "isatty", None)
        self.enabled = bool(isatty and isatty()) if enabled is None else enabled
        self._shown = False

    def __call__(self, done: int, total: int, what: str) -> None:
        self.say(f"reading {done}/{total} resources ({what})")

    def say(self, message: str) -> None:
        if not self.enabled:
            return
        self.stream.write("\r\x1b[K" + message[:120])
        self.stream.flush()
        self._shown = True

    def done(self) -> None:
        if self.enabled and self._shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._shown = False
