"""FailedSyncs (upstream's handleErr, and what keeps a controller from looping): every
failure is retried with the queue's backoff; one that is not the API's is recorded on the
object, and the object's own events wait for the backoff until the object changes."""

from __future__ import annotations

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.api.types import Obj
from kubegc.client.events import EventRecorder
from kubegc.client.fake import FakeClient
from kubegc.client.workqueue import RateLimitingQueue
from kubegc.component.failures import FAILED_SYNC_REASON, FailedSyncs
from kubegc.component.fields import NotUnderstood

JOB: Obj = {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "j", "namespace": "ns", "uid": "u", "resourceVersion": "1"},
            "spec": {"completions": "abc"}}


class Recorded(EventRecorder):
    def __init__(self) -> None:
        super().__init__(FakeClient(), component="job-controller", clock=ManualClock())
        self.seen: list[tuple[str, str, str]] = []

    def event(self, obj: object, type: str, reason: str, message: str) -> None:  # type: ignore[override]
        self.seen.append((type, reason, message))


def failures(objects: dict[str, Obj]) -> tuple[FailedSyncs, RateLimitingQueue[str], Recorded]:
    queue: RateLimitingQueue[str] = RateLimitingQueue(name="t", clock=ManualClock())
    recorder = Recorded()
    return FailedSyncs("job", queue, lookup=objects.get, recorder=lambda _: recorder), queue, (
        recorder)


async def test_an_api_error_is_retried_quietly() -> None:
    f, queue, recorder = failures({"ns/j": JOB})
    f.failed(StatusError(409, "Conflict", "the object has been modified"), "ns/j")
    assert recorder.seen == [] and "ns/j" not in f
    assert queue.rate_limiter.num_requeues("ns/j") == 1
    f.add("ns/j")
    assert len(queue) == 1  # nothing holds it back


async def test_an_object_not_understood_is_warned_about_and_waits_until_it_changes() -> None:
    objects = {"ns/j": JOB}
    f, queue, recorder = failures(objects)
    f.failed(NotUnderstood(['spec.completions: Invalid value: "abc": must be an integer']),
             "ns/j")
    assert recorder.seen == [("Warning", FAILED_SYNC_REASON, 'job: cannot understand it: '
                              'spec.completions: Invalid value: "abc": must be an integer')]
    objects["ns/j"] = {**JOB, "status": {"active": 1},
                       "metadata": {**JOB["metadata"], "resourceVersion": "2"}}
    f.add("ns/j")  # a status write, an event of a pod: the same object
    assert len(queue) == 0
    objects["ns/j"] = {**JOB, "spec": {"completions": 1}}
    f.add("ns/j")  # fixed: synced at once
    assert len(queue) == 1 and "ns/j" not in f


async def test_a_request_the_api_refuses_is_warned_about() -> None:
    f, _, recorder = failures({"ns/j": JOB})
    f.failed(StatusError(422, "Invalid", "Pod \"x\" is invalid"), "ns/j")
    assert [r for _, r, _ in recorder.seen] == [FAILED_SYNC_REASON] and "ns/j" in f
