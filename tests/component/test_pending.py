"""What a busy component says for ``settle()``'s error (``kubegc.component.pending``): the
last error of each retrying item, counted while it repeats, one line per component, and
when all that is left is stuck."""

from __future__ import annotations

import asyncio

import pytest

from kubegc.component.pending import (
    LastErrors,
    NotSettledError,
    Pending,
    Retrying,
    StuckError,
    wait_quiet,
)

REFUSED = 'admission webhook "deny.example.com" denied the request: no'


def test_last_errors_count_a_repeated_error_and_forget_on_success() -> None:
    errors: LastErrors[str] = LastErrors()
    errors.failed("a", REFUSED)
    errors.failed("a", RuntimeError(REFUSED))
    errors.failed("b", "first")
    errors.failed("b", "second")
    errors.failed("c", RuntimeError())
    assert errors.retrying(str) == (Retrying("a", REFUSED, 2), Retrying("b", "second", 1),
                                    Retrying("c", "RuntimeError", 1))
    assert errors.retrying(str.upper, where=lambda k: k == "b") == (Retrying("B", "second", 1),)
    errors.succeeded("a")
    errors.failed("a", REFUSED)
    assert errors.get("a") == (REFUSED, 1)
    assert len(errors) == 3


@pytest.mark.parametrize(("pending", "line"), [
    pytest.param(Pending("garbagecollector", 1, (Retrying("v1/ConfigMap ns/x", REFUSED, 1),)),
                 f"garbagecollector: 1 item retrying: v1/ConfigMap ns/x: {REFUSED}",
                 id="one-retrying"),
    pytest.param(Pending("garbagecollector", 3, (Retrying("v1/ConfigMap ns/x", REFUSED, 4),),
                         ("2 graph changes",)),
                 "garbagecollector: 3 items, 1 retrying, 2 graph changes: v1/ConfigMap ns/x "
                 f"(failed 4 times in a row): {REFUSED}", id="retrying-among-others"),
    pytest.param(Pending("job-controller", 2), "job-controller: 2 items", id="queued"),
    pytest.param(Pending("informers", other=("delivering a list of v1/pods",)),
                 "informers: delivering a list of v1/pods", id="no-items"),
    pytest.param(Pending("ttl"), "ttl: busy", id="nothing-said"),
    pytest.param(Pending("kubelet", 7, tuple(Retrying(f"ns/p{i}", "e", 1) for i in range(7))),
                 "kubelet: 7 items retrying: ns/p0: e; ns/p1: e; ns/p2: e; ns/p3: e; ns/p4: e; "
                 "and 2 more", id="many-retrying"),
])
def test_a_line_per_component(pending: Pending, line: str) -> None:
    assert pending.line() == line


def test_stuck_only_when_all_it_holds_failed_often_enough() -> None:
    x = Retrying("x", REFUSED, 3)
    assert Pending("gc", 1, (x,)).stuck(3)
    assert not Pending("gc", 1, (x,)).stuck(4)
    assert not Pending("gc", 2, (x,)).stuck(3)  # another item queued
    assert not Pending("gc", 1, (x,), ("events to write",)).stuck(3)
    assert not Pending("gc", 1).stuck(1)  # nothing failed


async def test_wait_quiet_raises_with_what_is_busy() -> None:
    busy = [Pending("gc", 1, (Retrying("x", REFUSED, 1),))]
    with pytest.raises(NotSettledError) as raised:
        await wait_quiet(lambda: False, lambda: busy, 0.05)
    assert str(raised.value) == ("cluster did not settle within 0.05 s; still busy:\n"
                                 f"  gc: 1 item retrying: x: {REFUSED}")
    assert raised.value.pending == busy
    with pytest.raises(StuckError):
        await asyncio.wait_for(wait_quiet(lambda: False, lambda: busy, 30, stuck_after=1), 5)
    with pytest.raises(NotSettledError) as late:  # not yet stuck: waits for the timeout
        await wait_quiet(lambda: False, lambda: busy, 0.05, stuck_after=2)
    assert not isinstance(late.value, StuckError)
    await wait_quiet(lambda: True, lambda: [], 1, stuck_after=1)
    with pytest.raises(ValueError):
        await wait_quiet(lambda: True, lambda: [], 1, stuck_after=0)
