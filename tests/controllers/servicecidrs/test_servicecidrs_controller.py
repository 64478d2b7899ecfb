"""The service-cidr controller's decision (cf. servicecidrs_controller_test.go
``TestControllerSync``/``canDeleteCIDR`` cases): which IPAddresses keep a ServiceCIDR being
deleted. The whole controller runs against ``kubegc serve`` in
tests/e2e/test_served_apis.py."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.controllers.servicecidrs import blocking_ip_addresses, can_delete_cidr

ALLOCATOR = {"ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}


def cidr(name: str, *cidrs: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"cidrs": list(cidrs)}}


def ip(address: str, family: str = "IPv4", managed: bool = True) -> dict[str, Any]:
    labels = {"ipaddress.kubernetes.io/ip-family": family, **(ALLOCATOR if managed else {})}
    return {"metadata": {"name": address, "labels": labels}}


@pytest.mark.parametrize("others,ips,blocked", [
    pytest.param([], [], [], id="no-ip-addresses"),
    pytest.param([], [ip("10.0.0.5")], ["10.0.0.5"], id="an-allocated-ip-blocks"),
    pytest.param([], [ip("10.1.0.5")], [], id="an-ip-outside-the-range"),
    pytest.param([], [ip("10.0.0.5", managed=False)], [], id="not-the-allocators-ip"),
    pytest.param([cidr("parent", "10.0.0.0/16")], [ip("10.0.0.5")], [],
                 id="a-parent-contains-it"),
    pytest.param([cidr("same", "10.0.0.0/24")], [ip("10.0.0.5")], [], id="an-equal-one"),
    pytest.param([cidr("half", "10.0.0.0/25")], [ip("10.0.0.5"), ip("10.0.0.200")],
                 ["10.0.0.200"], id="a-smaller-one-keeps-part-of-the-range"),
    pytest.param([], [ip("2001:db8::5", "IPv6")], [], id="other-family"),
])
def test_blocking_ip_addresses(others: list[dict[str, Any]], ips: list[dict[str, Any]],
                               blocked: list[str]) -> None:
    deleting = cidr("deleting", "10.0.0.0/24")
    got = blocking_ip_addresses(deleting, [deleting, *others], ips)
    assert [i["metadata"]["name"] for i in got] == blocked
    assert can_delete_cidr(deleting, [deleting, *others], ips) is not blocked


def test_dual_stack_needs_a_parent_for_each_family() -> None:
    deleting = cidr("deleting", "10.0.0.0/24", "2001:db8::/64")
    v4_parent = cidr("v4", "10.0.0.0/8")
    ips = [ip("2001:db8::5", "IPv6")]
    assert [i["metadata"]["name"] for i in blocking_ip_addresses(
        deleting, [deleting, v4_parent], ips)] == ["2001:db8::5"]
