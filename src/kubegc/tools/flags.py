"""Value types of kubegc's command-line flags, shared by ``kubegc serve`` and the tools:
each checks one kind of value and, when it is wrong, says what is accepted
(``argparse.ArgumentTypeError``, which the command line prints as one line).

* ``port``, ``positive_int``, ``non_negative_int``, ``positive_seconds``,
  ``non_negative_seconds``: numbers in range;
* ``parse_duration``: ``90``, ``30s``, ``5m``, ``1h30m``, ``2 days``;
* ``parse_when`` (``--now``): what ``date -d`` users type — RFC 3339, ``2026-01-01 10:00``,
  ``@EPOCH``, ``now``/``today``/``yesterday``/``tomorrow``, ``-5m``, ``+1h``,
  ``5 minutes ago``, ``in 2 hours``;
* ``HelpFormatter``: keeps a help text that has line breaks (the examples) as written.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from kubegc.api.clock import parse_time

_UNITS: dict[str, float] = {}
for _names, _seconds in ((("s", "sec", "secs", "second", "seconds"), 1),
                         (("m", "min", "mins", "minute", "minutes"), 60),
                         (("h", "hr", "hrs", "hour", "hours"), 3600),
                         (("d", "day", "days"), 86400),
                         (("w", "week", "weeks"), 7 * 86400)):
    _UNITS.update(dict.fromkeys(_names, _seconds))
_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
_PART = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]+)\s*")

#: what ``--now`` accepts, for its help and its error
NOW_FORMATS = ("RFC 3339 (2026-01-01T10:00:00Z; UTC when no zone is given), "
               "'2026-01-01 10:00', 2026-01-01, @EPOCH-SECONDS, now, today, yesterday, "
               "tomorrow, or relative to now: -5m, +1h30m, '5 minutes ago', 'in 2 hours'")


def _duration_seconds(text: str) -> float | None:
    """Seconds in ``90``, ``30s``, ``1h30m``, ``2 days``; None if it is not one."""
    value = text.strip().lower()
    if _NUMBER.fullmatch(value):
        return float(value)
    total, at = 0.0, 0
    while at < len(value):
        match = _PART.match(value, at)
        if match is None or match.group(2) not in _UNITS:
            return None
        total += float(match.group(1)) * _UNITS[match.group(2)]
        at = match.end()
    return total if value else None


def parse_duration(text: str) -> float:
    seconds = _duration_seconds(text)
    if seconds is None:
        raise argparse.ArgumentTypeError(
            f"not a duration: {text!r} (seconds, or with units: 30s, 5m, 1h30m, 2d)")
    return seconds


def parse_when(text: str, *, now: datetime | None = None) -> datetime:
    """The time ``text`` names (see ``NOW_FORMATS``), relative ones from ``now``."""
    value = " ".join(text.strip().lower().split())
    current = now or datetime.now(UTC)
    named = {"now": 0.0, "today": 0.0, "yesterday": -86400.0, "tomorrow": 86400.0}
    if value in named:
        return current + timedelta(seconds=named[value])
    if value.startswith("@"):
        try:
            return datetime.fromtimestamp(float(value[1:]), UTC)
        except (ValueError, OverflowError, OSError):
            pass
    offset = _relative(value)
    if offset is not None:
        return current + timedelta(seconds=offset)
    try:
        return parse_time(text.strip().replace(" ", "T", 1))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a time: {text!r}; use {NOW_FORMATS}") from None


def add_now(group: argparse._ActionsContainer) -> None:
    """The tools' ``--now`` flag (a datetime in ``args.now``, or None)."""
    group.add_argument("--now", type=parse_when, default=None, metavar="TIME",
                       help="judge ages at this time instead of now (for a dump file: "
                            f"instead of its modification time): {NOW_FORMATS}".replace(
                                "%", "%%"))


def _relative(value: str) -> float | None:
    """Signed seconds of ``-5m``, ``+1h``, ``5 minutes ago``, ``in 2 hours``."""
    if value.endswith(" ago"):
        seconds = _duration_seconds(value[:-4])
        return None if seconds is None else -seconds
    if value.startswith("in "):
        return _duration_seconds(value[3:])
    if value[:1] in "+-" and value[1:2].strip():
        seconds = _duration_seconds(value[1:])
        return None if seconds is None else (seconds if value[0] == "+" else -seconds)
    return None


def _number(kind: Callable[[str], float], what: str, low: float, *, strict: bool,
            high: float = math.inf) -> Callable[[str], float]:
    def check(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and (value > low if strict else value >= low)
                and value <= high):
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
        return value

    return check


port = _number(int, "a port (0-65535; 0: any free port)", 0, strict=False, high=65535)
positive_int = _number(int, "a positive whole number", 0, strict=True)
non_negative_int = _number(int, "a whole number >= 0", 0, strict=False)
positive_seconds = _number(float, "a positive number of seconds", 0, strict=True)
non_negative_seconds = _number(float, "a number of seconds >= 0", 0, strict=False)
positive_number = _number(float, "a positive number", 0, strict=True)


class HelpFormatter(argparse.HelpFormatter):
    """Wraps help texts as usual, but keeps one that has line breaks (a list of examples)
    as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if "\n" in text:
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def examples(*lines: str) -> str:
    """An ``epilog`` listing examples (``%(prog)s`` is the command's name)."""
    return "examples:\n" + "".join(f"  {line}\n" for line in lines)
