"""DefaultTolerationSeconds (kube-apiserver's admission plugin, on by default): a pod
that does not tolerate the node controller's NoExecute taints gets a 300 s toleration for
each (kr8s' ``Pod.tolerate`` appends to the list a real cluster always returns)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.registry import Registry

NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists",
             "effect": "NoExecute", "tolerationSeconds": 300}
UNREACHABLE = {**NOT_READY, "key": "node.kubernetes.io/unreachable"}


def _pod(tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "nginx"}]}
    if tolerations is not None:
        spec["tolerations"] = tolerations
    return {"metadata": {"name": "p"}, "spec": spec}


@pytest.mark.parametrize(("given", "expected"), [
    pytest.param(None, [NOT_READY, UNREACHABLE], id="none"),
    pytest.param([{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
                 [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
                  NOT_READY, UNREACHABLE], id="others-kept"),
    pytest.param([{**NOT_READY, "tolerationSeconds": 5}],
                 [{**NOT_READY, "tolerationSeconds": 5}, UNREACHABLE], id="own-seconds"),
    pytest.param([{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}],
                 [{"key": "node.kubernetes.io/unreachable", "operator": "Exists"}, NOT_READY],
                 id="any-effect"),
    pytest.param([{"operator": "Exists"}], [{"operator": "Exists"}], id="tolerates-all"),
])
async def test_created_pod_tolerations(registry: Registry, given: list[dict[str, Any]] | None,
                                       expected: list[dict[str, Any]]) -> None:
    t = registry.target("", "v1", "pods", "default")
    created = await registry.create(t, _pod(given))
    assert created["spec"]["tolerations"] == expected


async def test_an_update_that_drops_them_gets_them_back(registry: Registry) -> None:
    t = registry.target("", "v1", "pods", "default")
    created = await registry.create(t, _pod())
    created["spec"].pop("tolerations")
    created["metadata"]["labels"] = {"a": "b"}
    updated, _ = await registry.update(t, "p", created)
    assert updated["spec"]["tolerations"] == [NOT_READY, UNREACHABLE]
    assert updated["metadata"]["labels"] == {"a": "b"}


async def test_other_kinds_are_left_alone(registry: Registry) -> None:
    t = registry.target("", "v1", "podtemplates", "default")
    created = await registry.create(t, {"metadata": {"name": "pt"},
                                        "template": _pod() | {"metadata": {}}})
    assert "tolerations" not in created["template"]["spec"]
