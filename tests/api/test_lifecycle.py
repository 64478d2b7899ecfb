"""Which built-in resource versions each emulated version serves (cf. the apiserver's
``resourceExpirationEvaluator`` tests, deleted_kinds_test.go: introduced after the current
version is not served, removed at or before it is not)."""

from __future__ import annotations

import pytest

from kubegc.api.lifecycle import Lifecycle, served_versions, serves
from kubegc.api.resources import builtin
from kubegc.api.version import MajorMinor


@pytest.mark.parametrize("minor,served", [(30, False), (31, False), (32, False), (33, True)])
def test_service_cidrs_and_ip_addresses_from_1_33(minor: int, served: bool) -> None:
    for resource in ("servicecidrs", "ipaddresses"):
        assert serves("networking.k8s.io", "v1", resource, MajorMinor(1, minor)) is served
        assert served_versions(builtin("networking.k8s.io", resource),
                               MajorMinor(1, minor)) == (("v1",) if served else ())


def test_what_the_table_does_not_name_is_always_served() -> None:
    assert serves("apps", "v1", "deployments", MajorMinor(1, 30))
    assert served_versions(builtin("autoscaling", "horizontalpodautoscalers"),
                           MajorMinor(1, 30)) == ("v2", "v1")


@pytest.mark.parametrize("minor,served", [(29, False), (30, True), (31, True), (32, False)])
def test_introduced_and_removed(minor: int, served: bool) -> None:
    lifecycle = Lifecycle(introduced=MajorMinor(1, 30), removed=MajorMinor(1, 32))
    assert lifecycle.serves(MajorMinor(1, minor)) is served
