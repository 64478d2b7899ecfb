"""RBAC as a user of ``kubegc serve`` meets it: each verb allowed by a Role and every other
refused with upstream's 403, subresources, resourceNames, non-resource URLs, a ClusterRole
granted in one namespace by a RoleBinding, aggregation into ``edit``, RBAC's own escalation
checks, anonymous and ``/debug`` requests, and a cascade started by a user who may only
delete the owner (the garbage collector deletes the rest as itself). Users come from the
server's ``--token-auth-file``; requests go through the real kubectl, raw HTTP and the
official Python client."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .conftest import eventually
from .rbac_helpers import (
    USERS,
    RBACServer,
    binding,
    cluster_role,
    rbac_server_fixture,
    role,
    rule,
    user,
)

rbac = pytest.fixture(scope="module", name="rbac")(rbac_server_fixture)
pytestmark = pytest.mark.kubectl

RBAC_V1 = "/apis/rbac.authorization.k8s.io/v1"


@pytest.fixture
def ns(rbac: RBACServer) -> Iterator[str]:
    name = rbac.namespace()
    yield name
    rbac.kubectl("", "delete", "namespace", name, "--wait=false", check=False)


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": data or {"k": "v"}}


def forbidden(who: str, verb: str, resource: str, namespace: str, *, name: str = "",
              group: str = "") -> str:
    """Upstream's 403 message (``responsewriters.Forbidden``): the group-resource (of a
    subresource: the resource) and name, then what was refused where."""
    base = resource.split("/")[0]
    gr = f"{base}.{group}" if group else base
    subject = f'{gr} "{name}"' if name else gr
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    return (f'{subject} is forbidden: User "{who}" cannot {verb} resource "{resource}" in '
            f'API group "{group}" {where}')


def _request(verb: str, ns: str) -> tuple[str, str, Any, str]:
    """(method, path, body, content type) of ``verb`` on configmaps in ``ns``."""
    base = f"/api/v1/namespaces/{ns}/configmaps"
    return {
        "get": ("GET", f"{base}/c", None, "application/json"),
        "list": ("GET", base, None, "application/json"),
        "watch": ("GET", f"{base}?watch=true&timeoutSeconds=1", None, "application/json"),
        "create": ("POST", base, configmap("new"), "application/json"),
        "update": ("PUT", f"{base}/c", configmap("c", k="updated"), "application/json"),
        "patch": ("PATCH", f"{base}/c", {"data": {"k": "patched"}},
                  "application/merge-patch+json"),
        "delete": ("DELETE", f"{base}/c", None, "application/json"),
        "deletecollection": ("DELETE", base, None, "application/json"),
    }[verb]


VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")


@pytest.mark.parametrize("verb", VERBS)
def test_a_role_allows_its_verb_and_nothing_else(rbac: RBACServer, ns: str, verb: str) -> None:
    rbac.kubectl("", "create", "configmap", "c", "-n", ns, "--from-literal=k=v")
    rbac.apply([role(ns, "only", rule(verb, '""', "configmaps")),
                binding(ns, "only", "Role", "only", {"kind": "Group", "name": "devs",
                                                       "apiGroup": "rbac.authorization.k8s.io"})])
    method, path, body, content_type = _request(verb, ns)
    status, answer = rbac.http("bob", method, path, body, content_type=content_type)
    assert status in (200, 201), answer
    for other in VERBS:
        if other == verb:
            continue
        method, path, body, content_type = _request(other, ns)
        status, answer = rbac.http("bob", method, path, body, content_type=content_type)
        name = "c" if other in ("get", "update", "patch", "delete") else ""
        assert (status, answer["message"]) == (403, forbidden(
            "bob", other, "configmaps", ns, name=name)), other
        assert answer["details"] == ({"name": "c", "kind": "configmaps"} if name
                                     else {"kind": "configmaps"})


def test_kubectl_and_the_python_client_meet_the_same_refusal(rbac: RBACServer, ns: str) -> None:
    proc = rbac.kubectl("alice", "get", "pods", "-n", ns, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == ("Error from server (Forbidden): " + forbidden(
        "alice", "list", "pods", ns))
    proc = rbac.kubectl("alice", "get", "nodes", check=False)
    assert proc.stderr.strip() == ("Error from server (Forbidden): " + forbidden(
        "alice", "list", "nodes", ""))
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(rbac.server.kubeconfig),
                            client_configuration=configuration)
    configuration.refresh_api_key_hook = None  # it would put the kubeconfig's token back
    configuration.api_key = {"BearerToken": "Bearer " + USERS["alice"][0]}
    with client.ApiClient(configuration) as api:
        with pytest.raises(ApiException) as refused:
            client.AppsV1Api(api).create_namespaced_deployment(ns, {
                "metadata": {"name": "d"}, "spec": {
                    "selector": {"matchLabels": {"a": "b"}},
                    "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                        "containers": [{"name": "c", "image": "x"}]}}}})
        assert refused.value.status == 403
        assert json.loads(refused.value.body)["message"] == forbidden(
            "alice", "create", "deployments", ns, group="apps")


def test_subresources_are_their_own_permissions(rbac: RBACServer, ns: str) -> None:
    rbac.kubectl("", "create", "deployment", "web", "--image=x", "-n", ns)
    rbac.apply([role(ns, "scaler", rule("get", "apps", "deployments"),
                     rule("get update patch", "apps", "deployments/scale"),
                     rule("get", '""', "pods"), rule("patch", '""', "pods/status")),
                binding(ns, "scaler", "Role", "scaler", user("carol"))])
    rbac.kubectl("carol", "scale", "deployment", "web", "--replicas=3", "-n", ns)
    proc = rbac.kubectl("carol", "patch", "deployment", "web", "-n", ns, "-p",
                        '{"spec":{"replicas":1}}', check=False)
    assert proc.stderr.strip() == "Error from server (Forbidden): " + forbidden(
        "carol", "patch", "deployments", ns, name="web", group="apps")
    rbac.kubectl("", "run", "p", "--image=x", "-n", ns)
    path = f"/api/v1/namespaces/{ns}/pods/p"
    status, _ = rbac.http("carol", "PATCH", f"{path}/status", {
        "status": {"conditions": [{"type": "example.com/Checked", "status": "True"}]}},
        content_type="application/merge-patch+json")
    assert status == 200
    status, answer = rbac.http("carol", "PATCH", path, {"metadata": {"labels": {"a": "b"}}},
                               content_type="application/merge-patch+json")
    assert (status, answer["message"]) == (403, forbidden("carol", "patch", "pods", ns,
                                                         name="p"))
    status, answer = rbac.http("alice", "PUT", f"{path}/status", {})
    assert (status, answer["message"]) == (403, forbidden("alice", "update", "pods/status",
                                                         ns, name="p"))


def access(rbac: RBACServer, who: str, **attributes: str) -> bool:
    status, review = rbac.http("", "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                               {"spec": {"user": who, "groups": ["system:authenticated"],
                                         "resourceAttributes": attributes}})
    assert status == 201, review
    return bool(review["status"]["allowed"])


def test_a_custom_resources_finalizers_subresource(rbac: RBACServer, ns: str) -> None:
    """``sites/finalizers`` (what OwnerReferencesPermissionEnforcement asks for) is granted
    by naming it, or ``*/finalizers``, never by ``sites``."""
    rbac.apply([role(ns, "sites", rule("get list update", "example.com", "sites")),
                binding(ns, "sites", "Role", "sites", user("dave"))])
    asked = {"namespace": ns, "verb": "update", "group": "example.com", "resource": "sites"}
    assert access(rbac, "dave", **asked)
    assert not access(rbac, "dave", **asked, subresource="finalizers")
    rbac.apply([role(ns, "fin", rule("update", "example.com", "sites/finalizers")),
                binding(ns, "fin", "Role", "fin", user("dave"))])
    assert access(rbac, "dave", **asked, subresource="finalizers")
    assert not access(rbac, "dave", **{**asked, "resource": "others"}, subresource="finalizers")
    rbac.apply([role(ns, "any", rule("update", "*", "*/finalizers")),
                binding(ns, "any", "Role", "any", user("erin"))])
    assert access(rbac, "erin", **{**asked, "resource": "others"}, subresource="finalizers")
    assert not access(rbac, "erin", **asked)


def test_resource_names_limit_a_rule_to_those_objects(rbac: RBACServer, ns: str) -> None:
    for name in ("allowed", "other"):
        rbac.kubectl("", "create", "configmap", name, "-n", ns, "--from-literal=k=v")
    rbac.apply([role(ns, "one", rule("get update", '""', "configmaps", names="allowed")),
                binding(ns, "one", "Role", "one", user("alice"))])
    rbac.kubectl("alice", "get", "configmap", "allowed", "-n", ns)
    proc = rbac.kubectl("alice", "get", "configmap", "other", "-n", ns, check=False)
    assert proc.stderr.strip() == "Error from server (Forbidden): " + forbidden(
        "alice", "get", "configmaps", ns, name="other")
    proc = rbac.kubectl("alice", "get", "configmaps", "-n", ns, check=False)
    assert proc.stderr.strip() == "Error from server (Forbidden): " + forbidden(
        "alice", "list", "configmaps", ns)


def test_a_cluster_role_bound_in_a_namespace_grants_there_only(rbac: RBACServer, ns: str
                                                               ) -> None:
    other = rbac.namespace()
    rbac.apply([cluster_role(f"cm-reader-{ns}", rule("get list", '""', "configmaps")),
                binding(ns, "cm", "ClusterRole", f"cm-reader-{ns}", user("erin"))])
    rbac.kubectl("erin", "get", "configmaps", "-n", ns)
    assert rbac.kubectl("erin", "get", "configmaps", "-n", other, check=False).returncode == 1
    proc = rbac.kubectl("erin", "get", "configmaps", "-A", check=False)
    assert proc.stderr.strip() == "Error from server (Forbidden): " + forbidden(
        "erin", "list", "configmaps", "")
    rbac.kubectl("", "delete", "namespace", other, "--wait=false")


def test_a_labelled_cluster_role_aggregates_into_edit(rbac: RBACServer, ns: str) -> None:
    rbac.apply(binding(ns, "editors", "ClusterRole", "edit", user("frank")))
    asked = {"namespace": ns, "verb": "create", "group": "example.com", "resource": "widgets"}
    assert access(rbac, "frank", namespace=ns, verb="create", resource="configmaps")
    assert not access(rbac, "frank", **asked)
    rbac.apply(cluster_role(f"widgets-{ns}", rule("create", "example.com", "widgets"),
                            labels={"rbac.authorization.k8s.io/aggregate-to-edit": "true"}))
    eventually(lambda: access(rbac, "frank", **asked), what="edit to aggregate widgets")
    edit = json.loads(rbac.kubectl("", "get", "clusterrole", "edit", "-o", "json").stdout)
    assert {"apiGroups": ["example.com"], "resources": ["widgets"],
            "verbs": ["create"]} in edit["rules"]
    # admin aggregates edit, so it holds the rule too
    eventually(lambda: access(rbac, "x", **asked) is False and any(
        r.get("resources") == ["widgets"] for r in json.loads(rbac.kubectl(
            "", "get", "clusterrole", "admin", "-o", "json").stdout)["rules"]),
        what="admin to aggregate edit's rules")
    rbac.kubectl("", "delete", "clusterrole", f"widgets-{ns}")
    eventually(lambda: not access(rbac, "frank", **asked), what="the rule to leave edit")


def _escalation(who: str, groups: str, *rules: str) -> str:
    return (f'user "{who}" (groups={groups}) is attempting to grant RBAC permissions not '
            "currently held:\n" + "\n".join(rules))


def test_a_role_may_only_hold_what_its_writer_holds(rbac: RBACServer, ns: str) -> None:
    rbac.apply([role(ns, "role-writer", rule("create update", "rbac.authorization.k8s.io",
                                             "roles"), rule("get list", '""', "pods")),
                binding(ns, "role-writer", "Role", "role-writer", user("alice"))])
    roles = f"{RBAC_V1}/namespaces/{ns}/roles"
    status, _ = rbac.http("alice", "POST", roles, role(ns, "readers", rule("get", '""', "pods")))
    assert status == 201
    status, answer = rbac.http("alice", "POST", roles, role(
        ns, "deleters", rule("get delete deletecollection", '""', "pods services")))
    assert (status, answer["reason"]) == (403, "Forbidden")
    assert answer["message"] == 'roles.rbac.authorization.k8s.io "deleters" is forbidden: ' + (
        _escalation("alice", '["system:authenticated"]',
                    '{APIGroups:[""], Resources:["pods"], Verbs:["delete" "deletecollection"]}',
                    '{APIGroups:[""], Resources:["services"], Verbs:["get" "delete" '
                    '"deletecollection"]}'))
    assert answer["details"] == {"name": "deleters", "group": "rbac.authorization.k8s.io",
                                 "kind": "roles"}
    # growing a role by an update is checked too
    status, answer = rbac.http("alice", "PUT", f"{roles}/readers", role(
        ns, "readers", rule("get delete", '""', "pods")))
    assert (status, answer["reason"]) == (403, "Forbidden")
    rbac.apply([role(ns, "escalator", rule("escalate", "rbac.authorization.k8s.io", "roles")),
                binding(ns, "escalator", "Role", "escalator", user("alice"))])
    status, _ = rbac.http("alice", "POST", roles, role(ns, "deleters", rule(
        "delete", '""', "pods")))
    assert status == 201


def test_a_binding_needs_the_roles_rules_or_bind(rbac: RBACServer, ns: str) -> None:
    rbac.apply([role(ns, "binder", rule("create", "rbac.authorization.k8s.io", "rolebindings"),
                     rule("get list", '""', "pods")),
                role(ns, "pod-reader", rule("get", '""', "pods")),
                binding(ns, "binder", "Role", "binder", user("carol"))])
    bindings = f"{RBAC_V1}/namespaces/{ns}/rolebindings"
    status, _ = rbac.http("carol", "POST", bindings, binding(
        ns, "readers", "Role", "pod-reader", user("erin")))
    assert status == 201
    status, answer = rbac.http("carol", "POST", bindings, binding(
        ns, "admins", "ClusterRole", "cluster-admin", user("erin")))
    assert (status, answer["message"]) == (403, (
        'rolebindings.rbac.authorization.k8s.io "admins" is forbidden: ' + _escalation(
            "carol", '["system:authenticated"]',
            '{APIGroups:["*"], Resources:["*"], Verbs:["*"]}',
            '{NonResourceURLs:["*"], Verbs:["*"]}')))
    status, answer = rbac.http("carol", "POST", bindings, binding(
        ns, "ghost", "Role", "no-such-role", user("erin")))
    assert (status, answer["message"]) == (
        404, 'roles.rbac.authorization.k8s.io "no-such-role" not found')
    rbac.apply([role(ns, "may-bind", rule("bind", "rbac.authorization.k8s.io", "clusterroles",
                                          names="cluster-admin")),
                binding(ns, "may-bind", "Role", "may-bind", user("carol"))])
    status, _ = rbac.http("carol", "POST", bindings, binding(
        ns, "admins", "ClusterRole", "cluster-admin", user("erin")))
    assert status == 201
    proc = rbac.kubectl("erin", "auth", "can-i", "delete", "secrets", "-n", ns)
    assert proc.stdout.strip() == "yes"


def test_an_aggregation_rule_needs_every_permission(rbac: RBACServer, ns: str) -> None:
    rbac.apply([cluster_role(f"cr-writer-{ns}", rule("create", "rbac.authorization.k8s.io",
                                                     "clusterroles"),
                             rule("get", '""', "pods")),
                binding("", f"cr-writer-{ns}", "ClusterRole", f"cr-writer-{ns}",
                        user("dave"))])
    clusterroles = f"{RBAC_V1}/clusterroles"
    status, _ = rbac.http("dave", "POST", clusterroles, cluster_role(
        f"fine-{ns}", rule("get", '""', "pods")))
    assert status == 201
    aggregated = {**cluster_role(f"gathers-{ns}"), "aggregationRule": {
        "clusterRoleSelectors": [{"matchLabels": {"x": "y"}}]}}
    status, answer = rbac.http("dave", "POST", clusterroles, aggregated)
    assert (status, answer["message"]) == (403, (
        f'clusterroles.rbac.authorization.k8s.io "gathers-{ns}" is forbidden: must have '
        "cluster-admin privileges to use the aggregationRule"))


def test_anonymous_requests_reach_only_the_public_endpoints(rbac: RBACServer) -> None:
    for path in ("/healthz", "/livez", "/readyz", "/version"):
        status, _ = rbac.http(None, "GET", path)
        assert status == 200, path
    status, answer = rbac.http(None, "GET", "/api/v1/pods")
    assert (status, answer["message"]) == (403, forbidden("system:anonymous", "list", "pods",
                                                         ""))
    status, answer = rbac.http(None, "GET", "/apis")
    assert (status, answer["message"]) == (
        403, 'forbidden: User "system:anonymous" cannot get path "/apis"')
    assert answer["details"] == {}


def test_debug_endpoints_are_for_system_masters_only(rbac: RBACServer) -> None:
    status, answer = rbac.http("alice", "GET", "/debug/kubegc/watchers")
    assert (status, answer["message"]) == (
        403, 'forbidden: User "alice" cannot get path "/debug/kubegc/watchers"')
    status, _ = rbac.http("", "GET", "/debug/kubegc/watchers")
    assert status == 200


def test_non_resource_urls_with_a_trailing_star(rbac: RBACServer) -> None:
    rbac.apply([cluster_role("debug-watchers", {"verbs": ["get"],
                                                "nonResourceURLs": ["/debug/kubegc/*"]}),
                binding("", "debug-watchers", "ClusterRole", "debug-watchers", user("bob"))])
    try:
        status, _ = rbac.http("bob", "GET", "/debug/kubegc/watchers")
        assert status == 200
        status, answer = rbac.http("bob", "GET", "/debug/controllers")
        assert (status, answer["message"]) == (
            403, 'forbidden: User "bob" cannot get path "/debug/controllers"')
    finally:
        rbac.kubectl("", "delete", "clusterrolebinding", "debug-watchers")


@pytest.mark.parametrize("policy", ["Background", "Foreground"])
def test_a_cascade_started_by_a_user_who_may_only_delete_the_owner(
        rbac: RBACServer, ns: str, policy: str) -> None:
    """The user deletes the Deployment; the garbage collector, as
    system:serviceaccount:kube-system:generic-garbage-collector, deletes its ReplicaSet and
    pods, which the user may not even read."""
    rbac.kubectl("", "create", "deployment", "web", "--image=x", "--replicas=3", "-n", ns)

    def pods() -> list[dict[str, Any]]:
        listed = json.loads(rbac.kubectl("", "get", "pods", "-n", ns, "-o", "json").stdout)
        return list(listed["items"])

    eventually(lambda: len(pods()) == 3, what="the Deployment's pods")
    rbac.apply([role(ns, "deleter", rule("delete", "apps", "deployments")),
                binding(ns, "deleter", "Role", "deleter", user("bob"))])
    assert rbac.http("bob", "GET", f"/api/v1/namespaces/{ns}/pods")[0] == 403
    status, _ = rbac.http("bob", "DELETE", f"/apis/apps/v1/namespaces/{ns}/deployments/web",
                          {"propagationPolicy": policy})
    assert status in (200, 202)

    def gone() -> bool:
        replicasets = json.loads(rbac.kubectl("", "get", "rs", "-n", ns, "-o",
                                              "json").stdout)["items"]
        deployments = json.loads(rbac.kubectl("", "get", "deploy", "-n", ns, "-o",
                                              "json").stdout)["items"]
        return not pods() and not replicasets and not deployments

    eventually(gone, timeout=60, what="every dependent deleted")
