"""Workload status as a typed kube-apiserver writes it: the status fields upstream's API
types encode even at zero (a new StatefulSet reads ``availableReplicas: 0``, which kr8s
waits on), from the create answer on, kept through status writes that leave them out, and
the controllers' first status with ``observedGeneration``. Real kubectl, ``kubegc serve``."""

from __future__ import annotations

import json

import pytest
import yaml

from .conftest import Server, eventually

pytestmark = pytest.mark.kubectl


def _template(app: str) -> dict:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


def _selector(app: str) -> dict:
    return {"matchLabels": {"app": app}}


WORKLOADS = {
    "replicaset": ("apps/v1", "ReplicaSet", {"replicas": 0, "selector": _selector("rs"),
                                             "template": _template("rs")}),
    "replicationcontroller": ("v1", "ReplicationController", {
        "replicas": 0, "selector": {"app": "rc"}, "template": _template("rc")}),
    "statefulset": ("apps/v1", "StatefulSet", {"replicas": 0, "serviceName": "sts",
                                               "selector": _selector("sts"),
                                               "template": _template("sts")}),
    "daemonset": ("apps/v1", "DaemonSet", {"selector": _selector("ds"), "template": {
        **_template("ds"), "spec": {**_template("ds")["spec"],
                                    "nodeSelector": {"kubegc.io/no-such-node": "x"}}}}),
    "deployment": ("apps/v1", "Deployment", {"replicas": 0, "selector": _selector("dep"),
                                             "template": _template("dep")}),
    "job": ("batch/v1", "Job", {"suspend": True, "template": {
        **_template("job"), "spec": {**_template("job")["spec"], "restartPolicy": "Never"}}}),
    "cronjob": ("batch/v1", "CronJob", {"schedule": "0 0 1 1 *", "jobTemplate": {"spec": {
        "template": {**_template("cj"), "spec": {**_template("cj")["spec"],
                                                 "restartPolicy": "Never"}}}}}),
}

#: what kube-apiserver answers a create with (k8s.io/api types.go: fields without omitempty)
CREATED_STATUS = {
    "replicaset": {"replicas": 0},
    "replicationcontroller": {"replicas": 0},
    "statefulset": {"replicas": 0, "availableReplicas": 0},
    "daemonset": {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                  "desiredNumberScheduled": 0, "numberReady": 0},
    "deployment": {},
    "job": {},
    "cronjob": {},
}


def _create(server: Server, ns: str, kind: str) -> dict:
    api_version, kind_name, spec = WORKLOADS[kind]
    manifest = {"apiVersion": api_version, "kind": kind_name,
                "metadata": {"name": f"z-{kind[:10]}"}, "spec": spec}
    out = server.kubectl("create", "-n", ns, "-f", "-", "-o", "json",
                         input=yaml.safe_dump(manifest)).stdout
    created: dict = json.loads(out)
    return created


@pytest.mark.parametrize("kind", list(WORKLOADS))
def test_a_create_answers_with_the_zero_status(server: Server, ns: str, kind: str) -> None:
    assert _create(server, ns, kind)["status"] == CREATED_STATUS[kind]


def _get(server: Server, ns: str, kind: str, name: str) -> dict:
    got: dict = json.loads(server.kubectl("get", kind, name, "-n", ns, "-o", "json").stdout)
    return got


@pytest.mark.parametrize("kind", ["replicaset", "replicationcontroller", "statefulset",
                                  "daemonset"])
def test_the_controllers_first_status_keeps_the_zeros(server: Server, ns: str,
                                                      kind: str) -> None:
    name = _create(server, ns, kind)["metadata"]["name"]
    synced = eventually(lambda: (o := _get(server, ns, kind, name))["status"].get(
        "observedGeneration") == o["metadata"]["generation"] and o)
    status = synced["status"]
    assert {k: status.get(k) for k in CREATED_STATUS[kind]} == CREATED_STATUS[kind]
    if kind == "statefulset":  # upstream's updateStatefulSet always sets it
        assert status["collisionCount"] == 0


def test_kubectl_waits_on_a_new_statefulsets_available_replicas(server: Server,
                                                                ns: str) -> None:
    """What kr8s' ``wait("jsonpath='{.status.availableReplicas}'=0")`` asks."""
    name = _create(server, ns, "statefulset")["metadata"]["name"]
    server.kubectl("wait", f"statefulset/{name}", "-n", ns, "--timeout=20s",
                   "--for=jsonpath={.status.availableReplicas}=0")


def test_a_status_write_that_drops_a_zero_field_reads_it_back(server: Server,
                                                              ns: str) -> None:
    name = _create(server, ns, "statefulset")["metadata"]["name"]
    out = server.kubectl("patch", "statefulset", name, "-n", ns, "--subresource=status",
                         "--type=merge", "-p", '{"status": {"availableReplicas": null}}',
                         "-o", "json").stdout
    assert json.loads(out)["status"]["availableReplicas"] == 0
