"""A workload's status reads as kube-apiserver writes it: the fields its Go status struct
declares without ``omitempty`` are there at zero from creation on (kr8s waits on
``{.status.availableReplicas}`` of a new StatefulSet), and stay there after any status
write that leaves them out; structs with only omitempty fields read ``{}``."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.registry import Registry

POD_TEMPLATE = {"metadata": {"labels": {"app": "w"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
SELECTED = {"selector": {"matchLabels": {"app": "w"}}, "template": POD_TEMPLATE}
JOB_SPEC = {"template": {**POD_TEMPLATE, "spec": {**POD_TEMPLATE["spec"],
                                                  "restartPolicy": "Never"}}}
SPECS: dict[str, dict[str, Any]] = {
    "replicationcontrollers": {"replicas": 0, "selector": {"app": "w"},
                               "template": POD_TEMPLATE},
    "replicasets": {"replicas": 0, **SELECTED},
    "statefulsets": {"replicas": 0, **SELECTED},
    "daemonsets": SELECTED,
    "deployments": {"replicas": 0, **SELECTED},
    "jobs": JOB_SPEC,
    "cronjobs": {"schedule": "* * * * *", "jobTemplate": {"spec": JOB_SPEC}},
}
CASES = [
    pytest.param("", "replicationcontrollers", {"replicas": 0}, id="ReplicationController"),
    pytest.param("apps", "replicasets", {"replicas": 0}, id="ReplicaSet"),
    pytest.param("apps", "statefulsets", {"replicas": 0, "availableReplicas": 0},
                 id="StatefulSet"),
    pytest.param("apps", "daemonsets", {"currentNumberScheduled": 0, "numberMisscheduled": 0,
                                        "desiredNumberScheduled": 0, "numberReady": 0},
                 id="DaemonSet"),
    pytest.param("apps", "deployments", {}, id="Deployment"),
    pytest.param("batch", "jobs", {}, id="Job"),
    pytest.param("batch", "cronjobs", {}, id="CronJob"),
]


def _target(registry: Registry, group: str, resource: str) -> Any:
    return registry.target(group, "v1", resource, "default")


@pytest.mark.parametrize(("group", "resource", "zero"), CASES)
async def test_a_new_workload_has_the_zero_status(registry: Registry, group: str,
                                                  resource: str, zero: dict[str, int]) -> None:
    t = _target(registry, group, resource)
    body = {"metadata": {"name": "w"}, "spec": SPECS[resource],
            "status": {"replicas": 5, "observedGeneration": 3}}  # a create sets no status
    created = await registry.create(t, body)
    assert created["status"] == zero
    assert (await registry.get(t, "w"))["status"] == zero


@pytest.mark.parametrize(("group", "resource", "zero"), CASES)
async def test_a_status_write_keeps_the_zero_fields(registry: Registry, group: str,
                                                    resource: str,
                                                    zero: dict[str, int]) -> None:
    t = _target(registry, group, resource)
    created = await registry.create(t, {"metadata": {"name": "w"}, "spec": SPECS[resource]})
    created["status"] = {"observedGeneration": 1}
    updated, _ = await registry.update(t, "w", created, subresource="status")
    assert updated["status"] == {**zero, "observedGeneration": 1}
    updated.pop("status")
    replaced, _ = await registry.update(t, "w", updated)  # the status is kept as it was
    assert replaced["status"] == {**zero, "observedGeneration": 1}
