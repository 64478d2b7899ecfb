"""ServiceCIDR and IPAddress validation (cf. pkg/apis/networking/validation's
validation_test.go ``TestValidateServiceCIDR``, ``TestValidateServiceCIDRUpdate``,
``TestValidateIPAddress``), with upstream's messages."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.content import DNS1123_SUBDOMAIN_MSG
from kubegc.registry.groups.networking.servicecidr import (
    validate_ip_address,
    validate_ip_address_name,
    validate_ip_address_update,
    validate_service_cidr,
    validate_service_cidr_update,
)


def cidr(*cidrs: Any) -> dict[str, Any]:
    return {"metadata": {"name": "x"}, "spec": {"cidrs": list(cidrs)}}


def messages(causes: list[Any]) -> list[str]:
    return [f"{c.field}: {c.message}" for c in causes]


@pytest.mark.parametrize("cidrs,expected", [
    pytest.param(("10.0.0.0/24",), [], id="ipv4"),
    pytest.param(("10.0.0.0/24", "2001:db8::/64"), [], id="dual-stack"),
    pytest.param((), ["spec.cidrs: Required value: at least one CIDR required"], id="none"),
    pytest.param(("10.0.0.0/24", "2001:db8::/64", "10.1.0.0/24"),
                 ["spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string"
                  '{"10.0.0.0/24", "2001:db8::/64", "10.1.0.0/24"}}: may only hold up to 2 '
                  "values"], id="three"),
    pytest.param(("10.0.0.0/24", "10.1.0.0/24"),
                 ['spec.cidrs: Invalid value: networking.ServiceCIDRSpec{CIDRs:[]string'
                  '{"10.0.0.0/24", "10.1.0.0/24"}}: may specify no more than one IP for each '
                  "IP family, i.e 192.168.0.0/24 and 2001:db8::/64"], id="same-family"),
    pytest.param(("10.0.0.1/24",),
                 ['spec.cidrs[0]: Invalid value: "10.0.0.1/24": must be in canonical form '
                  '("10.0.0.0/24")'], id="not-canonical"),
    pytest.param(("bad",),
                 ['spec.cidrs[0]: Invalid value: "bad": must be a valid CIDR value, (e.g. '
                  "10.9.8.0/24 or 2001:db8::/64)"], id="not-a-cidr"),
])
def test_validate_service_cidr(cidrs: tuple[str, ...], expected: list[str]) -> None:
    assert messages(validate_service_cidr(cidr(*cidrs))) == expected


def test_the_cidrs_are_immutable_but_a_second_family_may_be_added() -> None:
    old = cidr("10.0.0.0/24")
    assert messages(validate_service_cidr_update(cidr("10.1.0.0/24"), old)) == [
        'spec.cidrs[0]: Invalid value: "10.1.0.0/24": field is immutable']
    assert validate_service_cidr_update(cidr("10.0.0.0/24", "2001:db8::/64"), old) == []
    assert messages(validate_service_cidr_update(cidr("10.0.0.0/24"), cidr(
        "10.0.0.0/24", "2001:db8::/64"))) == [
        'spec.cidrs: Invalid value: []string{"10.0.0.0/24"}: field is immutable']


@pytest.mark.parametrize("name,expected", [
    ("10.0.0.1", []), ("2001:db8::1", []),
    ("2001:db8:0::1", ["must be a canonical format IP address"]),
    ("10.0.0.01", ['ParseAddr("10.0.0.01"): unable to parse IP']),
    ("foo", ['ParseAddr("foo"): unable to parse IP']),
])
def test_ip_address_names(name: str, expected: list[str]) -> None:
    assert validate_ip_address_name(name) == expected


def test_ip_address_parent_ref() -> None:
    assert messages(validate_ip_address({"spec": {}})) == ["spec.parentRef: Required value"]
    assert messages(validate_ip_address({"spec": {"parentRef": {"group": "Bad_Group",
                                                                "name": "a/b"}}})) == [
        f'spec.parentRef.group: Invalid value: "Bad_Group": {DNS1123_SUBDOMAIN_MSG}',
        "spec.parentRef.resource: Required value",
        "spec.parentRef.name: Invalid value: \"a/b\": may not contain '/'"]
    ref = {"spec": {"parentRef": {"resource": "services", "name": "a"}}}
    moved = {"spec": {"parentRef": {"resource": "services", "name": "b"}}}
    assert messages(validate_ip_address_update(moved, ref)) == [
        'spec.parentRef: Invalid value: networking.ParentReference{Group:"", '
        'Resource:"services", Namespace:"", Name:"b"}: field is immutable']
