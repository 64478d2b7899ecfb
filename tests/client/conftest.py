"""Helpers for the client layer's tests: wait on conditions with a deadline, never sleep.

``eventually(predicate, timeout=5)`` polls ``predicate`` while letting the event loop run
and fails the test if it is still false at the deadline. ``spin()`` lets the loop run a
few turns, to check that something did *not* happen (e.g. a delayed add before its time).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from .certs import Pki, make_pki

Eventually = Callable[..., Awaitable[None]]
Spin = Callable[..., Awaitable[None]]


async def _eventually(
    predicate: Callable[[], object], timeout: float = 5.0, what: str = "",
) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    turns = 0
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"not true within {timeout}s: {what or predicate}")
        turns += 1
        # yield to the loop; after a burst of turns, let real I/O arrive without spinning
        await asyncio.sleep(0 if turns < 200 else 0.001)


async def _spin(turns: int = 50) -> None:
    for _ in range(turns):
        await asyncio.sleep(0)


@pytest.fixture(name="eventually")
def eventually_fixture() -> Eventually:
    return _eventually


@pytest.fixture(name="spin")
def spin_fixture() -> Spin:
    return _spin


@pytest.fixture(scope="session")
def pki() -> Pki:
    return make_pki()
