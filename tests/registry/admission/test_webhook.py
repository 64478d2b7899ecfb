"""The webhook dispatchers over the registry, with in-process webhooks (the client's
``in_process`` handlers): mutating reinvocation, dry run against ``sideEffects``, a
DELETE's refused patch, invalid answers, and what each webhook is sent."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.meta import DeleteOptions
from kubegc.registry import Registry
from kubegc.registry.admission.webhook import MUTATING, VALIDATING
from tests.registry.conftest import manifest, target

RULE = {"operations": ["*"], "apiGroups": [""], "apiVersions": ["v1"],
        "resources": ["configmaps"], "scope": "*"}


def _install(registry: Registry, resource: str, hooks: list[dict[str, Any]]) -> None:
    for hook in hooks:
        hook.setdefault("rules", [RULE])
        hook.setdefault("sideEffects", "None")
        hook.setdefault("clientConfig", {"url": f"https://hooks.invalid/{hook['name']}"})
    registry.admission.webhooks.configurations.written(
        resource, {"metadata": {"name": f"cfg-{resource}"}, "webhooks": hooks}, deleted=False)


def _answer(review: dict[str, Any], **response: Any) -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": review["request"]["uid"], "allowed": True, **response}}


def _patch(ops: list[dict[str, Any]]) -> dict[str, Any]:
    return {"patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(ops).encode()).decode()}


def _serve(registry: Registry, name: str, handler: Any) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def record(review: dict[str, Any]) -> dict[str, Any]:
        seen.append(review)
        return dict(handler(review))

    registry.admission.webhooks.client.in_process[f"https://hooks.invalid/{name}"] = record
    return seen


async def test_mutating_reinvocation_if_needed(registry: Registry) -> None:
    _install(registry, MUTATING, [{"name": "first", "reinvocationPolicy": "IfNeeded"},
                                  {"name": "second"}])
    first = _serve(registry, "first", lambda r: _answer(r))
    second = _serve(registry, "second", lambda r: _answer(r, **_patch([
        {"op": "add", "path": "/data", "value": {"k": "v"}}])))
    created = await registry.create(target(registry, "configmaps"), manifest("configmaps", "c"))
    assert created["data"] == {"k": "v"}
    assert len(first) == 2 and len(second) == 1  # first saw second's change
    assert first[1]["request"]["object"]["data"] == {"k": "v"}


async def test_dry_run_refused_by_a_webhook_with_side_effects(registry: Registry) -> None:
    _install(registry, VALIDATING, [{"name": "fx", "sideEffects": "Some"}])
    seen = _serve(registry, "fx", lambda r: _answer(r))
    with pytest.raises(StatusError) as e:
        await registry.create(target(registry, "configmaps"), manifest("configmaps", "c"),
                              dry_run=True)
    assert e.value.code == 400
    assert e.value.message == 'admission webhook "fx" does not support dry run'
    assert not seen


async def test_delete_sends_old_object_and_refuses_a_patch(registry: Registry) -> None:
    cms = target(registry, "configmaps")
    await registry.create(cms, manifest("configmaps", "c"))
    _install(registry, MUTATING, [{"name": "m"}])
    seen = _serve(registry, "m", lambda r: _answer(r, **_patch([
        {"op": "add", "path": "/data", "value": {}}])))
    with pytest.raises(StatusError) as e:
        await registry.delete(cms, "c", DeleteOptions(grace_period_seconds=0))
    assert e.value.code == 500
    assert 'admission webhook "m" attempted to modify the object' in e.value.message
    request = seen[-1]["request"]
    assert request["operation"] == "DELETE" and request["object"] is None
    assert request["oldObject"]["metadata"]["name"] == "c"
    assert request["options"]["gracePeriodSeconds"] == 0


async def test_invalid_answer_under_fail_and_ignore(registry: Registry) -> None:
    _install(registry, VALIDATING, [{"name": "bad"}])
    _serve(registry, "bad", lambda r: {"apiVersion": "admission.k8s.io/v1",
                                       "kind": "AdmissionReview", "response": {"uid": "x"}})
    cms = target(registry, "configmaps")
    with pytest.raises(StatusError) as e:
        await registry.create(cms, manifest("configmaps", "c"))
    assert e.value.code == 500
    assert e.value.message.startswith(
        'Internal error occurred: failed calling webhook "bad": received invalid webhook '
        'response: expected response.uid=')
    _install(registry, VALIDATING, [{"name": "bad", "failurePolicy": "Ignore"}])
    await registry.create(cms, manifest("configmaps", "c"))


async def test_webhook_configurations_are_exempt(registry: Registry) -> None:
    _install(registry, VALIDATING, [{"name": "all", "rules": [{
        "operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*"]}]}])
    seen = _serve(registry, "all", lambda r: _answer(r, allowed=False))
    vwc = registry.target("admissionregistration.k8s.io", "v1",
                          "validatingwebhookconfigurations")
    await registry.create(vwc, {"metadata": {"name": "x"}, "webhooks": []})
    assert not seen
    with pytest.raises(StatusError) as e:
        await registry.create(target(registry, "configmaps"), manifest("configmaps", "c"))
    assert e.value.message == 'admission webhook "all" denied the request without explanation'


async def test_review_version_is_the_first_the_webhook_accepts(registry: Registry) -> None:
    _install(registry, VALIDATING, [{"name": "old", "admissionReviewVersions": ["v1beta1"]}])
    seen = _serve(registry, "old", lambda r: {**_answer(r), "apiVersion": r["apiVersion"]})
    await registry.create(target(registry, "configmaps"), manifest("configmaps", "c"))
    assert seen[-1]["apiVersion"] == "admission.k8s.io/v1beta1"
    _install(registry, VALIDATING, [{"name": "new", "admissionReviewVersions": ["v2"]}])
    with pytest.raises(StatusError) as e:
        await registry.create(target(registry, "configmaps"), manifest("configmaps", "d"))
    assert "webhook does not accept known AdmissionReview versions ['v2']" in e.value.message


@pytest.mark.parametrize("ops", [
    pytest.param([{"op": "replace", "path": "/kind", "value": "Secret"}], id="kind-changed"),
    pytest.param([{"op": "remove", "path": "/nothing/here"}], id="bad-path"),
    pytest.param([{"op": "teleport", "path": "/data"}], id="bad-op"),
])
async def test_a_bad_patch_is_an_internal_error(registry: Registry,
                                                ops: list[dict[str, Any]]) -> None:
    _install(registry, MUTATING, [{"name": "m"}])
    _serve(registry, "m", lambda r: _answer(r, **_patch(ops)))
    with pytest.raises(StatusError) as e:
        await registry.create(target(registry, "configmaps"), manifest("configmaps", "c"))
    assert e.value.code == 500


async def test_malformed_warnings_are_dropped(registry: Registry) -> None:
    _install(registry, VALIDATING, [{"name": "w"}])
    _serve(registry, "w", lambda r: _answer(r, warnings="not a list"))
    await registry.create(target(registry, "configmaps"), manifest("configmaps", "c"))


@pytest.mark.parametrize("hook", [
    pytest.param({"timeoutSeconds": "soon", "rules": "all"}, id="wrong-types"),
    pytest.param({"clientConfig": {"service": "svc"}}, id="service-not-an-object"),
    pytest.param({"clientConfig": {"service": {"name": "s", "port": "x"}}}, id="port-not-int"),
    pytest.param({"clientConfig": {"url": "https://[::1"}}, id="unparsable-url"),
    pytest.param({"clientConfig": {"url": "https://127.0.0.1:1/", "caBundle": "!!"}},
                 id="bad-ca-bundle"),
])
async def test_a_restored_malformed_configuration_never_500s(
        registry: Registry, hook: dict[str, Any]) -> None:
    """Written around validation (``Registry.restore``): the webhook fails as uncallable,
    under its failurePolicy (Ignore here), and the write goes through."""
    registry.admission.webhooks.configurations.written(VALIDATING, {
        "metadata": {"name": "junk"},
        "webhooks": [{"name": "junk", "failurePolicy": "Ignore", "sideEffects": "None",
                      "rules": [RULE], **hook}]}, deleted=False)
    await registry.create(target(registry, "configmaps"), manifest("configmaps", "c"))


HPA_V1 = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
          "metadata": {"name": "h"},
          "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "name": "web"}, "maxReplicas": 3}}


@pytest.mark.parametrize("policy", ["Equivalent", "Exact"])
async def test_match_policy(registry: Registry, policy: str) -> None:
    """A rule naming autoscaling/v2 matches a v1 request only when Equivalent; the webhook
    then gets the object converted to v2, ``requestKind`` saying v1."""
    _install(registry, VALIDATING, [{"name": "hpa", "matchPolicy": policy, "rules": [{
        "operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"],
        "resources": ["horizontalpodautoscalers"]}]}])
    seen = _serve(registry, "hpa", lambda r: _answer(r))
    hpas = registry.target("autoscaling", "v1", "horizontalpodautoscalers", "default")
    await registry.create(hpas, json.loads(json.dumps(HPA_V1)))
    if policy == "Exact":
        assert not seen
        return
    request = seen[-1]["request"]
    assert request["kind"] == {"group": "autoscaling", "version": "v2",
                               "kind": "HorizontalPodAutoscaler"}
    assert request["requestKind"]["version"] == "v1"
    assert request["object"]["apiVersion"] == "autoscaling/v2"
    assert request["object"]["spec"]["maxReplicas"] == 3


async def test_a_patch_at_an_equivalent_version_is_converted_back(registry: Registry) -> None:
    _install(registry, MUTATING, [{"name": "hpa", "rules": [{
        "operations": ["CREATE"], "apiGroups": ["autoscaling"], "apiVersions": ["v2"],
        "resources": ["horizontalpodautoscalers"]}]}])
    _serve(registry, "hpa", lambda r: _answer(r, **_patch([
        {"op": "replace", "path": "/spec/maxReplicas", "value": 5}])))
    hpas = registry.target("autoscaling", "v1", "horizontalpodautoscalers", "default")
    created = await registry.create(hpas, json.loads(json.dumps(HPA_V1)))
    assert created["apiVersion"] == "autoscaling/v1"
    assert created["spec"]["maxReplicas"] == 5
