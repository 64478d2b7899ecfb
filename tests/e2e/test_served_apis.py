"""The served APIs follow ``kubegc serve --emulated-version`` (kubegc.api.lifecycle; issue 22),
with the real kubectl and the official Python client.

At 1.33 (kubegc's default) ``networking.k8s.io/v1`` serves ServiceCIDRs and IPAddresses
(KEP-1880 GA), with the default ServiceCIDR ``kubernetes`` the API server creates from its
Service range, and the service-cidr controller's finalizer: a ServiceCIDR deleted while an
allocator-owned IPAddress of its range exists stays, ``Ready=False`` reason ``Terminating``,
until the IPAddress goes (then 10 s, upstream's grace period), and the doctor names the
remover. At 1.32 and 1.30 neither resource is served: discovery, OpenAPI and the REST
routes (404) say so. ``flowcontrol.apiserver.k8s.io/v1beta3`` (removed in 1.32) is served
beside ``v1`` at 1.30 only. OpenAPI's ``info.version`` is the emulated version.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually, start_server, stop_server

VERSIONS = ("1.30", "1.32", "1.33")
NETWORKING = "/apis/networking.k8s.io/v1"
FINALIZER = "networking.k8s.io/service-cidr-finalizer"
ALLOCATED = {"ipaddress.kubernetes.io/ip-family": "IPv4",
             "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io"}


@pytest.fixture(scope="module", params=VERSIONS)
def emulated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[tuple[str, Server]]:
    server = start_server(tmp_path_factory.mktemp("served"), "--emulated-version",
                          request.param)
    yield request.param, server
    stop_server(server)


def _served(version: str) -> bool:
    return version == "1.33"


def test_api_resources(emulated: tuple[str, Server]) -> None:
    version, server = emulated
    out = server.kubectl("api-resources", "--api-group=networking.k8s.io", "-o", "name").stdout
    names = set(out.split())
    assert {"ingresses.networking.k8s.io", "networkpolicies.networking.k8s.io"} <= names
    assert ("servicecidrs.networking.k8s.io" in names) is _served(version), out
    assert ("ipaddresses.networking.k8s.io" in names) is _served(version), out


def test_not_yet_served_is_404(emulated: tuple[str, Server]) -> None:
    version, server = emulated
    status, body = server.http("GET", f"{NETWORKING}/servicecidrs")
    assert status == (200 if _served(version) else 404), body
    got = server.kubectl("get", "servicecidrs", check=False)
    if _served(version):
        assert got.returncode == 0 and "10.96.0.0/16" in got.stdout, got.stderr
    else:
        assert got.returncode != 0
        assert 'the server doesn\'t have a resource type "servicecidrs"' in got.stderr


def _json(server: Server, path: str, accept: str = "application/json") -> Any:
    status, body = server.http("GET", path, headers={"Accept": accept})
    assert status == 200, body
    return json.loads(body)


def test_discovery_and_openapi(emulated: tuple[str, Server]) -> None:
    version, server = emulated
    legacy = _json(server, NETWORKING)
    assert ("servicecidrs" in {r["name"] for r in legacy["resources"]}) is _served(version)
    aggregated = _json(server, "/apis", "application/json;g=apidiscovery.k8s.io;v=v2;"
                                        "as=APIGroupDiscoveryList")
    (group,) = [g for g in aggregated["items"] if g["metadata"]["name"] == "networking.k8s.io"]
    resources = {r["resource"] for v in group["versions"] for r in v["resources"]}
    assert ("servicecidrs" in resources) is _served(version)
    document = _json(server, "/openapi/v3/apis/networking.k8s.io/v1")
    assert document["info"]["version"] == version  # completeOpenAPIV3: the emulation version
    assert (f"{NETWORKING}/servicecidrs" in document["paths"]) is _served(version)
    v2 = _json(server, "/openapi/v2")
    assert v2["info"]["version"] == version
    assert ("io.k8s.api.networking.v1.ServiceCIDR" in v2["definitions"]) is _served(version)
    apiservices = _json(server, "/apis/apiregistration.k8s.io/v1/apiservices")
    assert "v1.networking.k8s.io" in {a["metadata"]["name"] for a in apiservices["items"]}


def test_discovery_through_the_python_client(emulated: tuple[str, Server]) -> None:
    from kubernetes import client, config

    version, server = emulated
    configuration = client.Configuration()
    config.load_kube_config(config_file=str(server.kubeconfig),
                            client_configuration=configuration)
    with client.ApiClient(configuration) as api:
        resources = client.NetworkingV1Api(api).get_api_resources()
        names = {r.name for r in resources.resources}
        assert ("servicecidrs/status" in names) is _served(version), names
        if _served(version):
            cidr = client.NetworkingV1Api(api).read_service_cidr("kubernetes")
            assert cidr.spec.cidrs == ["10.96.0.0/16"]
            assert [(c.type, c.status) for c in cidr.status.conditions] == [("Ready", "True")]


def _manifest() -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
         "metadata": {"name": "extra"}, "spec": {"cidrs": ["10.100.0.0/24"]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
         "metadata": {"name": "10.100.0.5", "labels": ALLOCATED},
         "spec": {"parentRef": {"group": "", "resource": "services", "namespace": "default",
                                "name": "web"}}}]})


def _get(server: Server, *args: str) -> dict[str, Any] | None:
    got = server.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(got.stdout) if got.returncode == 0 else None


@pytest.mark.parametrize("emulated", ["1.33"], indirect=True)  # served from 1.33
def test_deleting_a_service_cidr_in_use(emulated: tuple[str, Server], tmp_path: Path) -> None:
    _, server = emulated
    server.kubectl("apply", "-f", "-", input=_manifest())
    eventually(lambda: FINALIZER in ((_get(server, "servicecidr", "extra") or {}).get(
        "metadata", {}).get("finalizers") or []), what="the controller's finalizer")
    planned = server.kubegc_json("plan", "delete", "servicecidr/extra")
    assert planned["verdict"]["completes"] is False, planned  # the IPAddress holds it
    server.kubectl("delete", "servicecidr", "extra", "--wait=false")

    def terminating() -> dict[str, Any] | None:
        obj = _get(server, "servicecidr", "extra")
        conditions = ((obj or {}).get("status") or {}).get("conditions") or []
        return obj if any(c["type"] == "Ready" and c["status"] == "False"
                          and c["reason"] == "Terminating" for c in conditions) else None

    held = eventually(terminating, what="Ready=False Terminating")
    assert held["metadata"]["finalizers"] == [FINALIZER]
    assert held["metadata"]["deletionTimestamp"]
    server.settle()
    assert _get(server, "servicecidr", "extra") is not None  # still held

    doctor = server.kubegc_json("doctor")
    (finding,) = [f for f in doctor["findings"] if f["object"]["kind"] == "ServiceCIDR"]
    said = json.dumps(finding)
    assert "the service-cidr controller (kube-controller-manager)" in said, finding
    assert "ipaddress/10.100.0.5" in said, finding

    server.kubectl("delete", "ipaddress", "10.100.0.5")
    eventually(lambda: _get(server, "servicecidr", "extra") is None, timeout=40,
               what="the ServiceCIDR gone once its IPAddress is (10 s grace period)")


@pytest.mark.parametrize("emulated", ["1.33"], indirect=True)  # served from 1.33
def test_service_cidr_validation(emulated: tuple[str, Server]) -> None:
    _, server = emulated
    bad = json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
                      "metadata": {"name": "bad"},
                      "spec": {"cidrs": ["10.0.0.1/24", "10.1.0.0/16"]}})
    got = server.kubectl("create", "-f", "-", input=bad, check=False)
    assert got.returncode != 0
    assert ('spec.cidrs[0]: Invalid value: "10.0.0.1/24": must be in canonical form '
            '("10.0.0.0/24")') in got.stderr, got.stderr
    ip = json.dumps({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
                     "metadata": {"name": "10.0.0.01"}, "spec": {}})
    got = server.kubectl("create", "-f", "-", input=ip, check=False)
    assert got.returncode != 0
    assert 'metadata.name: Invalid value: "10.0.0.01": ParseAddr("10.0.0.01")' in got.stderr
    assert "spec.parentRef: Required value" in got.stderr, got.stderr


def test_flowcontrol_v1beta3_until_1_32(emulated: tuple[str, Server]) -> None:
    version, server = emulated
    served = version < "1.32"
    group = _json(server, "/apis/flowcontrol.apiserver.k8s.io")
    assert [v["version"] for v in group["versions"]] == (["v1", "v1beta3"] if served
                                                          else ["v1"])
    assert group["preferredVersion"]["version"] == "v1"
    flow_schema = json.dumps({
        "apiVersion": "flowcontrol.apiserver.k8s.io/v1beta3", "kind": "FlowSchema",
        "metadata": {"name": "legacy"},
        "spec": {"priorityLevelConfiguration": {"name": "global-default"}}})
    got = server.kubectl("create", "-f", "-", input=flow_schema, check=False)
    assert (got.returncode == 0) is served, got.stderr
    status, _ = server.http("GET", "/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas")
    assert status == (200 if served else 404)
    if served:  # one object, both versions
        read = _json(server, "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas/legacy")
        assert read["apiVersion"] == "flowcontrol.apiserver.k8s.io/v1"
        assert read["spec"]["matchingPrecedence"] == 1000
