"""The simulation's own log lines stay off the user's terminal.

The planner runs a whole kubegc in its process; its components log as they would in
``kubegc serve`` (a leader-election retry, an informer relist). Those lines are about the
simulation, not about the cluster the user asked about, so ``quiet_simulation()`` drops
every record logged from the simulation's tasks — the tasks started inside it, which
inherit its context variable — from the root logger's handlers (and Python's last-resort
handler), and counts the warnings and errors among them for the report. Records of other
tasks or threads (a test's own cluster, the caller) pass. When the ``kubegc`` logger is
enabled for INFO (a caller debugging the planner) they pass too.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections import Counter
from collections.abc import Iterator

_IN_SIMULATION: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "kubegc_plan_simulation", default=False)


class SimulationLog(logging.Filter):
    """Drops (unless ``verbose``) and counts the simulation's records."""

    def __init__(self, *, verbose: bool) -> None:
        super().__init__()
        self.verbose = verbose
        self.counts: Counter[str] = Counter()
        self._seen: set[int] = set()  # one record reaches several handlers

    def filter(self, record: logging.LogRecord) -> bool:
        if not _IN_SIMULATION.get():
            return True
        if record.levelno >= logging.WARNING and id(record) not in self._seen:
            self._seen.add(id(record))
            self.counts[record.levelname.lower()] += 1
        return self.verbose

    def note(self) -> str | None:
        """A line for the report when the simulation warned and ``verbose`` is off."""
        if self.verbose or not self.counts:
            return None
        counted = ", ".join(f"{n} {level}{'s' if n > 1 else ''}"
                            for level, n in sorted(self.counts.items()))
        return (f"the simulation's own components logged {counted}, about the simulated "
                "copy, not the source (not shown)")


@contextlib.contextmanager
def quiet_simulation() -> Iterator[SimulationLog]:
    """Within it, records logged by this task and the tasks it starts are dropped."""
    log_filter = SimulationLog(verbose=logging.getLogger("kubegc").isEnabledFor(logging.INFO))
    handlers = list(logging.getLogger().handlers)
    if logging.lastResort is not None:
        handlers.append(logging.lastResort)
    for handler in handlers:
        handler.addFilter(log_filter)
    token = _IN_SIMULATION.set(True)
    try:
        yield log_filter
    finally:
        _IN_SIMULATION.reset(token)
        for handler in handlers:
            handler.removeFilter(log_filter)
