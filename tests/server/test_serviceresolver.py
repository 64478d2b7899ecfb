"""The Service → Endpoints resolution of backends (aggregated APIs, webhooks)."""

from __future__ import annotations

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.types import Obj
from kubegc.server.serviceresolver import Endpoint, endpoint_of, resolve_endpoint


def _service(port: int = 443, name: str = "https", type_: str = "") -> Obj:
    spec: Obj = {"ports": [{"name": name, "port": port, "protocol": "TCP"}]}
    if type_:
        spec["type"] = type_
    return {"metadata": {"name": "api", "namespace": "ns"}, "spec": spec}


def _endpoints(port: int = 8443, name: str = "https", ip: str = "127.0.0.1") -> Obj:
    return {"metadata": {"name": "api", "namespace": "ns"},
            "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": name, "port": port}]}]}


def test_resolves_to_the_endpoint_with_the_service_port_name() -> None:
    assert endpoint_of(_service(), _endpoints(), 443) == Endpoint("127.0.0.1", 8443)
    assert Endpoint("::1", 8443).url == "https://[::1]:8443"


@pytest.mark.parametrize(("service", "endpoints", "message"), [
    (_service(port=80), _endpoints(), 'no service port 443 found for service "api"'),
    (_service(), {"metadata": {"name": "api"}}, 'no endpoints available for service "api"'),
    (_service(), _endpoints(name="other"), 'no endpoints available for service "api"'),
    (_service(type_="ExternalName"), _endpoints(), 'unsupported service type "ExternalName"'),
], ids=["no-port", "no-subsets", "no-port-name", "external-name"])
def test_unresolvable_is_503(service: Obj, endpoints: Obj, message: str) -> None:
    with pytest.raises(StatusError) as caught:
        endpoint_of(service, endpoints, 443)
    assert (caught.value.code, caught.value.reason, str(caught.value.message)) == (
        503, "ServiceUnavailable", message)


async def test_resolve_endpoint_reads_the_service_then_its_endpoints() -> None:
    objects = {("services", "api"): _service(), ("endpoints", "api"): _endpoints()}

    class Reader:
        async def get_core(self, resource: str, namespace: str, name: str) -> Obj:
            assert namespace == "ns"
            return objects[(resource, name)]

    assert await resolve_endpoint(Reader(), "ns", "api", 443) == Endpoint("127.0.0.1", 8443)
