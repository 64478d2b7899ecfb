"""Terminal styling: ANSI colours when the output is a terminal, plain text otherwise.

Colour is on when ``--color=always``, or ``auto`` (the default) and the stream is a TTY
and ``NO_COLOR`` is unset or empty (https://no-color.org). Wrapping keeps hanging
indents; its width is the terminal's, or ``DEFAULT_WIDTH`` when not a terminal (so files
and golden tests are stable).
"""

from __future__ import annotations

import os
import shutil
import textwrap
from dataclasses import dataclass
from typing import TextIO

DEFAULT_WIDTH = 100

_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34",
          "magenta": "35", "cyan": "36"}


def use_color(stream: TextIO, mode: str = "auto") -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def terminal_width(stream: TextIO) -> int:
    isatty = getattr(stream, "isatty", None)
    if isatty and isatty():
        return max(60, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    return DEFAULT_WIDTH


#: Entries of a long list (a plan's steps ...) that the text shows by default.
DEFAULT_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Style:
    color: bool = False
    width: int = DEFAULT_WIDTH
    limit: int | None = DEFAULT_LIMIT  # entries of a long list shown; None: all

    def paint(self, text: str, *styles: str) -> str:
        if not self.color or not styles:
            return text
        codes = ";".join(_CODES[s] for s in styles)
        return f"\x1b[{codes}m{text}\x1b[0m"

    def bold(self, text: str) -> str:
        return self.paint(text, "bold")

    def dim(self, text: str) -> str:
        return self.paint(text, "dim")

    def red(self, text: str) -> str:
        return self.paint(text, "red")

    def green(self, text: str) -> str:
        return self.paint(text, "green")

    def yellow(self, text: str) -> str:
        return self.paint(text, "yellow")

    def cyan(self, text: str) -> str:
        return self.paint(text, "cyan")

    def wrap(self, text: str, *, indent: str, hanging: str | None = None) -> list[str]:
        """``text`` wrapped to the width: first line after ``indent``, the rest after
        ``hanging`` (default: as many spaces as ``indent`` is wide). Apply colour after."""
        rest = hanging if hanging is not None else " " * len(indent)
        return textwrap.wrap(text, width=self.width, initial_indent=indent,
                             subsequent_indent=rest, break_on_hyphens=False,
                             break_long_words=False) or [indent.rstrip()]
