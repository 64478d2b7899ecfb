"""Volumes as far as deletion goes, against a real ``kubegc serve`` with the real kubectl:
a generic ephemeral volume's claim ``<pod>-<volume>`` owned by its pod (the
ephemeral-volume controller) and deleted with it (the garbage collector, then the
pvc-protection controller); a claim in use deleted while its pod runs stays Terminating
with ``kubernetes.io/pvc-protection`` until the pod is gone; a Bound volume's
``kubernetes.io/pv-protection``; and what ``kubegc doctor``, ``why`` and ``plan`` say of
each: the plan's prediction, then the same delete live.
"""

from __future__ import annotations

import json
from typing import Any

from tests.e2e.conftest import Server, eventually


def get(server: Server, *args: str) -> dict[str, Any] | None:
    done = server.kubectl("get", *args, "-o", "json", check=False)
    if done.returncode != 0:
        return None
    obj: dict[str, Any] = json.loads(done.stdout)
    return obj



def claim(name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                       "metadata": {"name": name},
                       "spec": {"accessModes": ["ReadWriteOnce"],
                                "resources": {"requests": {"storage": "1Gi"}}}})


def pod(name: str, *, claim_name: str = "", ephemeral: str = "") -> str:
    volumes: list[dict[str, Any]] = []
    if claim_name:
        volumes.append({"name": "data", "persistentVolumeClaim": {"claimName": claim_name}})
    if ephemeral:
        volumes.append({"name": ephemeral, "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"labels": {"made-by": "template"}},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}}})
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"containers": [{"name": "c", "image": "busybox"}],
                                "volumes": volumes}})


def running(server: Server, ns: str, name: str) -> bool:
    p = get(server, "pod", name, "-n", ns)
    return p is not None and (p.get("status") or {}).get("phase") == "Running"


def plan(server: Server, what: str, ns: str = "") -> dict[str, Any]:
    return server.kubegc_json("plan", "delete", what, *(["-n", ns] if ns else []))


def deleted(report: dict[str, Any]) -> list[str]:
    return sorted(f"{o['kind']}/{o['name']}" for o in report["deleted"])


def test_an_ephemeral_volume_gets_a_claim_owned_by_its_pod_and_goes_with_it(
        server: Server, ns: str) -> None:
    s = server
    s.kubectl("create", "-n", ns, "-f", "-", input=pod("web", ephemeral="scratch"))
    made = eventually(lambda: get(s, "pvc", "web-scratch", "-n", ns), timeout=30,
                      what="the ephemeral claim")
    web = get(s, "pod", "web", "-n", ns)
    assert web is not None
    assert made["metadata"]["ownerReferences"] == [{
        "apiVersion": "v1", "kind": "Pod", "name": "web", "uid": web["metadata"]["uid"],
        "controller": True, "blockOwnerDeletion": True}]
    assert made["metadata"]["labels"] == {"made-by": "template"}
    assert made["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    eventually(lambda: running(s, ns, "web"), timeout=30, what="web running")
    # the plan: the garbage collector deletes the claim, pvc-protection releases it once the
    # pod is gone; then the same happens live
    planned = plan(s, "pod/web", ns)
    assert planned["verdict"]["completes"] is True, planned["verdict"]
    assert deleted(planned) == ["PersistentVolumeClaim/web-scratch", "Pod/web"]
    s.kubectl("delete", "pod", "web", "-n", ns, "--wait=false")
    eventually(lambda: get(s, "pvc", "web-scratch", "-n", ns) is None, timeout=30,
               what="the claim gone with its pod")
    assert get(s, "pod", "web", "-n", ns) is None
    report = s.kubegc_json("why", "pvc/web-scratch", "-n", ns)
    assert report["conclusion"].startswith(
        "PersistentVolumeClaim/web-scratch was deleted by the garbage collector"), report
    assert "Pod/web" in report["conclusion"]


def test_a_namesake_claim_is_not_taken_over(server: Server, ns: str) -> None:
    s = server
    s.kubectl("create", "-n", ns, "-f", "-", input=claim("web-scratch"))
    s.kubectl("create", "-n", ns, "-f", "-", input=pod("web", ephemeral="scratch"))
    message = (f"ephemeral volume scratch: PVC {ns}/web-scratch was not created for pod "
               f"{ns}/web (pod is not owner)")

    def warned() -> bool:
        events = s.kubectl("get", "events", "-n", ns, "--field-selector",
                           "reason=FailedBinding", "-o", "json").stdout
        return any(e.get("message") == message for e in json.loads(events)["items"])

    eventually(warned, timeout=30, what="the FailedBinding event")
    stored = get(s, "pvc", "web-scratch", "-n", ns)
    assert stored is not None and "ownerReferences" not in stored["metadata"]


def test_a_claim_in_use_waits_for_its_pod(server: Server, ns: str) -> None:
    s = server
    s.kubectl("create", "-n", ns, "-f", "-", input=claim("data"))
    s.kubectl("create", "-n", ns, "-f", "-", input=pod("db", claim_name="data"))
    eventually(lambda: running(s, ns, "db"), timeout=30, what="db running")
    planned = plan(s, "pvc/data", ns)
    assert planned["verdict"]["completes"] is False
    [hang] = planned["verdict"]["hangs"]
    assert hang["object"]["name"] == "data"
    [holder] = hang["heldBy"]
    assert "kubernetes.io/pvc-protection" in holder["reason"]
    assert "pod/db uses it, so it goes when that pod goes" in holder["reason"]
    assert deleted(planned) == []

    s.kubectl("delete", "pvc", "data", "-n", ns, "--wait=false")
    held = eventually(lambda: (get(s, "pvc", "data", "-n", ns) or {}).get("metadata", {})
                      .get("deletionTimestamp") and get(s, "pvc", "data", "-n", ns),
                      timeout=30, what="the claim Terminating")
    assert held["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    s.settle()
    assert get(s, "pvc", "data", "-n", ns) is not None  # as planned: it hangs on the pod
    assert s.kubectl("get", "pvc", "data", "-n", ns, "--no-headers").stdout.split()[1] == (
        "Terminating")
    doctor = s.kubegc_json("doctor", "-n", ns)
    [finding] = [f for f in doctor["findings"] if f["object"]["name"] == "data"]
    [remover] = finding["finalizers"]
    assert remover["who"] == "the pvc-protection controller (kube-controller-manager)"
    assert remover["removesWhen"] == ("once no pod uses the claim: pod/db uses it, so it goes "
                                      "when that pod goes")
    why = s.kubegc_json("why", "pvc/data", "-n", ns)
    assert "pod/db uses it" in json.dumps(why["findings"])

    s.kubectl("delete", "pod", "db", "-n", ns, "--wait=false")
    eventually(lambda: get(s, "pvc", "data", "-n", ns) is None, timeout=30,
               what="the claim gone once its pod is")


def volume(name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "PersistentVolume",
                       "metadata": {"name": name},
                       "spec": {"capacity": {"storage": "1Gi"},
                                "accessModes": ["ReadWriteOnce"],
                                "hostPath": {"path": f"/tmp/{name}"},
                                "claimRef": {"namespace": "apps", "name": "data"}}})


def test_a_bound_volume_waits_until_it_is_released(server: Server) -> None:
    s = server
    name = "pv-" + __import__("uuid").uuid4().hex[:6]
    s.kubectl("create", "-f", "-", input=volume(name))
    made = get(s, "pv", name)
    assert made is not None and made["metadata"]["finalizers"] == [
        "kubernetes.io/pv-protection"]
    s.kubectl("patch", "pv", name, "--subresource=status", "--type=merge",
              "-p", '{"status":{"phase":"Bound"}}')
    planned = plan(s, f"pv/{name}")
    [hang] = planned["verdict"]["hangs"]
    assert "Bound to claim apps/data" in hang["heldBy"][0]["reason"], hang

    s.kubectl("delete", "pv", name, "--wait=false")
    s.settle()
    held = get(s, "pv", name)
    assert held is not None and held["metadata"].get("deletionTimestamp")
    doctor = s.kubegc_json("doctor")
    [finding] = [f for f in doctor["findings"] if f["object"]["name"] == name]
    assert "it is Bound to claim apps/data" in finding["finalizers"][0]["removesWhen"]

    s.kubectl("patch", "pv", name, "--subresource=status", "--type=merge",
              "-p", '{"status":{"phase":"Released"}}')
    eventually(lambda: get(s, "pv", name) is None, timeout=30, what="the volume released")


def test_a_pod_waits_for_its_claim(server: Server, ns: str) -> None:
    """The scheduler's VolumeBinding PreFilter: Pending with upstream's message until the
    claim exists."""
    s = server
    s.kubectl("create", "-n", ns, "-f", "-", input=pod("late", claim_name="later"))

    def failed_scheduling() -> list[str]:
        events = s.kubectl("get", "events", "-n", ns, "--field-selector",
                           "reason=FailedScheduling", "-o", "json").stdout
        return [str(e.get("message")) for e in json.loads(events)["items"]]

    messages = eventually(failed_scheduling, timeout=30, what="FailedScheduling")
    assert messages[0].endswith('nodes are available: persistentvolumeclaim "later" not found.')
    waiting = get(s, "pod", "late", "-n", ns)
    assert waiting is not None and waiting["status"]["phase"] == "Pending"
    s.kubectl("create", "-n", ns, "-f", "-", input=claim("later"))
    eventually(lambda: running(s, ns, "late"), timeout=30, what="late running")


def test_a_foreground_pod_delete_waits_for_its_ephemeral_claim(server: Server, ns: str) -> None:
    """The pod waits for its claim (blockOwnerDeletion), the claim for the pod to stop using
    it: the kubelet's final DELETE (grace period 0) shuts the pod down, which releases the
    claim (upstream's ``podIsShutDown`` breaks that cycle), then the pod goes."""
    s = server
    s.kubectl("create", "-n", ns, "-f", "-", input=pod("fg", ephemeral="tmp"))
    eventually(lambda: get(s, "pvc", "fg-tmp", "-n", ns), timeout=30, what="the claim")
    eventually(lambda: running(s, ns, "fg"), timeout=30, what="fg running")
    planned = s.kubegc_json("plan", "delete", "pod/fg", "-n", ns, "--cascade", "foreground")
    assert planned["verdict"]["completes"] is True, planned["verdict"]
    assert deleted(planned) == ["PersistentVolumeClaim/fg-tmp", "Pod/fg"]
    s.kubectl("delete", "pod", "fg", "-n", ns, "--cascade=foreground", "--wait=false")
    eventually(lambda: get(s, "pod", "fg", "-n", ns) is None
               and get(s, "pvc", "fg-tmp", "-n", ns) is None, timeout=60,
               what="pod and claim gone")


def test_a_pod_bound_to_a_node_waits_in_container_creating(server: Server, ns: str) -> None:
    """Past the scheduler (``spec.nodeName`` set), the kubelet does not start a pod whose
    claim is missing: ContainerCreating with a FailedMount event, then Running once the
    claim exists; a waiting pod deleted goes at once."""
    s = server
    bound = json.loads(pod("bound", claim_name="soon"))
    bound["spec"]["nodeName"] = "kubegc-node-1"
    s.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(bound))
    gone = json.loads(pod("gone", claim_name="never"))
    gone["spec"]["nodeName"] = "kubegc-node-1"
    s.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(gone))

    def mount_failures() -> list[str]:
        events = s.kubectl("get", "events", "-n", ns, "--field-selector",
                           "reason=FailedMount", "-o", "json").stdout
        return sorted(str(e.get("message")) for e in json.loads(events)["items"])

    eventually(lambda: len(mount_failures()) == 2, timeout=30, what="FailedMount events")
    assert mount_failures()[1] == (
        "Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data], "
        f"failed to process volumes=[data]: error processing PVC {ns}/soon: failed to fetch PVC "
        'from API server: persistentvolumeclaims "soon" not found')
    row = s.kubectl("get", "pod", "bound", "-n", ns, "--no-headers").stdout.split()
    assert row[1:3] == ["0/1", "ContainerCreating"], row
    s.kubectl("delete", "pod", "gone", "-n", ns, "--wait=false")
    s.kubectl("create", "-n", ns, "-f", "-", input=claim("soon"))
    eventually(lambda: running(s, ns, "bound"), timeout=30, what="bound running")
    eventually(lambda: get(s, "pod", "gone", "-n", ns) is None, timeout=30, what="gone gone")


def test_a_namespace_with_claims_in_use_goes_once_its_pods_do(server: Server) -> None:
    """The namespace controller deletes the pods and the claims; each claim waits for its
    pods (pvc-protection), then the namespace goes — as the plan says beforehand."""
    s = server
    ns = "vol-ns-" + __import__("uuid").uuid4().hex[:6]
    s.kubectl("create", "namespace", ns)
    s.kubectl("create", "-n", ns, "-f", "-", input=claim("data"))
    s.kubectl("create", "-n", ns, "-f", "-", input=pod("db", claim_name="data"))
    s.kubectl("create", "-n", ns, "-f", "-", input=pod("web", ephemeral="scratch"))
    eventually(lambda: running(s, ns, "db") and running(s, ns, "web"), timeout=30,
               what="pods running")
    planned = plan(s, f"namespace/{ns}")
    assert planned["verdict"]["completes"] is True, planned["verdict"]
    assert {"PersistentVolumeClaim/data", "PersistentVolumeClaim/web-scratch", "Pod/db",
            "Pod/web"} <= set(deleted(planned))
    s.kubectl("delete", "namespace", ns, "--wait=false")
    eventually(lambda: get(s, "namespace", ns) is None, timeout=60, what="the namespace gone")
