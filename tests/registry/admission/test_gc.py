"""OwnerReferencesPermissionEnforcement in the registry (after upstream's
plugin/pkg/admission/gc/gc_admission_test.go ``TestGCAdmission`` and
``TestBlockOwnerDeletionAdmission``): off by default; on, every create, update, patch and
apply of any resource is checked against the registry's authorizer for the request's user,
with upstream's 403 messages; the registry's own writes (no user) are not checked."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from kubegc.api.auth import Attributes, Decision, Privileged, Union, UserInfo, as_user
from kubegc.api.errors import StatusError
from kubegc.registry import Registry, Target
from kubegc.registry.admission import enabled_plugins
from tests.registry.conftest import manifest, target

PLUGIN = "OwnerReferencesPermissionEnforcement"
ALICE = UserInfo("alice", groups=("system:authenticated",))
DEPLOY_UID, SITE_UID, NS_UID = "uid-deploy", "uid-site", "uid-ns"


@dataclass
class Rules:
    """A tiny stand-in for RBAC: ``(verb, group, resource[/subresource])`` a user may do
    anywhere ("*" matches anything)."""

    allowed: set[tuple[str, str, str]] = field(default_factory=set)
    asked: list[Attributes] = field(default_factory=list)

    def authorize(self, attrs: Attributes) -> tuple[Decision, str]:
        self.asked.append(attrs)
        resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
        for verb, group, res in self.allowed:
            if verb == attrs.verb and group in ("*", attrs.api_group) and res in (
                    "*", resource):
                return Decision.ALLOW, ""
        return Decision.NO_OPINION, ""


@pytest.fixture
def rules(registry: Registry) -> Rules:
    rules = Rules()
    registry.authorizer = Union([Privileged(), rules])
    registry.admission.enabled = enabled_plugins([PLUGIN])
    return rules


@pytest.fixture
def alice(registry: Registry) -> Iterator[None]:
    """Requests as alice, once the registry has started (as the apiserver)."""
    with as_user(ALICE):
        yield


def ref(kind: str = "Deployment", api_version: str = "apps/v1", name: str = "web",
        uid: str = DEPLOY_UID, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, **extra}


def configmap(*refs: dict[str, Any], name: str = "c") -> dict[str, Any]:
    return manifest("configmaps", name, ownerReferences=list(refs))


async def refused(coro: Any) -> str:
    with pytest.raises(StatusError) as e:
        await coro
    assert e.value.code == 403 and e.value.reason == "Forbidden"
    return e.value.message


FINALIZERS_DENIED = ("cannot set blockOwnerDeletion if an ownerReference refers to a "
                     "resource you can't set finalizers on: , <nil>")
DELETE_DENIED = "cannot set an ownerRef on a resource you can't delete: , <nil>"


async def test_off_by_default(registry: Registry) -> None:
    registry.authorizer = Union([Privileged(), Rules()])
    assert PLUGIN not in registry.admission.enabled
    with as_user(ALICE):
        created = await registry.create(target(registry, "configmaps"),
                                        configmap(ref(blockOwnerDeletion=True)))
    assert created["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True


@pytest.mark.usefixtures("alice")
async def test_create_with_references_needs_no_delete(registry: Registry, rules: Rules) -> None:
    """A create may set any reference that does not block: whoever creates an object
    could as well not have."""
    await registry.create(target(registry, "configmaps"),
                          configmap(ref(), ref(blockOwnerDeletion=False, uid="u2", name="b")))
    assert rules.asked == []


@pytest.mark.usefixtures("alice")
async def test_blocking_a_deployment_needs_deployments_finalizers(registry: Registry,
                                                                  rules: Rules) -> None:
    t = target(registry, "configmaps")
    message = await refused(registry.create(t, configmap(ref(blockOwnerDeletion=True))))
    assert message == f'configmaps "c" is forbidden: {FINALIZERS_DENIED}'
    wildcard, owner = rules.asked
    assert (wildcard.verb, wildcard.api_group, wildcard.resource, wildcard.subresource,
            wildcard.name) == ("update", "*", "*", "finalizers", "*")
    assert (owner.user, owner.verb, owner.namespace, owner.api_group, owner.api_version,
            owner.resource, owner.subresource, owner.name) == (
        ALICE, "update", "default", "apps", "v1", "deployments", "finalizers", "web")
    rules.allowed.add(("update", "apps", "deployments/finalizers"))
    created = await registry.create(t, configmap(ref(blockOwnerDeletion=True)))
    assert created["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True


@pytest.mark.usefixtures("alice")
async def test_finalizers_of_anything_is_enough(registry: Registry, rules: Rules) -> None:
    rules.allowed.add(("update", "*", "*"))
    await registry.create(target(registry, "configmaps"),
                          configmap(ref(kind="Nothing", api_version="nowhere.io/v9",
                                        blockOwnerDeletion=True)))


@pytest.mark.usefixtures("alice")
async def test_changing_references_needs_delete_on_the_object(registry: Registry,
                                                             rules: Rules) -> None:
    t = target(registry, "configmaps")
    with as_user(None):
        await registry.create(t, configmap(ref()))
    current = await registry.get(t, "c")
    current["data"] = {"a": "b"}  # the references as they are: no check
    current, _ = await registry.update(t, "c", current)
    assert rules.asked == []
    changed = copy.deepcopy(current)
    changed["metadata"]["ownerReferences"][0]["controller"] = True
    message = await refused(registry.update(t, "c", changed))
    assert message == f'configmaps "c" is forbidden: {DELETE_DENIED}'
    asked = rules.asked[-1]
    assert (asked.verb, asked.namespace, asked.api_group, asked.resource, asked.name) == (
        "delete", "default", "", "configmaps", "c")
    for patch in (b'{"metadata":{"ownerReferences":null}}',
                  b'{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap",'
                  b'"name":"x","uid":"ux"}]}}'):
        message = await refused(registry.patch(t, "c", "application/merge-patch+json", patch))
        assert message == f'configmaps "c" is forbidden: {DELETE_DENIED}'
    rules.allowed.add(("delete", "", "configmaps"))
    updated, _ = await registry.update(t, "c", changed)
    assert updated["metadata"]["ownerReferences"][0]["controller"] is True


@pytest.mark.usefixtures("alice")
async def test_turning_blocking_on_needs_delete_and_finalizers(registry: Registry,
                                                              rules: Rules) -> None:
    t = target(registry, "configmaps")
    with as_user(None):
        await registry.create(t, configmap(ref(blockOwnerDeletion=False)))
    rules.allowed.add(("delete", "", "configmaps"))
    patch = (b'[{"op":"replace","path":"/metadata/ownerReferences/0/blockOwnerDeletion",'
             b'"value":true}]')
    message = await refused(registry.patch(t, "c", "application/json-patch+json", patch))
    assert message == f'configmaps "c" is forbidden: {FINALIZERS_DENIED}'
    rules.allowed.add(("update", "apps", "deployments/finalizers"))
    patched, _ = await registry.patch(t, "c", "application/json-patch+json", patch)
    assert patched["metadata"]["ownerReferences"][0]["blockOwnerDeletion"] is True
    # already blocking: keeping it so (or dropping it) needs no finalizers permission
    rules.allowed.discard(("update", "apps", "deployments/finalizers"))
    patched["metadata"]["labels"] = {"x": "y"}
    patched["metadata"]["ownerReferences"].append(ref(uid="u2", name="other"))
    await registry.update(t, "c", patched)


@pytest.mark.usefixtures("alice")
async def test_apply_is_an_update(registry: Registry, rules: Rules) -> None:
    t = target(registry, "configmaps")
    body = (b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","ownerReferences":'
            b'[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"uid-deploy",'
            b'"blockOwnerDeletion":true}]}}')
    apply = "application/apply-patch+yaml"
    message = await refused(registry.patch(t, "c", apply, body, field_manager="me"))
    assert message == f'configmaps "c" is forbidden: {FINALIZERS_DENIED}'  # apply creates
    rules.allowed.add(("update", "apps", "deployments/finalizers"))
    await registry.patch(t, "c", apply, body, field_manager="me")
    rules.allowed.clear()
    message = await refused(registry.patch(t, "c", apply, body.replace(b"web", b"api"),
                                           field_manager="me"))
    assert message == f'configmaps "c" is forbidden: {DELETE_DENIED}'


SITES_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "sites.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "sites", "singular": "site", "kind": "Site"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                 "openAPIV3Schema": {"type": "object",
                                     "x-kubernetes-preserve-unknown-fields": True}}}]}}


async def _sites(registry: Registry) -> Target:
    with as_user(None):
        await registry.create(target(registry, "customresourcedefinitions", ""),
                              copy.deepcopy(SITES_CRD))
    return registry.target("example.com", "v1", "sites", "default")


@pytest.mark.usefixtures("alice")
async def test_a_custom_owner_needs_its_finalizers(registry: Registry, rules: Rules) -> None:
    await _sites(registry)
    site_ref = ref(kind="Site", api_version="example.com/v1", name="blog", uid=SITE_UID,
                   controller=True, blockOwnerDeletion=True)
    t = target(registry, "configmaps")
    message = await refused(registry.create(t, configmap(site_ref)))
    assert message == f'configmaps "c" is forbidden: {FINALIZERS_DENIED}'
    owner = rules.asked[-1]
    assert (owner.api_group, owner.api_version, owner.resource, owner.subresource,
            owner.name, owner.namespace) == ("example.com", "v1", "sites", "finalizers",
                                             "blog", "default")
    rules.allowed.add(("update", "example.com", "sites/finalizers"))
    await registry.create(t, configmap(site_ref))


@pytest.mark.usefixtures("alice")
async def test_a_custom_dependent_is_checked_too(registry: Registry, rules: Rules) -> None:
    sites = await _sites(registry)
    site = {"apiVersion": "example.com/v1", "kind": "Site",
            "metadata": {"name": "blog", "ownerReferences": [ref(blockOwnerDeletion=True)]}}
    message = await refused(registry.create(sites, site))
    assert message == f'sites.example.com "blog" is forbidden: {FINALIZERS_DENIED}'


@pytest.mark.usefixtures("alice")
async def test_an_unknown_kind_has_no_rest_mapping(registry: Registry, rules: Rules) -> None:
    t = target(registry, "configmaps")
    for api_version, kind, error in (
            ("example.com/v1", "Site", 'no matches for kind "Site" in version "example.com/v1"'),
            ("apps/v2", "Deployment", 'no matches for kind "Deployment" in version "apps/v2"')):
        message = await refused(registry.create(t, configmap(
            ref(kind=kind, api_version=api_version, blockOwnerDeletion=True))))
        assert message == (
            f'configmaps "c" is forbidden: cannot set blockOwnerDeletion in this case because '
            f"cannot find RESTMapping for APIVersion {api_version} Kind {kind}: {error}")


@pytest.mark.usefixtures("alice")
async def test_a_cluster_scoped_owner_is_asked_at_the_cluster_scope(registry: Registry,
                                                                   rules: Rules) -> None:
    ns_ref = ref(kind="Namespace", api_version="v1", name="default", uid=NS_UID,
                 blockOwnerDeletion=True)
    await refused(registry.create(target(registry, "configmaps"), configmap(ns_ref)))
    owner = rules.asked[-1]
    assert (owner.resource, owner.subresource, owner.namespace) == (
        "namespaces", "finalizers", "")


@pytest.mark.usefixtures("alice")
async def test_generated_names_are_named(registry: Registry, rules: Rules) -> None:
    body = manifest("configmaps", "", generateName="gen-",
                    ownerReferences=[ref(blockOwnerDeletion=True)])
    del body["metadata"]["name"]
    message = await refused(registry.create(target(registry, "configmaps"), body))
    assert message.startswith('configmaps "gen-') and message.endswith(FINALIZERS_DENIED)


async def test_the_registrys_own_writes_are_not_checked(registry: Registry,
                                                        rules: Rules) -> None:
    t = target(registry, "configmaps")
    await registry.create(t, configmap(ref(blockOwnerDeletion=True)))
    patch = b'{"metadata":{"ownerReferences":null}}'
    await registry.patch(t, "c", "application/merge-patch+json", patch)
    assert rules.asked == []


@pytest.mark.usefixtures("alice")
async def test_pod_status_is_whitelisted(registry: Registry, rules: Rules) -> None:
    pods = target(registry, "pods")
    with as_user(None):
        await registry.create(pods, manifest("pods", "p"))
    current = await registry.get(pods, "p")
    current["status"] = {"phase": "Running"}
    current["metadata"]["ownerReferences"] = [ref(blockOwnerDeletion=True)]
    updated, _ = await registry.update(pods, "p", current, subresource="status")
    assert "ownerReferences" not in updated["metadata"]  # the status strategy keeps them
    assert rules.asked == []


async def test_masters_may_do_anything(registry: Registry, rules: Rules) -> None:
    admin = UserInfo("admin", groups=("system:masters",))
    with as_user(admin):
        await registry.create(target(registry, "configmaps"),
                              configmap(ref(blockOwnerDeletion=True)))


# -- the controllers' and the garbage collector's writes under the bootstrap policy ---------

def _controller(name: str) -> UserInfo:
    from kubegc.api.auth import service_account_user

    return service_account_user("kube-system", name)


async def test_the_bootstrap_roles_grant_what_the_controllers_write(registry: Registry) -> None:
    """As upstream's bootstrap controller roles (kubernetes/kubernetes#49133): the garbage
    collector may remove references (``delete`` on everything) and each workload controller
    may block its own kind's deletion (``update`` on ``<kind>/finalizers``) — with RBAC, the
    plugin on, and each component as its ServiceAccount."""
    registry.admission.enabled = enabled_plugins([PLUGIN])
    pods, rss = target(registry, "pods"), target(registry, "replicasets")
    rs = await registry.create(rss, manifest("replicasets", "web-1"))
    rs_ref = ref(kind="ReplicaSet", name="web-1", uid=rs["metadata"]["uid"], controller=True,
                 blockOwnerDeletion=True)
    with as_user(_controller("replicaset-controller")):
        await registry.create(pods, manifest("pods", "web-1-a", ownerReferences=[rs_ref]))
    with as_user(_controller("deployment-controller")):  # it may not block ReplicaSets
        message = await refused(registry.create(pods, manifest(
            "pods", "web-1-b", ownerReferences=[rs_ref])))
    assert message.endswith(
        "cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set "
        "finalizers on: , <nil>")
    with as_user(_controller("generic-garbage-collector")):  # orphaning: references removed
        await registry.patch(pods, "web-1-a", "application/merge-patch+json",
                             b'{"metadata":{"ownerReferences":null}}')
    assert "ownerReferences" not in (await registry.get(pods, "web-1-a"))["metadata"]
