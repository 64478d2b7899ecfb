"""apimachinery's ``wait.Until`` for the server's own loops (the APIService availability
and OpenAPI controllers, the authentication-trust ConfigMap): run a sync every period
until cancelled; a sync that fails is logged and tried again next period."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


async def until(sync: Callable[[], Awaitable[None]], period: float, what: str) -> None:
    """Run ``sync`` every ``period`` seconds until the task is cancelled."""
    while True:
        try:
            await sync()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s failed", what)
        await asyncio.sleep(period)
