"""Finished Jobs cleaned up, against a real ``kubegc serve`` with the real kubectl: a Job
with ``ttlSecondsAfterFinished`` completes, then the TTL-after-finished controller deletes
it in the foreground (its pods first, through the garbage collector), and ``kubegc why``
names that controller and the TTL for the Job and for its pods; a CronJob's history trim
(``successfulJobsHistoryLimit``), which ``why`` puts on the CronJob controller. The
cluster clock runs 30 times faster (``--time-scale``): the 90 s TTL is three seconds, a
CronJob's minute two.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually, start_server, stop_server, write

SCALE = 30


#: the Jobs' DELETEs audited at the Request level (their DeleteOptions kept)
POLICY = """\
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  verbs: [delete]
  resources: [{group: batch, resources: [jobs]}]
"""


@pytest.fixture(scope="module")
def ttl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("kubegc-ttl")
    s = start_server(tmp / "data", "--time-scale", str(SCALE), "--job-pod-duration", "2",
                     "--audit-policy-file", write(tmp, "policy.yaml", POLICY),
                     "--audit-log-path", str(tmp / "audit.log"))
    yield s
    stop_server(s)


def audit_log(server: Server) -> Path:
    return server.data_dir.parent / "audit.log"


@pytest.fixture
def tns(ttl_server: Server) -> Iterator[str]:
    name = "ttl-" + uuid.uuid4().hex[:6]
    ttl_server.kubectl("create", "namespace", name)
    yield name
    ttl_server.kubectl("delete", "namespace", name, "--wait=false", check=False)


def get(server: Server, *args: str) -> dict[str, Any] | None:
    done = server.kubectl("get", *args, "-o", "json", check=False)
    if done.returncode != 0:
        return None
    obj: dict[str, Any] = json.loads(done.stdout)
    return obj


def why(server: Server, what: str, ns: str, *args: str) -> dict[str, Any]:
    return server.kubegc_json("why", what, "-n", ns, *args)


def job(name: str, ttl: int) -> str:
    return json.dumps({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
        "spec": {"ttlSecondsAfterFinished": ttl, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}})


def pods_of(server: Server, ns: str, job_uid: str) -> list[str]:
    listed = get(server, "pods", "-n", ns) or {"items": []}
    return [p["metadata"]["name"] for p in listed["items"]
            if any(r.get("uid") == job_uid for r in p["metadata"].get("ownerReferences") or [])]


def complete(obj: dict[str, Any] | None) -> bool:
    return obj is not None and any(
        c.get("type") == "Complete" and c.get("status") == "True"
        for c in (obj.get("status") or {}).get("conditions") or [])


def finished(server: Server, ns: str, name: str) -> dict[str, Any] | None:
    obj = get(server, "job", name, "-n", ns)
    return obj if complete(obj) else None


def test_a_finished_job_with_a_ttl_is_deleted_with_its_pods_and_why_says_so(
        ttl_server: Server, tns: str) -> None:
    s = ttl_server
    s.kubectl("create", "-n", tns, "-f", "-", input=job("pi", 90))
    created = eventually(lambda: get(s, "job", "pi", "-n", tns), what="the Job")
    pods = eventually(lambda: pods_of(s, tns, created["metadata"]["uid"]), what="its pod")
    done = eventually(lambda: finished(s, tns, "pi"), timeout=60, what="the Job complete")
    assert pods_of(s, tns, done["metadata"]["uid"]) == pods  # kept until the TTL runs out
    eventually(lambda: get(s, "job", "pi", "-n", tns) is None, timeout=60,
               what="the TTL-after-finished controller deleting the Job")
    assert all(get(s, "pod", p, "-n", tns) is None for p in pods)

    report = why(s, "job/pi", tns)
    ttl = [e for e in report["entries"] if e["deleter"] == "ttl-after-finished-controller"]
    assert len(ttl) == 1, report
    entry = ttl[0]
    assert (entry["reason"], entry["propagationPolicy"]) == ("TTLAfterFinished", "Foreground")
    assert "ttlSecondsAfterFinished 90" in entry["message"]
    assert entry["rule"] == "TTL-after-finished: the Job finished ttlSecondsAfterFinished ago"
    assert report["conclusion"].startswith(
        "Job/pi was deleted by ttl-after-finished-controller (DELETE sent at ")
    assert "TTLAfterFinished): the Job finished (Complete) at " in report["conclusion"]

    # the audit log names the same deleter, joined with the same words for its rule
    audited = why(s, "job/pi", tns, "--audit-log", str(audit_log(s)))
    (deletion,) = audited["auditLog"]["deletions"]
    assert deletion["user"] == "system:serviceaccount:kube-system:ttl-after-finished-controller"
    assert (deletion["propagationPolicy"], deletion["uid"]) == (
        "Foreground", done["metadata"]["uid"])
    assert deletion["rule"] == entry["rule"]
    assert audited["conclusion"].endswith(f" — {entry['rule']}")

    # its pod went through the garbage collector, because of the Job's foreground delete
    pod = why(s, f"pod/{pods[0]}", tns)
    assert "garbage collector" in pod["conclusion"], pod
    [cause] = pod["causes"]
    assert cause["object"]["kind"] == "Job"
    assert "ttl-after-finished-controller" in cause["conclusion"]
    assert "ttlSecondsAfterFinished 90" in cause["conclusion"]


def test_a_job_without_a_ttl_stays(ttl_server: Server, tns: str) -> None:
    s = ttl_server
    s.kubectl("create", "-n", tns, "-f", "-", input=job("kept", 10).replace(
        '"ttlSecondsAfterFinished": 10, ', ""))
    eventually(lambda: finished(s, tns, "kept"), timeout=60, what="the Job complete")
    # a Job with a TTL created after it, finished and deleted: the controller had its chance
    s.kubectl("create", "-n", tns, "-f", "-", input=job("gone", 0))
    eventually(lambda: get(s, "job", "gone", "-n", tns) is None, timeout=60,
               what="the TTL-0 Job deleted")
    assert get(s, "job", "kept", "-n", tns) is not None


def test_a_cronjob_history_trim_is_explained(ttl_server: Server, tns: str) -> None:
    s = ttl_server
    s.kubectl("create", "-n", tns, "-f", "-", input=json.dumps({
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "tick"},
        "spec": {"schedule": "*/1 * * * *", "successfulJobsHistoryLimit": 1,
                 "jobTemplate": {"spec": {"template": {"spec": {
                     "restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "busybox"}]}}}}}}))
    seen: list[str] = []

    def trimmed() -> str | None:
        listed = get(s, "jobs", "-n", tns) or {"items": []}
        names = sorted(j["metadata"]["name"] for j in listed["items"])
        seen.extend(n for n in names if n not in seen)
        gone = [n for n in sorted(seen) if n not in names]
        return gone[0] if gone else None

    first = eventually(trimmed, timeout=60, what="the oldest Job trimmed")
    report = why(s, f"job/{first}", tns)
    entry = report["entries"][-1]
    assert (entry["deleter"], entry["reason"], entry["propagationPolicy"]) == (
        "cronjob-controller", "SuccessfulJobsHistoryLimit", "Background")
    assert entry["message"].startswith("CronJob tick keeps successfulJobsHistoryLimit 1: ")
    assert entry["rule"].startswith("the CronJob controller: more finished successful Jobs")
    assert report["conclusion"].startswith(
        f"Job/{first} was deleted by the CronJob controller (cronjob-controller) ")


def test_a_job_scaled_down_has_its_pod_deletion_explained(ttl_server: Server, tns: str
                                                          ) -> None:
    s = ttl_server
    s.kubectl("create", "-n", tns, "-f", "-", input=json.dumps({
        "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "wide"},
        "spec": {"parallelism": 2, "completions": 10, "template": {
            "metadata": {"annotations": {"kubegc.io/run-seconds": "100000"}},
            "spec": {"restartPolicy": "Never",
                     "containers": [{"name": "c", "image": "busybox"}]}}}}))
    uid = eventually(lambda: get(s, "job", "wide", "-n", tns), what="the Job")["metadata"]["uid"]
    eventually(lambda: len(pods_of(s, tns, uid)) == 2, what="two pods")
    before = pods_of(s, tns, uid)
    s.kubectl("patch", "job", "wide", "-n", tns, "--type=merge", "-p",
              '{"spec": {"parallelism": 1}}')
    gone = eventually(lambda: [p for p in before if get(s, "pod", p, "-n", tns) is None],
                      timeout=60, what="one pod deleted")
    report = why(s, f"pod/{gone[0]}", tns)
    entry = report["entries"][-1]
    assert (entry["deleter"], entry["reason"]) == ("job-controller", "TooManyActivePods")
    assert entry["message"] == ("Job wide wants 1 active pods (parallelism 1, completions 10, "
                                "0 succeeded); 2 were active")
    assert report["conclusion"].startswith(
        f"Pod/{gone[0]} was deleted by the Job controller (job-controller) ")
