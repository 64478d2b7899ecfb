"""Human-readable durations, as apimachinery's ``pkg/util/duration``.

``human_duration`` is ``HumanDuration`` (Age columns, restart times, job durations);
``short_human_duration`` is ``ShortHumanDuration``. Both print ``<invalid>`` for a duration
more than a second negative (a timestamp in the future) and ``0s`` for a smaller skew.
"""

from __future__ import annotations


def human_duration(seconds: float) -> str:
    """``duration.HumanDuration``: ~2-3 significant figures ("26s", "5m10s", "3h12m", "2d")."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    if secs < 120:
        return f"{secs}s"
    minutes = secs // 60
    if minutes < 10:
        return f"{minutes}m" if secs % 60 == 0 else f"{minutes}m{secs % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = secs // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, (hours // 24) % 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


def short_human_duration(seconds: float) -> str:
    """``duration.ShortHumanDuration``: one unit ("26s", "5m", "3h", "2d", "1y")."""
    secs = int(seconds)
    if secs < -1:
        return "<invalid>"
    if secs < 0:
        return "0s"
    for unit, size, limit in (("s", 1, 60), ("m", 60, 3600), ("h", 3600, 86400),
                              ("d", 86400, 86400 * 365)):
        if secs < limit:
            return f"{secs // size}{unit}"
    return f"{secs // (86400 * 365)}y"
