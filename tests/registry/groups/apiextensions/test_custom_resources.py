"""Custom resources are decoded, defaulted and validated against their CRD's schema on
every write, as by kube-apiserver: unknown fields pruned (400 under Strict, a warning under
Warn), schema defaults applied, and a 422 Invalid with upstream's messages otherwise."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.registry import Registry, Target
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.groups.apiextensions import custom_resource
from kubegc.registry.groups.apiextensions.crd import resource_info_for
from kubegc.storage.memory import MemoryKV

from ...conftest import target

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "required": ["image"], "properties": {
        "image": {"type": "string", "minLength": 1},
        "replicas": {"type": "integer", "minimum": 0, "default": 1},
        "mode": {"type": "string", "enum": ["Fast", "Safe"], "default": "Safe"},
    }},
    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
}}


def _crd(schema: dict[str, Any] = SCHEMA, *, beta: dict[str, Any] | None = None) -> dict[
        str, Any]:
    versions = [{"name": "v1", "served": True, "storage": True,
                 "subresources": {"status": {}}, "schema": {"openAPIV3Schema": schema}}]
    if beta is not None:
        versions.append({"name": "v1beta1", "served": True, "storage": False,
                         "subresources": {"status": {}}, "schema": {"openAPIV3Schema": beta}})
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": versions}}


def _widget(name: str = "w", version: str = "v1", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": f"example.com/{version}", "kind": "Widget",
            "metadata": {"name": name}, "spec": {"image": "nginx", **spec}}


async def _widgets(registry: Registry, crd: dict[str, Any] | None = None,
                   version: str = "v1") -> Target:
    await registry.create(target(registry, "customresourcedefinitions", ""),
                          copy.deepcopy(crd or _crd()))
    return registry.target("example.com", version, "widgets", "default")


async def _invalid(coro: Any) -> StatusError:
    with pytest.raises(StatusError) as e:
        await coro
    return e.value


async def test_an_invalid_widget_is_422_with_upstreams_message(registry: Registry) -> None:
    t = await _widgets(registry)
    err = await _invalid(registry.create(t, _widget(replicas="three")))
    assert (err.code, err.reason) == (422, "Invalid")
    assert err.message == (
        'Widget.example.com "w" is invalid: spec.replicas: Invalid value: "string": '
        'spec.replicas in body must be of type integer: "string"')
    status = err.to_status()
    assert status["details"] == {"name": "w", "group": "example.com", "kind": "Widget",
                                 "causes": [{
                                     "reason": "FieldValueTypeInvalid",
                                     "message": 'Invalid value: "string": spec.replicas in '
                                                'body must be of type integer: "string"',
                                     "field": "spec.replicas"}]}


async def test_several_errors_are_listed_in_one_message(registry: Registry) -> None:
    t = await _widgets(registry)
    body = _widget(replicas=-1, mode="Slow")
    del body["spec"]["image"]
    err = await _invalid(registry.create(t, body))
    assert err.message == (
        'Widget.example.com "w" is invalid: [spec.replicas: Invalid value: -1: spec.replicas '
        "in body should be greater than or equal to 0, spec.mode: Unsupported value: "
        '"Slow": supported values: "Fast", "Safe", spec.image: Required value]')


async def test_unknown_fields_strict_warn_and_in_process(registry: Registry) -> None:
    t = await _widgets(registry)
    err = await _invalid(registry.create(t, _widget(colour="blue", size=2),
                                         field_validation="Strict"))
    assert (err.code, err.message) == (400, (
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: '
        'unknown field "spec.colour", unknown field "spec.size"'))
    warnings: list[str] = []
    made = await registry.create(t, _widget(colour="blue"), field_validation="Warn",
                                 warnings=warnings)
    assert warnings == ['unknown field "spec.colour"']
    assert "colour" not in made["spec"]
    quiet = await registry.create(t, _widget("w2", colour="blue"))  # in-process: no mode
    assert "colour" not in quiet["spec"]
    assert "colour" not in (await registry.get(t, "w2"))["spec"]


async def test_defaults_are_applied_on_create_update_and_patch(registry: Registry) -> None:
    t = await _widgets(registry)
    made = await registry.create(t, _widget())
    assert made["spec"] == {"image": "nginx", "replicas": 1, "mode": "Safe"}
    body = _widget(replicas=3)
    body["metadata"]["resourceVersion"] = made["metadata"]["resourceVersion"]
    updated, _ = await registry.update(t, "w", body)
    assert updated["spec"] == {"image": "nginx", "replicas": 3, "mode": "Safe"}
    patched, _ = await registry.patch(t, "w", "application/merge-patch+json",
                                      b'{"spec": {"replicas": null, "mode": "Fast"}}')
    assert patched["spec"] == {"image": "nginx", "replicas": 1, "mode": "Fast"}


async def test_patches_are_pruned_and_validated(registry: Registry) -> None:
    t = await _widgets(registry)
    await registry.create(t, _widget())
    err = await _invalid(registry.patch(t, "w", "application/merge-patch+json",
                                        b'{"spec": {"image": ""}}'))
    assert err.message == ('Widget.example.com "w" is invalid: spec.image: Invalid value: "": '
                           "spec.image in body should be at least 1 chars long")
    err = await _invalid(registry.patch(t, "w", "application/json-patch+json",
                                        b'[{"op": "add", "path": "/spec/extra", "value": 1}]',
                                        field_validation="Strict"))
    assert err.code == 400 and 'unknown field "spec.extra"' in err.message
    applied, _ = await registry.patch(
        t, "w", "application/apply-patch+yaml",
        b"apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\n"
        b"spec: {image: redis, extra: 1}\n", field_manager="me", field_validation="Ignore")
    assert applied["spec"] == {"image": "redis", "replicas": 1, "mode": "Safe"}


async def test_status_subresource_validates_status_only(registry: Registry) -> None:
    t = await _widgets(registry)
    made = await registry.create(t, {**_widget(), "status": {"ready": "yes"}})
    assert "status" not in made  # create cannot set status: not validated either
    err = await _invalid(registry.update(t, "w", {**_widget(), "status": {"ready": "yes"}},
                                         subresource="status"))
    assert err.code == 422
    assert "ready in body must be of type boolean" in err.message
    ok, _ = await registry.update(t, "w", {**_widget(), "status": {"ready": True}},
                                  subresource="status")
    assert ok["status"] == {"ready": True}
    # the main resource ignores status changes when the status subresource is enabled
    main, _ = await registry.update(t, "w", {**_widget(replicas=2), "status": {"ready": 5}})
    assert main["status"] == {"ready": True} and main["spec"]["replicas"] == 2


def strategy_of(crd: dict[str, Any]) -> Strategy:
    """The strategy of the custom resources ``crd`` serves."""
    info = resource_info_for(crd)
    assert info is not None
    ctx = Registry(MemoryKV(), clock=ManualClock())._context
    return custom_resource(ctx, crd, info, current=lambda: crd).strategy


def test_status_updates_use_the_status_schema() -> None:
    strategy = strategy_of(_crd())
    assert strategy.validate_status is not None
    old = {**_widget(replicas="x"), "status": {"ready": False}}
    obj = {**_widget(replicas="x"), "status": {"ready": "yes"}}
    assert [f"{c.field}: {c.message}" for c in strategy.validate_status(obj, old)] == [
        'status.ready: Invalid value: "string": ready in body must be of type boolean: '
        '"string"']
    assert [c.field for c in strategy.validate(obj)] == ["spec.replicas", "status.ready"]


def test_updates_are_ratcheted() -> None:
    """Upstream's CRDValidationRatcheting: what an update leaves unchanged is not
    validated again (the schema may have been tightened since)."""
    validate_update = strategy_of(_crd()).validate_update
    assert validate_update is not None
    old = _widget(replicas=-5)
    new = copy.deepcopy(old)
    new["metadata"]["finalizers"] = []  # e.g. the GC removing a finalizer
    assert validate_update(new, old) == []
    new["spec"]["replicas"] = -6
    assert [c.field for c in validate_update(new, old)] == ["spec.replicas"]


async def test_each_version_uses_its_own_schema(registry: Registry) -> None:
    beta = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "image": {"type": "string"}, "size": {"type": "integer"}}}}}
    beta_t = await _widgets(registry, _crd(beta=beta), "v1beta1")
    made = await registry.create(beta_t, _widget(version="v1beta1", size=2, replicas=3))
    assert made["spec"] == {"image": "nginx", "size": 2}  # v1beta1: no replicas, no defaults
    err = await _invalid(registry.create(beta_t, _widget("b", "v1beta1", size="big")))
    assert "spec.size in body must be of type integer" in err.message


async def test_a_changed_schema_applies_to_the_next_write(registry: Registry) -> None:
    t = await _widgets(registry)
    await registry.create(t, _widget(replicas=5))
    crds = target(registry, "customresourcedefinitions", "")
    current = await registry.get(crds, "widgets.example.com")
    current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"]["replicas"]["maximum"] = 3
    await registry.update(crds, "widgets.example.com", current)
    t = registry.target("example.com", "v1", "widgets", "default")  # as each request does
    err = await _invalid(registry.create(t, _widget("w2", replicas=4)))
    assert "spec.replicas in body should be less than or equal to 3" in err.message


def test_schemas_are_compiled_once_per_content() -> None:
    first, second = resource_info_for(_crd()), resource_info_for(_crd())
    assert first is not None and second is not None
    assert first.schemas is second.schemas and first == second
    changed = resource_info_for(_crd({"type": "object"}))
    assert changed is not None and changed != first


async def test_a_version_without_schema_keeps_everything(registry: Registry) -> None:
    crd = _crd()
    del crd["spec"]["versions"][0]["schema"]
    t = await _widgets(registry, crd)
    made = await registry.create(t, _widget(anything={"goes": True}), field_validation="Strict")
    assert made["spec"]["anything"] == {"goes": True}


async def test_status_errors_are_relative_to_the_status_schema(registry: Registry) -> None:
    t = await _widgets(registry)
    await registry.create(t, _widget())
    err = await _invalid(registry.update(t, "w", {**_widget(), "status": {"ready": "yes"}},
                                         subresource="status"))
    assert err.message == ('Widget.example.com "w" is invalid: status.ready: Invalid value: '
                           '"string": ready in body must be of type boolean: "string"')


async def test_an_object_invalid_under_a_tightened_schema_can_still_lose_its_finalizer(
        registry: Registry) -> None:
    t = await _widgets(registry)
    held = _widget(replicas=5)
    held["metadata"]["finalizers"] = ["example.com/hold"]
    await registry.create(t, held)
    crds = target(registry, "customresourcedefinitions", "")
    current = await registry.get(crds, "widgets.example.com")
    current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"]["replicas"]["maximum"] = 3
    await registry.update(crds, "widgets.example.com", current)
    t = registry.target("example.com", "v1", "widgets", "default")
    await registry.delete(t, "w", {})
    err = await _invalid(registry.patch(t, "w", "application/merge-patch+json",
                                        b'{"spec": {"replicas": 4}}'))
    assert "spec.replicas in body should be less than or equal to 3" in err.message
    gone, _ = await registry.patch(t, "w", "application/merge-patch+json",
                                   b'{"metadata": {"finalizers": null}}')
    with pytest.raises(StatusError) as e:
        await registry.get(t, "w")
    assert e.value.code == 404 and gone["spec"]["replicas"] == 5
