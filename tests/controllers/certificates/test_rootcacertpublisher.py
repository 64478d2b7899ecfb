"""The root CA publisher against ``FakeClient`` (cf. upstream's publisher_test.go): the
ConfigMap it writes, what it repairs and keeps, and that it publishes an empty ``ca.crt``
when there is no CA (TLS off). tests/e2e/test_namespace_defaults.py drives it through
kubectl against a TLS ``kubegc serve``."""

from __future__ import annotations

import copy

from kubegc.client.fake import FakeClient
from kubegc.component.config import RootCACertPublisherConfiguration
from kubegc.controllers.certificates.rootcacertpublisher import (
    DESCRIPTION,
    DESCRIPTION_ANNOTATION,
    ROOT_CA_CERT_CONFIG_MAP_NAME,
    Publisher,
)
from kubegc.controllers.certificates.rootcacertpublisher.publisher import (
    CONFIGMAPS,
    NAMESPACES,
)

from ..workload_harness import eventually, quiet, running

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
OPTIONS = RootCACertPublisherConfiguration(root_ca=CA)


def namespace(name: str, phase: str = "Active") -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
            "status": {"phase": phase}}


def published(client: FakeClient, ns: str = "a") -> dict | None:
    return client.stored(CONFIGMAPS, ROOT_CA_CERT_CONFIG_MAP_NAME, namespace=ns)


async def test_every_namespace_gets_the_ca_with_upstreams_annotation() -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    async with running(Publisher, client, options=OPTIONS):
        await eventually(lambda: published(client) is not None)
        client.add_object(NAMESPACES, namespace("b"))
        await eventually(lambda: published(client, "b") is not None)
    config_map = published(client)
    assert config_map is not None
    assert config_map["data"] == {"ca.crt": CA}
    assert config_map["metadata"]["annotations"] == {DESCRIPTION_ANNOTATION: DESCRIPTION}


async def test_without_a_ca_ca_crt_is_empty() -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    async with running(Publisher, client):  # the default section: TLS off, no CA
        await eventually(lambda: published(client) is not None)
    config_map = published(client)
    assert config_map is not None and config_map["data"] == {"ca.crt": ""}


async def test_a_changed_config_map_is_repaired_keeping_what_is_not_its_own() -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    async with running(Publisher, client, options=OPTIONS) as controller:
        await eventually(lambda: published(client) is not None)
        changed = copy.deepcopy(published(client))
        assert changed is not None
        changed["data"] = {"ca.crt": "forged", "extra": "x"}
        changed["metadata"]["annotations"] = {"mine": "kept"}
        changed["metadata"]["labels"] = {"team": "a"}
        client.update_object(CONFIGMAPS, changed)
        await eventually(lambda: (published(client) or {}).get("data") == {"ca.crt": CA})
        await quiet(controller)
    config_map = published(client)
    assert config_map is not None
    assert config_map["metadata"]["annotations"] == {
        "mine": "kept", DESCRIPTION_ANNOTATION: DESCRIPTION}
    assert config_map["metadata"]["labels"] == {"team": "a"}


async def test_a_deleted_config_map_is_recreated_other_config_maps_left_alone() -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    client.add_object(CONFIGMAPS, {"metadata": {"name": "app", "namespace": "a"},
                                   "data": {"ca.crt": "mine"}})
    async with running(Publisher, client, options=OPTIONS) as controller:
        await eventually(lambda: published(client) is not None)
        client.remove_object(CONFIGMAPS, ROOT_CA_CERT_CONFIG_MAP_NAME, namespace="a")
        await eventually(lambda: published(client) is not None)
        await quiet(controller)
    app = client.stored(CONFIGMAPS, "app", namespace="a")
    assert app is not None and app["data"] == {"ca.crt": "mine"}


async def test_an_up_to_date_config_map_is_not_written() -> None:
    client = FakeClient()
    client.add_object(NAMESPACES, namespace("a"))
    client.add_object(CONFIGMAPS, {
        "metadata": {"name": ROOT_CA_CERT_CONFIG_MAP_NAME, "namespace": "a",
                     "annotations": {DESCRIPTION_ANNOTATION: "someone else's words"}},
        "data": {"ca.crt": CA}})
    async with running(Publisher, client, options=OPTIONS) as controller:
        await quiet(controller)
    assert [a for a in client.actions if not a.startswith(("list", "watch"))] == []
