from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.registry import Registry, Target
from kubegc.storage.memory import MemoryKV


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def registry(clock: ManualClock) -> AsyncIterator[Registry]:
    reg = Registry(MemoryKV(), clock=clock)
    await reg.start()
    yield reg
    await reg.stop()


RESOURCES = {
    "configmaps": ("", "v1"),
    "pods": ("", "v1"),
    "namespaces": ("", "v1"),
    "replicationcontrollers": ("", "v1"),
    "events": ("", "v1"),
    "secrets": ("", "v1"),
    "services": ("", "v1"),
    "deployments": ("apps", "v1"),
    "replicasets": ("apps", "v1"),
    "statefulsets": ("apps", "v1"),
    "daemonsets": ("apps", "v1"),
    "jobs": ("batch", "v1"),
    "cronjobs": ("batch", "v1"),
    "customresourcedefinitions": ("apiextensions.k8s.io", "v1"),
}


def target(reg: Registry, resource: str, namespace: str = "default") -> Target:
    group, version = RESOURCES[resource]
    return reg.target(group, version, resource, namespace)


POD_SPEC: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
TEMPLATE: dict[str, Any] = {"metadata": {"labels": {"app": "x"}}, "spec": POD_SPEC}


def manifest(resource: str, name: str, **meta: Any) -> dict[str, Any]:
    """A minimal valid object of ``resource``."""
    body: dict[str, Any] = {"metadata": {"name": name, **meta}}
    if resource == "pods":
        body["spec"] = dict(POD_SPEC)
    elif resource == "replicationcontrollers":
        body["spec"] = {"replicas": 1, "selector": {"app": "x"}, "template": TEMPLATE}
    elif resource in ("deployments", "replicasets", "statefulsets", "daemonsets"):
        body["spec"] = {"selector": {"matchLabels": {"app": "x"}}, "template": TEMPLATE}
    elif resource == "jobs":
        body["spec"] = {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}
    elif resource == "cronjobs":
        body["spec"] = {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {
            "spec": {**POD_SPEC, "restartPolicy": "Never"}}}}}
    elif resource == "events":
        body["involvedObject"] = {"kind": "Pod", "name": "p", "namespace": "default"}
    return body
