"""EndpointSlice validation (``ValidateEndpointSlice``); the answers a server gives are in
``tests/invalid_corpus.py`` (``endpointslice-*``)."""

from __future__ import annotations

from typing import Any

from kubegc.registry.groups.discovery.validation import (
    validate_endpoint_slice,
    validate_endpoint_slice_update,
)


def _slice(kind: str, *addresses: str) -> dict[str, Any]:
    return {"addressType": kind, "endpoints": [{"addresses": list(addresses)}],
            "ports": [{"name": "", "port": 80, "protocol": "TCP"}]}


def test_addresses_are_read_as_their_type() -> None:
    assert validate_endpoint_slice(_slice("IPv4", "10.0.0.1", "::ffff:10.0.0.2")) == []
    assert validate_endpoint_slice(_slice("IPv6", "2001:db8::1")) == []
    assert validate_endpoint_slice(_slice("FQDN", "a.example.com.")) == []
    causes = validate_endpoint_slice(_slice("IPv4", "nope"))
    assert [c.message for c in causes] == [
        'Invalid value: "nope": must be a valid IPv4 address',
        'Invalid value: "nope": must be a valid IP address']


def test_loopback_is_allowed_as_in_endpoints() -> None:
    """The one difference from ``ValidateNonSpecialIP`` (README: a Service may route kubegc
    to a local process)."""
    assert validate_endpoint_slice(_slice("IPv4", "127.0.0.1")) == []


def test_unchanged_endpoints_are_not_validated_again() -> None:
    old = _slice("IPv4", "169.254.1.1")
    new = {**old, "ports": [{"name": "web", "port": 80, "protocol": "TCP"}]}
    assert validate_endpoint_slice_update(new, old) == []
    assert [c.field for c in validate_endpoint_slice_update(
        {**new, "addressType": "IPv6"}, old)] == ["addressType"]
    changed = {**new, "endpoints": [{"addresses": ["169.254.1.2"]}]}
    assert [c.field for c in validate_endpoint_slice_update(changed, old)] == [
        "endpoints[0].addresses[0]"]
