"""The authorization.k8s.io reviews as kubectl and the official client use them: ``kubectl
auth can-i`` (SelfSubjectAccessReview), ``can-i --list`` (SelfSubjectRulesReview), and
SubjectAccessReview / LocalSubjectAccessReview asked by an admin, with upstream's answers
and errors. Users come from the server's ``--token-auth-file``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .rbac_helpers import RBACServer, binding, rbac_server_fixture, role, rule, user

rbac = pytest.fixture(scope="module", name="rbac")(rbac_server_fixture)
pytestmark = pytest.mark.kubectl

REVIEWS = "/apis/authorization.k8s.io/v1"


@pytest.fixture
def ns(rbac: RBACServer) -> Iterator[str]:
    name = rbac.namespace()
    yield name
    rbac.kubectl("", "delete", "namespace", name, "--wait=false", check=False)


def can_i(rbac: RBACServer, who: str, *args: str) -> str:
    proc = rbac.kubectl(who, "auth", "can-i", *args, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.strip()


def test_can_i_answers_from_the_roles_bound_at_that_moment(rbac: RBACServer, ns: str) -> None:
    assert can_i(rbac, "", "delete", "pods", "-n", ns) == "yes"  # system:masters
    assert can_i(rbac, "alice", "list", "pods", "-n", ns) == "no"
    rbac.apply([role(ns, "pod-reader", rule("get list watch", '""', "pods")),
                binding(ns, "read-pods", "Role", "pod-reader", user("alice"))])
    # no wait: the binding is in force as soon as its create returned
    assert can_i(rbac, "alice", "list", "pods", "-n", ns) == "yes"
    assert can_i(rbac, "alice", "delete", "pods", "-n", ns) == "no"
    assert can_i(rbac, "alice", "list", "pods", "-n", "default") == "no"
    assert can_i(rbac, "alice", "get", "/healthz") == "yes"
    assert can_i(rbac, "alice", "get", "/debug/pprof/") == "no"


def test_can_i_list_shows_the_rules_held_in_the_namespace(rbac: RBACServer, ns: str) -> None:
    rbac.apply([role(ns, "cm", rule("get update", '""', "configmaps", names="settings")),
                binding(ns, "cm", "Role", "cm", user("carol"))])
    rows = [line.split() for line in can_i(rbac, "carol", "--list", "-n", ns).splitlines()]
    assert rows[0] == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["configmaps", "[]", "[settings]", "[get", "update]"] in rows
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
    assert ["[/healthz]", "[]", "[get]"] in rows
    elsewhere = can_i(rbac, "carol", "--list", "-n", "default")
    assert "configmaps" not in elsewhere


def test_a_subject_access_review_says_which_binding_allowed(rbac: RBACServer, ns: str) -> None:
    rbac.apply([role(ns, "pod-reader", rule("get", '""', "pods")),
                binding(ns, "readers", "Role", "pod-reader", user("erin"))])
    status, review = rbac.http("", "POST", f"{REVIEWS}/subjectaccessreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "erin", "resourceAttributes": {
            "namespace": ns, "verb": "get", "resource": "pods", "name": "p"}}})
    assert status == 201
    assert review["status"] == {"allowed": True, "reason": (
        f'RBAC: allowed by RoleBinding "readers/{ns}" of Role "pod-reader" to User "erin"')}
    assert review["spec"] == {"user": "erin", "resourceAttributes": {
        "namespace": ns, "verb": "get", "resource": "pods", "name": "p"}}
    assert review["metadata"]["creationTimestamp"] is None
    status, review = rbac.http("", "POST", f"{REVIEWS}/subjectaccessreviews", {
        "spec": {"user": "erin", "resourceAttributes": {
            "namespace": ns, "verb": "delete", "resource": "pods"}}})
    assert (status, review["status"]) == (201, {"allowed": False})


def test_a_missing_role_is_said_in_the_reason(rbac: RBACServer, ns: str) -> None:
    rbac.apply(binding(ns, "dangling", "Role", "no-such-role", user("frank")))
    status, review = rbac.http("", "POST", f"{REVIEWS}/subjectaccessreviews", {
        "spec": {"user": "frank", "resourceAttributes": {
            "namespace": ns, "verb": "get", "resource": "pods"}}})
    assert review["status"] == {"allowed": False, "reason": (
        'RBAC: role.rbac.authorization.k8s.io "no-such-role" not found')}
    status, body = rbac.http("frank", "GET", f"/api/v1/namespaces/{ns}/pods")
    assert (status, body["message"]) == (403, (
        f'pods is forbidden: User "frank" cannot list resource "pods" in API group "" in the '
        f'namespace "{ns}": RBAC: role.rbac.authorization.k8s.io "no-such-role" not found'))


def test_a_local_review_is_about_its_own_namespace(rbac: RBACServer, ns: str) -> None:
    path = f"{REVIEWS}/namespaces/{ns}/localsubjectaccessreviews"
    status, body = rbac.http("", "POST", path, {"spec": {
        "user": "alice", "resourceAttributes": {"namespace": "other", "verb": "get",
                                                "resource": "pods"}}})
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == ('.authorization.k8s.io "" is invalid: '
                               'spec.resourceAttributes.namespace: Invalid value: "other": '
                               "must match metadata.namespace")
    status, body = rbac.http("", "POST", path, {"spec": {
        "user": "alice", "nonResourceAttributes": {"verb": "get", "path": "/healthz"}}})
    assert body["message"] == (
        '.authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: '
        'authorization.NonResourceAttributes{Path:"/healthz", Verb:"get"}: disallowed on this '
        "kind of request")
    status, body = rbac.http("", "POST", path, {"spec": {
        "user": "alice", "resourceAttributes": {"namespace": ns, "verb": "get",
                                                "resource": "pods"}}})
    assert (status, body["kind"], body["metadata"]["namespace"]) == (
        201, "LocalSubjectAccessReview", ns)
    assert body["status"] == {"allowed": False}


def test_malformed_reviews_are_refused_as_upstream(rbac: RBACServer) -> None:
    status, body = rbac.http("alice", "POST", f"{REVIEWS}/selfsubjectaccessreviews",
                             {"spec": {}})
    assert (status, body["message"]) == (422, (
        '.authorization.k8s.io "" is invalid: spec.resourceAttributes: Invalid value: "null": '
        "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    status, body = rbac.http("", "POST", f"{REVIEWS}/subjectaccessreviews", {"spec": {
        "resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert body["message"] == ('.authorization.k8s.io "" is invalid: spec.user: Invalid '
                               'value: "": at least one of user or group must be specified')
    status, body = rbac.http("alice", "POST", f"{REVIEWS}/selfsubjectrulesreviews",
                             {"spec": {}})
    assert (status, body["message"]) == (400, "no namespace on request")
    status, body = rbac.http("", "GET", f"{REVIEWS}/selfsubjectaccessreviews")
    assert (status, body["reason"]) == (405, "MethodNotAllowed")


def test_asking_about_others_needs_its_own_permission(rbac: RBACServer) -> None:
    status, body = rbac.http("alice", "POST", f"{REVIEWS}/subjectaccessreviews", {
        "spec": {"user": "bob", "resourceAttributes": {"verb": "get", "resource": "pods"}}})
    assert (status, body["message"]) == (403, (
        'subjectaccessreviews.authorization.k8s.io is forbidden: User "alice" cannot create '
        'resource "subjectaccessreviews" in API group "authorization.k8s.io" at the cluster '
        "scope"))
    status, body = rbac.http("alice", "POST", f"{REVIEWS}/selfsubjectaccessreviews", {
        "spec": {"nonResourceAttributes": {"verb": "get", "path": "/version"}}})
    assert (status, body["status"]["allowed"]) == (201, True)
    assert body["status"]["reason"].startswith('RBAC: allowed by ClusterRoleBinding "system:')
