"""Schedule arithmetic and Job construction of the CronJob controller
(cf. pkg/controller/cronjob/utils.go), on top of ``croniter``.

Times are timezone-aware; a CronJob's schedule is evaluated in ``spec.timeZone`` (or a
``CRON_TZ=``/``TZ=`` prefix of the schedule), UTC by default, and every result is UTC.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import croniter

from kubegc.api.clock import parse_time
from kubegc.api.meta import name_of
from kubegc.api.types import Obj
from kubegc.controllers.controller_utils import new_controller_ref

SCHEDULED_TIMESTAMP_ANNOTATION = "batch.kubernetes.io/cronjob-scheduled-timestamp"
#: Added to the wait for the next schedule, so the sync lands just after it.
NEXT_SCHEDULE_DELTA = 0.1
#: More missed schedules than this raise the ``TooManyMissedTimes`` warning.
MANY_MISSED = 100


class ScheduleError(ValueError):
    """The schedule cannot be parsed or never fires."""


def load_time_zone(name: str) -> tzinfo:
    """``time.LoadLocation``; raises ValueError("unknown time zone X")."""
    if name in ("", "UTC"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown time zone {name}") from None


@dataclass(frozen=True)
class Schedule:
    """A parsed cron expression in a time zone."""

    expression: str
    zone: tzinfo

    @classmethod
    def parse(cls, schedule: str, time_zone: str | None) -> Schedule:
        text, zone_name = schedule.strip(), time_zone or ""
        for prefix in ("CRON_TZ=", "TZ="):
            if text.startswith(prefix):
                zone_name, _, text = text[len(prefix):].partition(" ")
                text = text.strip()
        try:
            zone = load_time_zone(zone_name)
        except ValueError as err:
            raise ScheduleError(f"provided bad location {zone_name}: {err}") from None
        if not croniter.is_valid(text):
            raise ScheduleError(f"expected exactly 5 fields, found {len(text.split())}: {text}"
                                if len(text.split()) != 5 else f"invalid schedule: {text}")
        return cls(text, zone)

    def next(self, after: datetime) -> datetime:
        """The first activation strictly after ``after``."""
        result: datetime = croniter(self.expression, after.astimezone(self.zone)).get_next(
            datetime)
        return result.astimezone(UTC)

    def most_recent(self, now: datetime) -> datetime:
        """The last activation at or before ``now``."""
        candidate = self.next(now - timedelta(microseconds=1))
        if candidate <= now:
            return candidate
        result: datetime = croniter(self.expression, now.astimezone(self.zone)).get_prev(
            datetime)
        return result.astimezone(UTC)


@dataclass(frozen=True)
class Recent:
    earliest: datetime
    most_recent: datetime | None
    many_missed: bool


def _time(value: Any) -> datetime | None:
    return parse_time(str(value)) if value else None


def most_recent_schedule_time(cj: Obj, now: datetime, schedule: Schedule, *,
                              include_starting_deadline: bool) -> Recent:
    """The most recent unmet activation since the last one (cf. ``mostRecentScheduleTime``)."""
    meta, spec = cj.get("metadata") or {}, cj.get("spec") or {}
    earliest = _time((cj.get("status") or {}).get("lastScheduleTime")) or _time(
        meta.get("creationTimestamp")) or now
    deadline = spec.get("startingDeadlineSeconds")
    if include_starting_deadline and deadline is not None:
        earliest = max(earliest, now - timedelta(seconds=int(deadline)))
    t1 = schedule.next(earliest)
    t2 = schedule.next(t1)
    if now < t1:
        return Recent(earliest, None, False)
    if now < t2:
        return Recent(earliest, t1, False)
    interval = round((t2 - t1).total_seconds())
    if interval < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    missed = int((now - t1).total_seconds()) // interval + 1
    return Recent(earliest, schedule.most_recent(now), missed > MANY_MISSED)


def next_schedule_delay(cj: Obj, now: datetime, schedule: Schedule) -> float | None:
    """Seconds until just after the next activation (cf. ``nextScheduleTimeDuration``)."""
    try:
        recent = most_recent_schedule_time(cj, now, schedule, include_starting_deadline=False)
    except ScheduleError:
        return None
    base = recent.most_recent or recent.earliest
    return (schedule.next(base) - now).total_seconds() + NEXT_SCHEDULE_DELTA


def job_name(cj: Obj, scheduled: datetime) -> str:
    """``<cronjob>-<scheduled time in minutes since the epoch>``."""
    return f"{name_of(cj)}-{int(scheduled.timestamp()) // 60}"


def job_from_template(cj: Obj, scheduled: datetime, schedule: Schedule) -> Obj:
    """The Job to create for the activation at ``scheduled`` (cf. ``getJobFromTemplate2``)."""
    template = (cj.get("spec") or {}).get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    annotations = dict(tmeta.get("annotations") or {})
    annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = scheduled.astimezone(
        schedule.zone).isoformat().replace("+00:00", "Z")
    meta: dict[str, Any] = {
        "name": job_name(cj, scheduled), "annotations": annotations,
        "ownerReferences": [new_controller_ref(cj, "batch/v1", "CronJob")],
    }
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": copy.deepcopy(template.get("spec") or {})}


def job_start_key(job: Obj) -> tuple[int, str, str]:
    """Sort key of ``byJobStartTime``: started jobs first, oldest first, then by name."""
    start = (job.get("status") or {}).get("startTime")
    return (0 if start else 1, str(start or ""), name_of(job))
