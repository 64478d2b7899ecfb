"""The RBAC policy in the registry: the index is current as soon as a write returns and
ignores older news from the watch cache; the authorizer's reasons; the bootstrap policy
and its reconciliation; the RBAC strategies' escalation checks."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api import errors
from kubegc.api.auth import (
    ANONYMOUS_USER,
    Attributes,
    Decision,
    UserInfo,
    as_user,
    service_account_user,
)
from kubegc.registry import Registry
from kubegc.registry.groups.rbac.bootstrappolicy import (
    CLUSTER_ROLE_BINDINGS,
    CLUSTER_ROLES,
    CONTROLLER_ROLES,
)
from kubegc.registry.groups.rbac.index import PolicyIndex
from kubegc.registry.groups.rbac.reconciliation import reconciled_binding, reconciled_role

GROUP = "rbac.authorization.k8s.io"
BOB = UserInfo("bob", groups=("system:authenticated",))


def t(registry: Registry, resource: str, namespace: str = "") -> Any:
    return registry.target(GROUP, "v1", resource, namespace)


def role(name: str, *rules: dict[str, Any], namespace: str = "ns") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"metadata": meta, "rules": list(rules)}


def binding(name: str, kind: str, role_name: str, subject: str = "bob") -> dict[str, Any]:
    return {"metadata": {"name": name},
            "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role_name},
            "subjects": [{"kind": "User", "name": subject, "apiGroup": GROUP}]}


def pods(verb: str, namespace: str = "ns", user: UserInfo = BOB) -> Attributes:
    return Attributes(user=user, verb=verb, resource="pods", namespace=namespace)


GET_PODS = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}


@pytest.fixture(autouse=True)
async def namespace(registry: Registry) -> None:
    await registry.create(registry.target("", "v1", "namespaces"), {"metadata": {"name": "ns"}})


async def test_a_binding_is_in_force_when_its_write_returns(registry: Registry) -> None:
    authorizer = registry.authorizer
    assert authorizer.authorize(pods("get")) == (Decision.NO_OPINION, "")
    await registry.create(t(registry, "roles", "ns"), role("reader", GET_PODS))
    await registry.create(t(registry, "rolebindings", "ns"), binding("b", "Role", "reader"))
    assert authorizer.authorize(pods("get")) == (
        Decision.ALLOW, 'RBAC: allowed by RoleBinding "b/ns" of Role "reader" to User "bob"')
    assert authorizer.authorize(pods("get", "other"))[0] is Decision.NO_OPINION
    await registry.delete(t(registry, "roles", "ns"), "reader")
    assert authorizer.authorize(pods("get")) == (
        Decision.NO_OPINION, 'RBAC: role.rbac.authorization.k8s.io "reader" not found')


async def test_a_remembered_grant_ends_with_the_policy_that_made_it(
        registry: Registry) -> None:
    """The authorizer remembers grants of rules without resourceNames across object names
    (the GC deletes thousands as one user); a policy change forgets them, a grant bound to
    names never covers another name, and the reason is always the full evaluation's."""
    authorizer = registry.authorizer
    delete_any = {"verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]}
    delete_a = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
                "resourceNames": ["a"]}
    await registry.create(t(registry, "roles", "ns"), role("deleter", delete_any, delete_a))
    await registry.create(t(registry, "rolebindings", "ns"), binding("b", "Role", "deleter"))
    for name in ("a", "b", "c"):
        assert authorizer.authorize(Attributes(
            user=BOB, verb="delete", resource="pods", namespace="ns", name=name))[0] is (
            Decision.ALLOW)
    assert authorizer.authorize(Attributes(
        user=BOB, verb="get", resource="pods", namespace="ns", name="a"))[0] is Decision.ALLOW
    assert authorizer.authorize(Attributes(
        user=BOB, verb="get", resource="pods", namespace="ns", name="b"))[0] is (
        Decision.NO_OPINION)
    await registry.delete(t(registry, "rolebindings", "ns"), "b")
    assert authorizer.authorize(Attributes(
        user=BOB, verb="delete", resource="pods", namespace="ns", name="d"))[0] is (
        Decision.NO_OPINION)
    # cluster role bindings are visited first: a name-bound grant there precedes the
    # namespace's grant of every name, so the answer (its reason) depends on the name
    get_a = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}
    get_any = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}
    await registry.create(t(registry, "clusterroles"), role("get-a", get_a, namespace=""))
    await registry.create(t(registry, "clusterrolebindings"),
                          binding("cb", "ClusterRole", "get-a"))
    await registry.create(t(registry, "roles", "ns"), role("getter", get_any))
    await registry.create(t(registry, "rolebindings", "ns"), binding("g", "Role", "getter"))
    for name, by in (("c", 'RoleBinding "g/ns"'), ("a", 'ClusterRoleBinding "cb"'),
                     ("d", 'RoleBinding "g/ns"')):
        assert authorizer.authorize(Attributes(
            user=BOB, verb="get", resource="pods", namespace="ns", name=name))[1].startswith(
            f"RBAC: allowed by {by}")


def test_older_news_never_undoes_a_newer_write() -> None:
    index = PolicyIndex()
    key = f"/registry/{GROUP}/clusterroles/r"
    newer = {"metadata": {"name": "r", "resourceVersion": "7"}, "rules": [GET_PODS]}
    index.apply_object(key, newer)
    index.apply_event(key, {"metadata": {"name": "r"}, "rules": []}, 5, deleted=False)
    assert index.cluster_role("r") is not None
    assert len(index.cluster_role("r").rules) == 1  # type: ignore[union-attr]
    # a delete of revision 7's state is newer than it, whoever tells first
    index.apply_object(key, newer, removed=True)
    index.apply_event(key, newer, 7, deleted=False)
    assert index.cluster_role("r") is None
    index.apply_event(key, newer, 8, deleted=True)
    index.apply_event(key, {"metadata": {"name": "r"}, "rules": []}, 9, deleted=False)
    assert index.cluster_role("r") is not None


async def test_another_servers_writes_arrive_by_the_watch_cache(registry: Registry) -> None:
    other = Registry(registry.kv, clock=registry.clock)
    await other.start(bootstrap=False)
    try:
        await registry.create(t(registry, "clusterroles"), role("cr", GET_PODS, namespace=""))
        await registry.create(t(registry, "clusterrolebindings"),
                              binding("crb", "ClusterRole", "cr"))
        await other.cache.wait_for_revision(registry.kv.current_revision)
        assert other.authorizer.authorize(pods("get", "anywhere"))[0] is Decision.ALLOW
    finally:
        await other.stop()


def test_every_controller_has_its_role_and_binding() -> None:
    roles = {r["metadata"]["name"] for r in CLUSTER_ROLES}
    bound = {b["metadata"]["name"]: b for b in CLUSTER_ROLE_BINDINGS}
    for name in CONTROLLER_ROLES:
        assert f"system:controller:{name}" in roles
        assert bound[f"system:controller:{name}"]["subjects"] == [
            {"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}]
    for obj in (*CLUSTER_ROLES, *CLUSTER_ROLE_BINDINGS):
        assert obj["metadata"]["labels"]["kubernetes.io/bootstrapping"] == "rbac-defaults"
        assert obj["metadata"]["annotations"] == {
            "rbac.authorization.kubernetes.io/autoupdate": "true"}


async def test_the_bootstrap_policy_grants_what_upstreams_does(registry: Registry) -> None:
    authorizer = registry.authorizer

    def allowed(attrs: Attributes) -> bool:
        return authorizer.authorize(attrs)[0] is Decision.ALLOW

    def path(user: UserInfo, url: str) -> Attributes:
        return Attributes(user=user, verb="get", resource_request=False, path=url)

    for url in ("/healthz", "/livez", "/readyz", "/version", "/version/"):
        assert allowed(path(ANONYMOUS_USER, url))
    assert not allowed(path(ANONYMOUS_USER, "/api"))
    assert allowed(path(BOB, "/apis/apps/v1"))
    assert not allowed(path(BOB, "/debug/pprof/"))
    assert not allowed(pods("list", "", ANONYMOUS_USER))
    gc = service_account_user("kube-system", "generic-garbage-collector")
    assert allowed(Attributes(user=gc, verb="delete", api_group="example.com",
                              resource="sites", namespace="x"))
    assert not allowed(Attributes(user=gc, verb="create", resource="pods", namespace="x"))
    assert allowed(Attributes(user=BOB, verb="create", api_group="authorization.k8s.io",
                              resource="selfsubjectaccessreviews"))


def test_reconciling_adds_what_is_missing_and_keeps_what_users_changed() -> None:
    expected = {"metadata": {"name": "view", "labels": {"a": "1"}, "annotations": {}},
                "rules": [GET_PODS]}
    existing = {"metadata": {"name": "view", "labels": {"a": "mine", "b": "2"},
                             "resourceVersion": "3"},
                "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]}
    result = reconciled_role(existing, expected)
    assert result is not None
    assert result["metadata"]["labels"] == {"a": "mine", "b": "2"}
    assert result["rules"] == [existing["rules"][0], GET_PODS]
    assert reconciled_role(result, expected) is None  # nothing left to do
    crb = {"metadata": {"name": "b"}, "roleRef": {"kind": "ClusterRole", "name": "x"},
           "subjects": [{"kind": "Group", "name": "g"}]}
    mine = {**crb, "subjects": [{"kind": "User", "name": "u"}]}
    reconciled, recreate = reconciled_binding(mine, crb)
    assert not recreate and reconciled is not None
    assert reconciled["subjects"] == [{"kind": "User", "name": "u"}, {"kind": "Group",
                                                                       "name": "g"}]
    _, recreate = reconciled_binding({**crb, "roleRef": {"kind": "ClusterRole",
                                                         "name": "y"}}, crb)
    assert recreate


async def test_a_protected_bootstrap_role_is_left_alone(registry: Registry) -> None:
    view_t = t(registry, "clusterroles")
    view = await registry.get(view_t, "system:public-info-viewer")
    view["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"] = "false"
    view["rules"] = []
    await registry.update(view_t, "system:public-info-viewer", view)
    await registry.ensure_rbac_policy()
    assert (await registry.get(view_t, "system:public-info-viewer"))["rules"] == []
    await registry.delete(view_t, "system:public-info-viewer")
    await registry.ensure_rbac_policy()
    assert (await registry.get(view_t, "system:public-info-viewer"))["rules"]


async def test_writes_to_rbac_are_checked_for_escalation(registry: Registry) -> None:
    await registry.create(t(registry, "roles", "ns"), role(
        "writer", {"verbs": ["create", "update"], "apiGroups": [GROUP], "resources": ["roles"]},
        GET_PODS))
    await registry.create(t(registry, "rolebindings", "ns"), binding("w", "Role", "writer"))
    roles = t(registry, "roles", "ns")
    with as_user(BOB):
        await registry.create(roles, role("fine", GET_PODS))
        with pytest.raises(errors.StatusError) as refused:
            await registry.create(roles, role("more", {
                "verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]}))
    assert refused.value.code == 403
    assert refused.value.message == (
        'roles.rbac.authorization.k8s.io "more" is forbidden: user "bob" '
        '(groups=["system:authenticated"]) is attempting to grant RBAC permissions not '
        'currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}')
    # the apiserver's own writes (no user) are never checked
    await registry.create(roles, role("more", {
        "verbs": ["delete"], "apiGroups": [""], "resources": ["pods"]}))
    # the garbage collector's fields may change whatever the writer holds
    fine = await registry.get(roles, "more")
    fine["metadata"]["finalizers"] = ["example.com/x"]
    with as_user(service_account_user("kube-system", "generic-garbage-collector")):
        await registry.update(roles, "more", fine)


async def test_a_relist_catches_up_with_what_the_watch_missed(registry: Registry) -> None:
    """When compaction overtakes the watch cache, the index reads storage again: what was
    written meanwhile is in, what was deleted is out."""
    index = PolicyIndex()
    await index.load(registry.kv)
    assert index.cluster_role("cluster-admin") is not None
    crt = t(registry, "clusterroles")
    await registry.create(crt, role("new", GET_PODS, namespace=""))
    await registry.delete(crt, "cluster-admin")
    await index.load(registry.kv)  # no events reached this index
    assert index.cluster_role("new") is not None
    assert index.cluster_role("cluster-admin") is None
