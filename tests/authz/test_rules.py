"""Rule matching and coverage as upstream's evaluation_helpers_test.go and
policy_comparator_test.go have them: verbs, groups, resources with ``*``,
``resource/subresource`` and ``*/subresource``, resourceNames, non-resource URLs with a
trailing ``*``; ``Covers`` and the escalation message's compact form."""

from __future__ import annotations

import pytest

from kubegc.api.auth import Attributes, UserInfo
from kubegc.authz.rules import (
    PolicyRule,
    aggregate_error,
    compact_rules,
    compact_string,
    covers,
    rule,
    rule_allows,
)

BOB = UserInfo("bob")


def request(verb: str, resource: str, *, group: str = "", subresource: str = "",
            name: str = "", namespace: str = "ns") -> Attributes:
    return Attributes(user=BOB, verb=verb, api_group=group, resource=resource,
                      subresource=subresource, name=name, namespace=namespace)


def path(verb: str, url: str) -> Attributes:
    return Attributes(user=BOB, verb=verb, resource_request=False, path=url)


@pytest.mark.parametrize(("granted", "asked", "allowed"), [
    (rule("get", "", "pods"), request("get", "pods"), True),
    (rule("get", "", "pods"), request("list", "pods"), False),
    (rule("*", "", "pods"), request("deletecollection", "pods"), True),
    (rule("get", "", "pods"), request("get", "pods", group="apps"), False),
    (rule("get", "*", "pods"), request("get", "pods", group="example.com"), True),
    (rule("get", '"" apps', "deployments"), request("get", "deployments", group="apps"), True),
    (rule("get", "", "*"), request("get", "secrets"), True),
    # a subresource is its own resource...
    (rule("get", "", "pods"), request("get", "pods", subresource="log"), False),
    (rule("update", "", "pods/status"), request("update", "pods", subresource="status"), True),
    (rule("update", "", "pods/status"), request("update", "pods"), False),
    # ... granted by */subresource on any resource, and by * (which covers subresources)
    (rule("update", "*", "*/finalizers"),
     request("update", "sites", group="example.com", subresource="finalizers"), True),
    (rule("update", "*", "*/finalizers"), request("update", "sites", group="example.com"),
     False),
    (rule("update", "*", "*/finalizers"), request("update", "sites", subresource="status"),
     False),
    (rule("update", "", "*"), request("update", "pods", subresource="status"), True),
    # resourceNames: only those names, so never a list or a create (no name)
    (rule("get", "", "configmaps", names="a b"), request("get", "configmaps", name="b"), True),
    (rule("get", "", "configmaps", names="a"), request("get", "configmaps", name="c"), False),
    (rule("list", "", "configmaps", names="a"), request("list", "configmaps"), False),
    # a resource rule grants no path, a path rule no resource
    (rule("get", urls="/healthz"), request("get", "healthz"), False),
    (rule("get", "", "*"), path("get", "/healthz"), False),
    (rule("get", urls="/healthz"), path("get", "/healthz"), True),
    (rule("get", urls="/healthz"), path("get", "/healthz/etcd"), False),
    (rule("get", urls="/healthz*"), path("get", "/healthz/etcd"), True),
    (rule("get", urls="/apis/*"), path("get", "/apis"), False),
    (rule("get", urls="/apis/*"), path("get", "/apis/apps/v1"), True),
    (rule("get", urls="*"), path("get", "/debug/pprof"), True),
    (rule("post", urls="*"), path("get", "/debug/pprof"), False),
])
def test_rule_allows(granted: PolicyRule, asked: Attributes, allowed: bool) -> None:
    assert rule_allows(asked, granted) is allowed


def test_rules_round_trip_their_wire_form() -> None:
    obj = {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"],
           "resourceNames": ["p"]}
    assert PolicyRule.from_obj(obj).to_obj() == obj
    assert PolicyRule.from_obj({"verbs": ["get"], "nonResourceURLs": ["/x"]}).to_obj() == {
        "verbs": ["get"], "nonResourceURLs": ["/x"]}
    # what validation let through never breaks the authorizer
    assert PolicyRule.from_obj({"verbs": "get", "resources": [1, "pods"]}) == PolicyRule(
        resources=("pods",))
    assert PolicyRule.from_obj("junk") == PolicyRule()


@pytest.mark.parametrize(("owner", "servant", "missing"), [
    ([rule("*", "*", "*")], [rule("get delete", "apps", "deployments")], []),
    ([rule("get list", "", "pods")], [rule("get", "", "pods")], []),
    ([rule("get", "", "pods")], [rule("get delete", "", "pods")],
     [rule("delete", "", "pods")]),
    ([rule("get", "", "pods")], [rule("get", "", "pods/log")], [rule("get", "", "pods/log")]),
    ([rule("get", "", "*/log")], [rule("get", "", "pods/log")], []),
    ([rule("get", "", "pods", names="a")], [rule("get", "", "pods")],
     [rule("get", "", "pods")]),
    ([rule("get", "", "pods")], [rule("get", "", "pods", names="a")], []),
    ([rule("get", "", "pods", names="a b")], [rule("get", "", "pods", names="b")], []),
    ([rule("get", urls="/apis/*")], [rule("get", urls="/apis/apps")], []),
    ([rule("get", urls="/apis/*")], [rule("get", urls="/api")], [rule("get", urls="/api")]),
])
def test_covers_breaks_servant_rules_down(owner: list[PolicyRule], servant: list[PolicyRule],
                                          missing: list[PolicyRule]) -> None:
    ok, uncovered = covers(owner, servant)
    assert (ok, uncovered) == (not missing, missing)


def test_the_missing_rules_read_as_upstreams_escalation_message_writes_them() -> None:
    _, missing = covers([], [rule("get delete", '"" apps', "pods"),
                             rule("get", "", "configmaps", names="x"),
                             rule("get", urls="/metrics")])
    compacted = compact_rules(missing)
    assert sorted(compact_string(r) for r in compacted) == [
        '{APIGroups:[""], Resources:["configmaps"], ResourceNames:["x"], Verbs:["get"]}',
        '{APIGroups:[""], Resources:["pods"], Verbs:["get" "delete"]}',
        '{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "delete"]}',
        '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
    ]


def test_an_aggregate_of_errors_reads_as_utilerrors() -> None:
    assert aggregate_error(["a"]) == "a"
    assert aggregate_error(["a", "b"]) == "[a, b]"
    assert aggregate_error(["a", "a"]) == "a"
