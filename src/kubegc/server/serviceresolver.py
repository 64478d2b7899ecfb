"""Reaching a backend named by a Service reference, on this machine (cf.
k8s.io/apiserver/pkg/util/proxy ``ResolveEndpoint`` / ``ResolveCluster``, kube-aggregator's
``NewEndpointServiceResolver`` used with ``--enable-aggregator-routing``, and the admission
webhooks' ``ServiceResolver``).

There is no cluster network here: a Service is reached through its Endpoints, as
kube-apiserver does with aggregator routing on. A Service (usually without a selector)
plus an Endpoints object listing ``127.0.0.1`` and a port resolve to
``https://127.0.0.1:<port>``. One module, shared by the aggregation proxy (an APIService's
``spec.service``) and the admission webhooks (``clientConfig.service``).

``resolve_endpoint`` raises ``StatusError``: the lookup's NotFound, or 503
ServiceUnavailable with upstream's messages ("no service port 443 found for service
\\"x\\"", "no endpoints available for service \\"x\\""). ``tls_context`` builds the client
TLS context of a ``caBundle`` (or none verified, for ``insecureSkipTLSVerify``).
"""

from __future__ import annotations

import base64
import random
import ssl
from dataclasses import dataclass
from typing import Any, Protocol

from kubegc.api.errors import StatusError
from kubegc.api.types import Obj

#: the Service types ``ResolveEndpoint`` accepts (an empty type is defaulted ClusterIP)
_SUPPORTED_TYPES = ("ClusterIP", "LoadBalancer", "NodePort", "")


class CoreReader(Protocol):
    """What the resolver reads: core/v1 objects by resource (the registry's
    ``get_core``)."""

    async def get_core(self, resource: str, namespace: str, name: str) -> Obj: ...


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A resolved backend: ``https://host:port``."""

    host: str
    port: int

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}:{self.port}"


def service_unavailable(message: str) -> StatusError:
    """apimachinery's ``NewServiceUnavailable``: 503 ServiceUnavailable."""
    return StatusError(503, "ServiceUnavailable", message)


def find_service_port(service: Obj, port: int) -> dict[str, Any]:
    """``findServicePort``: the Service's port numbered ``port``, else 503."""
    for service_port in (service.get("spec") or {}).get("ports") or []:
        if isinstance(service_port, dict) and service_port.get("port") == port:
            return service_port
    name = (service.get("metadata") or {}).get("name") or ""
    raise service_unavailable(f'no service port {port} found for service "{name}"')


def endpoint_of(service: Obj, endpoints: Obj, port: int) -> Endpoint:
    """``ResolveEndpoint`` once both objects are read: a random address of a subset that
    has the Service port's name, else 503."""
    name = str((service.get("metadata") or {}).get("name") or "")
    service_type = str((service.get("spec") or {}).get("type") or "")
    if service_type not in _SUPPORTED_TYPES:
        raise service_unavailable(f'unsupported service type "{service_type}"')
    port_name = str(find_service_port(service, port).get("name") or "")
    subsets = [s for s in endpoints.get("subsets") or [] if isinstance(s, dict)]
    if not subsets:
        raise service_unavailable(f'no endpoints available for service "{name}"')
    start = random.randrange(len(subsets))
    for i in range(len(subsets)):
        subset = subsets[(start + i) % len(subsets)]
        addresses = [a for a in subset.get("addresses") or [] if isinstance(a, dict)]
        if not addresses:
            continue
        for endpoint_port in subset.get("ports") or []:
            if (isinstance(endpoint_port, dict)
                    and str(endpoint_port.get("name") or "") == port_name
                    and isinstance(endpoint_port.get("port"), int)):
                address = random.choice(addresses)
                return Endpoint(str(address.get("ip") or ""), int(endpoint_port["port"]))
    raise service_unavailable(f'no endpoints available for service "{name}"')


async def resolve_endpoint(reader: CoreReader, namespace: str, name: str, port: int
                           ) -> Endpoint:
    """``ResolveEndpoint(services, endpoints, namespace, name, port)``."""
    service = await reader.get_core("services", namespace, name)
    endpoints = await reader.get_core("endpoints", namespace, name)
    return endpoint_of(service, endpoints, port)


class WebhookServiceResolver:
    """The admission webhooks' ``ServiceResolver`` (``registry/admission/webhook/client.py``)
    over ``resolve_endpoint``; the server hands it to the registry's webhook client."""

    def __init__(self, reader: CoreReader) -> None:
        self.reader = reader

    async def resolve_endpoint(self, namespace: str, name: str, port: int) -> str:
        return (await resolve_endpoint(self.reader, namespace, name, port)).url


def tls_context(ca_bundle: str | None, *, insecure_skip_verify: bool = False
                ) -> ssl.SSLContext:
    """The client TLS context of a backend: verified against ``ca_bundle`` (base64 PEM, as
    in the object) without checking the host name (the backend is reached by IP, the
    certificate names the Service's DNS name), or not verified at all
    (``insecureSkipTLSVerify``). No ``caBundle``: the system roots."""
    if insecure_skip_verify:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if not ca_bundle:
        context = ssl.create_default_context()
        context.check_hostname = False
        return context
    try:
        pem = base64.b64decode(ca_bundle, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        pem = ca_bundle  # already PEM
    context = ssl.create_default_context(cadata=pem)
    context.check_hostname = False
    return context
