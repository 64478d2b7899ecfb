"""Resource names, environment variable names and scheduling keys as upstream's
``pkg/apis/core/validation`` words its refusals (messages only; the e2e tests see them
in Statuses)."""

from __future__ import annotations

import pytest

from kubegc.api.content import DNS1123_LABEL_MSG, DNS1123_SUBDOMAIN_MSG
from kubegc.registry.groups.core.validation_resources import (
    validate_container_resource_name,
    validate_env_names,
    validate_limit_range_resource_name,
    validate_quota_resource_name,
    validate_topology_key,
)

NOT_STANDARD = "must be a standard resource type or fully qualified"
NOT_FOR_CONTAINERS = "must be a standard resource for containers"


def _messages(causes: list[object]) -> list[str]:
    return [getattr(c, "message", "") for c in causes]


@pytest.mark.parametrize(("name", "expected"), [
    pytest.param("cpu", [], id="standard"),
    pytest.param("hugepages-2Mi", [], id="huge-pages"),
    pytest.param("nvidia.com/gpu", [], id="extended"),
    pytest.param("example.com/a", [], id="extended-other-domain"),
    pytest.param("kubernetes.io/x", [], id="native-with-domain"),
    pytest.param("pods", [NOT_FOR_CONTAINERS], id="standard-but-not-for-containers"),
    pytest.param("foo", [NOT_STANDARD, NOT_FOR_CONTAINERS], id="unknown-without-domain"),
    pytest.param("requests.example.com/a", ["doesn't follow extended resource name standard"],
                 id="requests-prefix"),
])
def test_container_resource_names(name: str, expected: list[str]) -> None:
    messages = _messages(validate_container_resource_name(name, "limits[x]"))
    assert [m.split(": ", 2)[-1] for m in messages] == expected


def test_a_resource_name_that_is_not_qualified_says_so_first() -> None:
    messages = _messages(validate_container_resource_name("a b", "limits[a b]"))
    assert messages[0].startswith('Invalid value: "a b": name part must consist of')
    assert messages[-1].endswith(NOT_FOR_CONTAINERS)


def test_quota_and_limit_range_names() -> None:
    assert validate_quota_resource_name("requests.storage", "hard[x]") == []
    assert _messages(validate_quota_resource_name("storage", "hard[x]"))[-1].endswith(
        "must be a standard resource for quota")
    assert validate_limit_range_resource_name("PersistentVolumeClaim", "storage", "max[x]") == []
    assert _messages(validate_limit_range_resource_name("Container", "storage", "max[x]"))[
        -1].endswith(NOT_FOR_CONTAINERS)


@pytest.mark.parametrize(("name", "fails"), [
    pytest.param("PATH", False, id="plain"),
    pytest.param("1-a.b c", False, id="relaxed-printable"),
    pytest.param("A=B", True, id="equals"),
    pytest.param("caf\u00e9", True, id="not-ascii"),
    pytest.param("a\tb", True, id="not-printable"),
])
def test_env_names_are_relaxed(name: str, fails: bool) -> None:
    assert bool(validate_env_names([{"name": name}], "env")) is fails


def test_env_name_is_required_and_topology_key_too() -> None:
    assert _messages(validate_env_names([{"value": "x"}], "env")) == ["Required value"]
    assert _messages(validate_topology_key("", "k")) == ["Required value: can not be empty"]
    assert validate_topology_key("kubernetes.io/hostname", "k") == []


def test_node_taints_and_quota_names() -> None:
    from kubegc.registry.groups.core.validation_node import validate_node
    from kubegc.registry.groups.core.validation_resources import validate_resource_quota

    # upstream's ValidateNode names the taints under metadata (fldPath.Child("taints"))
    node = {"spec": {"taints": [{"key": "k", "effect": "NoExecute"}, {"key": "a b"},
                                {"key": "k2", "effect": "Later"},
                                {"key": "k3", "value": "a b", "effect": "NoSchedule"},
                                {"key": "k", "effect": "NoExecute"}]}}
    assert [(c.field, c.message.split(":")[0]) for c in validate_node(node)] == [
        ("metadata.taints[1].key", "Invalid value"),
        ("metadata.taints[1].effect", "Required value"),
        ("metadata.taints[2].effect", "Unsupported value"),
        ("metadata.taints[3].value", "Invalid value"),
        ("metadata.taints[4]", "Duplicate value")]
    assert validate_node(node)[-1].message == (
        'Duplicate value: core.Taint{Key:"k", Value:"", Effect:"NoExecute", '
        "TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair")
    quota = {"spec": {"hard": {"pods": "1", "requests.example.com/gpu": "1", "count/jobs.batch":
                               "2", "storage": "1Gi"}}}
    assert [c.field for c in validate_resource_quota(quota)] == ["spec.hard[storage]"]


def test_node_status_quantities() -> None:
    """``ValidateNodeResources``: not negative, whole for integer resources; the path is
    ``status.capacity.<name>`` (children, not keys)."""
    from kubegc.registry.groups.core.validation_node import validate_node

    node = {"status": {"capacity": {"cpu": "-1", "pods": "1500m", "memory": "1Gi"},
                       "allocatable": {"example.com/gpu": "0.5"}}}
    assert [(c.field, c.message) for c in validate_node(node)] == [
        ("status.capacity.cpu", 'Invalid value: "-1": must be greater than or equal to 0'),
        ("status.capacity.pods", 'Invalid value: "1500m": must be an integer'),
        ("status.allocatable.example.com/gpu", 'Invalid value: "0.5": must be an integer')]


def test_endpoint_addresses() -> None:
    from kubegc.registry.groups.core.validation_node import validate_endpoints

    endpoints = {"subsets": [
        {"addresses": [{"ip": "10.0.0.1", "hostname": "A"}, {"ip": "127.0.0.1"},
                       {"ip": "nope"}, {"ip": "169.254.1.1", "nodeName": "N"}]},
        {"ports": [{"port": 80, "protocol": "TCP"}]}]}
    # loopback is allowed (a Service may send kubegc to a local webhook): no cause for [1]
    assert [(c.field, c.message.split('": ', 1)[-1])
            for c in validate_endpoints(endpoints)] == [
        ("subsets[0].addresses[0].hostname", DNS_LABEL_TAIL),
        ("subsets[0].addresses[2].ip", "must be a valid IP address, (e.g. 10.9.8.7 or "
                                       "2001:db8::ffff)"),
        ("subsets[0].addresses[2].ip", "must be a valid IP address"),
        ("subsets[0].addresses[3].nodeName", DNS_SUBDOMAIN_TAIL),
        ("subsets[0].addresses[3].ip", "may not be in the link-local range (169.254.0.0/16, "
                                       "fe80::/10)"),
        ("subsets[1]", "Required value: must specify `addresses` or `notReadyAddresses`")]


def test_resource_requirements() -> None:
    from kubegc.registry.groups.core.validation_resources import (
        validate_resource_requirements,
    )

    resources = {"limits": {"cpu": "1", "example.com/gpu": "2"},
                 "requests": {"cpu": "2", "example.com/gpu": "1", "example.com/fpga": "1",
                              "memory": "-1Gi"}}
    assert [(c.field, c.message) for c in validate_resource_requirements(resources, "r")] == [
        ("r.requests", 'Invalid value: "2": must be less than or equal to cpu limit of 1'),
        ("r.requests", 'Invalid value: "1": must be equal to example.com/gpu limit of 2'),
        ("r.limits", "Required value: Limit must be set for non overcommitable resources"),
        ("r.requests[memory]", 'Invalid value: "-1Gi": must be greater than or equal to 0')]


DNS_LABEL_TAIL = DNS1123_LABEL_MSG
DNS_SUBDOMAIN_TAIL = DNS1123_SUBDOMAIN_MSG


def test_affinity_terms() -> None:
    from kubegc.registry.groups.core.validation_affinity import validate_affinity

    affinity = {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": []}},
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 101, "podAffinityTerm": {"topologyKey": ""}}]}}
    fields = [c.field for c in validate_affinity(affinity, "spec.affinity")]
    assert fields[:3] == [
        "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms",
        "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
        "podAffinityTerm.topologyKey"]
    valid = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                "values": ["n1"]}]}]}}}
    assert validate_affinity(valid, "spec.affinity") == []


def test_node_update_keeps_pod_cidrs_and_provider_id() -> None:
    """``ValidateNodeUpdate``: set once (from "" to a value), then fixed."""
    from kubegc.registry.groups.core.validation_node import validate_node_update

    old = {"spec": {"podCIDRs": ["10.244.1.0/24"], "providerID": "kubegc://n1"}}
    assert validate_node_update(old, old) == []
    assert validate_node_update(old, {"spec": {}}) == []
    changed = {"spec": {"podCIDRs": ["10.244.2.0/24"], "providerID": "other://n1"}}
    assert [(c.field, c.message) for c in validate_node_update(changed, old)] == [
        ("spec.podCIDRs", 'Forbidden: node updates may not change podCIDR except from "" to '
                          "valid"),
        ("spec.providerID", 'Forbidden: node updates may not change providerID except from '
                            '"" to valid')]
