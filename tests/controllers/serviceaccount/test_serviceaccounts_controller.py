"""The service account controller against ``FakeClient`` (cf. upstream's
serviceaccounts_controller_test.go): which accounts it creates in which namespaces, and
what it leaves alone. tests/e2e/test_namespace_defaults.py drives it through kubectl."""

from __future__ import annotations

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusCause, StatusError
from kubegc.client.fake import FakeClient
from kubegc.component.config import ServiceAccountControllerConfiguration
from kubegc.controllers.serviceaccount import SERVICEACCOUNTS, ServiceAccountsController
from kubegc.controllers.serviceaccount.serviceaccounts_controller import NAMESPACES

from ..workload_harness import eventually, quiet, running


def namespace(name: str, phase: str = "Active") -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
            "status": {"phase": phase}}


def accounts(client: FakeClient) -> list[str]:
    return sorted(f"{o['metadata']['namespace']}/{o['metadata']['name']}"
                  for o in client.objects(SERVICEACCOUNTS))


async def test_active_namespaces_get_default_and_terminating_ones_nothing() -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    client.add_object(NAMESPACES, namespace("going", phase="Terminating"))
    async with running(ServiceAccountsController, client) as controller:
        await eventually(lambda: accounts(client) == ["a/default"])
        client.add_object(NAMESPACES, namespace("b"))
        await eventually(lambda: accounts(client) == ["a/default", "b/default"])
        await quiet(controller)
    assert accounts(client) == ["a/default", "b/default"]


async def test_a_deleted_account_is_recreated_an_existing_one_left_alone() -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    client.add_object(SERVICEACCOUNTS, {"metadata": {"name": "default", "namespace": "a",
                                                     "labels": {"mine": "yes"}}})
    async with running(ServiceAccountsController, client) as controller:
        await quiet(controller)
        assert not [a for a in client.actions if a.startswith("create")]
        client.remove_object(SERVICEACCOUNTS, "default", namespace="a")
        await eventually(lambda: accounts(client) == ["a/default"])
    recreated = client.stored(SERVICEACCOUNTS, "default", namespace="a")
    assert recreated is not None and "labels" not in recreated["metadata"]


async def test_the_configured_accounts_are_ensured() -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    options = ServiceAccountControllerConfiguration(service_accounts=["default", "builder"])
    async with running(ServiceAccountsController, client, options=options):
        await eventually(lambda: accounts(client) == ["a/builder", "a/default"])


def refusal(reason: str) -> StatusError:
    """The error a create gets: another writer was first, the namespace is terminating (the
    namespace lifecycle admission's cause), or something else went wrong."""
    if reason == "AlreadyExists":
        return StatusError(409, reason, 'serviceaccounts "default" already exists')
    if reason == "NamespaceTerminating":
        return StatusError(403, "Forbidden", "unable to create new content", causes=[
            StatusCause("NamespaceTerminating", "namespace a is being terminated")])
    return StatusError(500, "InternalError", "boom")


@pytest.mark.parametrize(("reason", "retried"), [
    pytest.param("AlreadyExists", False, id="another-writer-was-first"),
    pytest.param("NamespaceTerminating", False, id="namespace-terminating"),
    pytest.param("InternalError", True, id="other-errors-are-retried"),
])
async def test_create_errors(reason: str, retried: bool) -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    client.fail_next("create", refusal(reason), gvr=SERVICEACCOUNTS)
    clock = ManualClock()
    async with running(ServiceAccountsController, client, clock) as controller:
        await quiet(controller)
        clock.advance(60)  # past any rate-limited retry
        await quiet(controller)
    creates = [a for a in client.actions if a.startswith("create")]
    assert len(creates) == (2 if retried else 1), creates
