"""What the doctor says about a finalizer's remover or a pod's kubelet being alive: a dump
(or a live read) is a state at one time, so "alive" is said only with that time and the
evidence ("alive at T per Lease X: held by h, renewed at ..."), "not running" likewise, and
with no evidence "unknown whether it is running" — never a bare "(alive)" or "is alive and
removes it" (tools/finalizers.py ``Remover.alive_at``, tools/doctor/removers.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from kubegc.tools.doctor import DoctorOptions, diagnose
from kubegc.tools.render.style import Style
from kubegc.tools.render.text_doctor import render_doctor

from .conftest import inventory_of
from .test_finalizers import PUBLISHED, SITE, lease

AT = "2026-01-01T00:10:00Z"  # the reading (conftest.NOW)
OVERCLAIMS = re.compile(r"\(alive\)|is alive and|\(unknown\)|\(not alive\)")


def _site(finalizer: str) -> dict[str, Any]:
    meta = {**SITE["metadata"], "deletionTimestamp": "2026-01-01T00:01:00Z",
            "creationTimestamp": "2026-01-01T00:00:00Z", "finalizers": [finalizer]}
    return {**SITE, "metadata": meta}


def _pod(stamp: str) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "uid": "n1"},
         "status": {"conditions": [{"type": "Ready", "status": "True"}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "p", "namespace": "default", "uid": "p",
            "creationTimestamp": "2026-01-01T00:00:00Z",
            "deletionTimestamp": stamp, "deletionGracePeriodSeconds": 300},
         "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "x"}]}}]


@pytest.mark.parametrize(("objects", "title", "said"), [
    pytest.param([_site("own.labhub.io/cleanup"),
                  lease("ops", "op", renewed="2026-01-01T00:09:55.000000Z",
                        annotations=PUBLISHED)],
                 f"removed by the controller of Lease ops/op (alive at {AT} per that Lease)",
                 f"(it was alive at {AT} per Lease ops/op: held by me, renewed at "
                 "2026-01-01T00:09:55Z, 5s before the reading", id="fresh-lease"),
    pytest.param([_site("own.labhub.io/cleanup"),
                  lease("ops", "op", renewed="2026-01-01T00:09:00.000000Z",
                        annotations=PUBLISHED)],
                 f"(not running at {AT} per that Lease)",
                 f"runs again (it was not running at {AT} per Lease ops/op: held by me, "
                 "renewed at 2026-01-01T00:09:00Z, 1m before the reading", id="stale-lease"),
    pytest.param([_site("example.com/hold")],
                 "removed by an unknown controller (unknown whether it is running)",
                 "nothing shows whether it runs", id="no-evidence"),
    pytest.param(_pod("2026-01-01T00:12:00Z"),
                 f"graceful termination inside the grace period: the kubelet on node n1 "
                 f"(alive at {AT} per Node n1)",
                 f"within their grace period while it runs (alive at {AT} per Node n1: ",
                 id="pod-in-its-grace-period"),
    pytest.param(_pod("2026-01-01T00:09:00Z"),
                 f"past its grace period: the kubelet on node n1 (alive at {AT} per Node n1)",
                 f"the kubelet on node n1 (alive at {AT} per Node n1: ",
                 id="pod-past-its-grace-period"),
])
async def test_alive_is_said_with_its_time_and_evidence(objects: list[dict[str, Any]],
                                                        title: str, said: str) -> None:
    report = diagnose(await inventory_of(objects), DoctorOptions(stuck_after=0))
    (cause,) = report.root_causes
    assert title in cause.cause.what, cause.cause.what
    text = render_doctor(report, Style(width=10_000))
    assert said in text, text
    assert not OVERCLAIMS.search(text), OVERCLAIMS.search(text)
