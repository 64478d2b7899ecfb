"""CronJob schedules parsed as ``cron.ParseStandard`` (robfig/cron v3) parses them, with its
error texts: five fields (minute, hour, day of month, month, day of week) or a descriptor
(``@daily``, ``@every 1h``)."""

from __future__ import annotations

import re

#: (name, minimum, maximum, names) of the five standard fields
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("dom", 1, 31, {}),
    ("month", 1, 12, {m: i + 1 for i, m in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"))}),
    ("dow", 0, 6, {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}),
)
_DESCRIPTORS = frozenset(("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight",
                          "@hourly"))
_DURATION = re.compile(r"^([0-9]*(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$")


def schedule_error(spec: str) -> str | None:
    """The error ``cron.ParseStandard(spec)`` returns, or None when it parses."""
    if not spec:
        return "empty spec string"
    if spec.startswith(("TZ=", "CRON_TZ=")):
        _, _, spec = spec.partition(" ")
        spec = spec.strip()
    if spec.startswith("@"):
        return _descriptor(spec)
    fields = spec.split()
    if len(fields) != 5:
        return f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]"
    for text, (_, low, high, names) in zip(fields, _FIELDS, strict=True):
        for expr in text.split(","):
            error = _range(expr, low, high, names)
            if error:
                return error
    return None


def _descriptor(spec: str) -> str | None:
    if spec in _DESCRIPTORS:
        return None
    if spec.startswith("@every "):
        duration = spec[len("@every "):]
        if not _DURATION.match(duration) or duration in ("", "."):
            return f"failed to parse duration {spec}: time: invalid duration \"{duration}\""
        return None
    return f"unrecognized descriptor: {spec}"


def _range(expr: str, low: int, high: int, names: dict[str, int]) -> str | None:
    """``getRange``: ``*``, ``?``, ``a``, ``a-b``, each optionally ``/step``."""
    range_and_step = expr.split("/")
    if len(range_and_step) > 2:
        return f"too many slashes: {expr}"
    bounds = range_and_step[0].split("-")
    if bounds[0] in ("*", "?"):
        start, end, extra = low, high, True
    else:
        parsed = [_value(b, names) for b in bounds]
        for value in parsed:
            if isinstance(value, str):
                return value
        if len(bounds) > 2:
            return f"too many hyphens: {expr}"
        start = end = int(parsed[0])
        if len(bounds) == 2:
            end = int(parsed[1])
        extra = False
    if len(range_and_step) == 2:
        step = _value(range_and_step[1], {})
        if isinstance(step, str):
            return step
        if step <= 0:
            return f"step of range should be a positive number: {expr}"
        if not extra and len(bounds) == 1:
            end = high
    if start < low:
        return f"beginning of range ({start}) below minimum ({low}): {expr}"
    if end > high:
        return f"end of range ({end}) above maximum ({high}): {expr}"
    if start > end:
        return f"beginning of range ({start}) beyond end of range ({end}): {expr}"
    return None


def _value(text: str, names: dict[str, int]) -> int | str:
    """``parseIntOrName``: a name of the field, else a non-negative integer (``mustParseInt``)."""
    if text.lower() in names:
        return names[text.lower()]
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        return f'failed to parse int from {text}: strconv.Atoi: parsing "{text}": invalid syntax'
    value = int(text)
    if value < 0:
        return f"negative number ({value}) not allowed: {text}"
    return value
