"""Calling one webhook (cf. k8s.io/apiserver/pkg/util/webhook ``ClientManager`` and
``ErrCallingWebhook``; webhook/generic ``GetRESTClient``): an HTTPS POST of the review
to ``clientConfig.url``, or to the endpoint of ``clientConfig.service`` (resolved by the
server's service resolver, verified as ``<service>.<namespace>.svc``), trusting
``caBundle`` (or the system's roots without one), within the webhook's
``timeoutSeconds`` (sent as ``?timeout=<n>s``).

What fails is said as Go's HTTP client says it (``Post "<url>": ...``), since that text
is what kube-apiserver's ``failed calling webhook "x": failed to call webhook: ...`` quotes.
Tests may register an in-process handler for a URL (``in_process``): it gets the review
as a dict and answers one, with no network in between.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import ssl
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import aiohttp
import orjson

from kubegc.api.errors import StatusError
from kubegc.registry.admission.webhook.accessors import Webhook

#: an in-process webhook: the AdmissionReview in, the AdmissionReview answered out
InProcessWebhook = Callable[[dict[str, Any]], Awaitable[dict[str, Any]] | dict[str, Any]]


class CallingWebhookError(Exception):
    """``ErrCallingWebhook``: the webhook could not be asked (or answered nonsense);
    ``failurePolicy`` decides whether the request fails."""

    def __init__(self, webhook: str, reason: str, *, code: int = 400) -> None:
        super().__init__(f'failed calling webhook "{webhook}": {reason}')
        self.webhook = webhook
        self.reason = reason
        self.code = code


class ServiceResolver(Protocol):
    """How a ``clientConfig.service`` is reached (``webhook.ServiceResolver``; the server's
    ``serviceresolver`` implements it)."""

    async def resolve_endpoint(self, namespace: str, name: str, port: int) -> str:
        """``https://host:port`` of an endpoint (raises the ``StatusError`` that says why
        there is none)."""
        ...


def _service(config: dict[str, Any]) -> dict[str, Any]:
    service = config.get("service")
    return service if isinstance(service, dict) else {}


def _port(service: dict[str, Any]) -> int:
    port = service.get("port")
    return port if isinstance(port, int) and not isinstance(port, bool) else 443


def _timeout_param(seconds: float) -> str:
    return f"{max(int(-(-seconds // 1)), 1)}s"


class WebhookClient:
    """Ownership: one per registry; the session is made on first use, on the loop, and
    closed by ``close``. SSL contexts are kept per caBundle."""

    def __init__(self) -> None:
        self.resolver: ServiceResolver | None = None
        #: URL → handler, registered by tests (``kubegc.testing``)
        self.in_process: dict[str, InProcessWebhook] = {}
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _ssl(self, hook: Webhook) -> ssl.SSLContext:
        bundle = str(hook.client_config.get("caBundle") or "")
        ctx = self._contexts.get(bundle)
        if ctx is None:
            try:
                pem = base64.b64decode(bundle).decode() if bundle else None
                ctx = ssl.create_default_context(cadata=pem) if pem else (
                    ssl.create_default_context())
            except (binascii.Error, UnicodeDecodeError, ssl.SSLError, ValueError) as e:
                raise CallingWebhookError(
                    hook.name, f"could not get REST client: unable to load root "
                    f"certificates: {e}") from None
            self._contexts[bundle] = ctx
        return ctx

    def _target(self, hook: Webhook) -> tuple[str, str | None]:
        """The URL as upstream's client names it (a service by its DNS name), and the
        name the certificate must carry (None: the URL's own host)."""
        config = hook.client_config
        if config.get("url"):
            return str(config["url"]), None
        service = _service(config)
        server_name = f"{service.get('name') or ''}.{service.get('namespace') or ''}.svc"
        return f"https://{server_name}:{_port(service)}{service.get('path') or ''}", server_name

    async def _dial(self, hook: Webhook, shown: str) -> str:
        """The URL to connect to: ``clientConfig.url``, or the service's endpoint (the dial
        of upstream's client, which resolves the service's host name)."""
        config = hook.client_config
        if config.get("url"):
            return str(config["url"])
        service = _service(config)
        if self.resolver is None:
            raise CallingWebhookError(hook.name, "could not get REST client: no service "
                                      "resolver")
        try:
            base = await self.resolver.resolve_endpoint(
                str(service.get("namespace") or ""), str(service.get("name") or ""),
                _port(service))
        except StatusError as e:
            raise CallingWebhookError(
                hook.name, f'failed to call webhook: Post "{shown}": {e.message}') from None
        return base + str(service.get("path") or "")

    async def call(self, hook: Webhook, review: dict[str, Any]) -> Any:
        """The webhook's answer, decoded (raises ``CallingWebhookError``)."""
        url, server_name = self._target(hook)
        handler = self.in_process.get(url)
        if handler is not None:
            return await self._call_in_process(hook, handler, review)
        timeout = hook.timeout_seconds
        query = f"timeout={_timeout_param(timeout)}"
        full = f"{url}?{query}"
        dial = f"{await self._dial(hook, full)}?{query}"
        if self._session is None:
            self._session = aiohttp.ClientSession()
        try:
            async with self._session.post(
                    dial, data=orjson.dumps(review), ssl=self._ssl(hook),
                    server_hostname=server_name,
                    headers={"Content-Type": "application/json", "Accept": "application/json"},
                    timeout=aiohttp.ClientTimeout(total=timeout)) as resp:
                body = await resp.read()
                if resp.status >= 300:
                    raise CallingWebhookError(hook.name, (
                        f"failed to call webhook: the server responded with the status code "
                        f"{resp.status} but did not return more information"),
                        code=resp.status)
        except TimeoutError:
            raise CallingWebhookError(
                hook.name, f'failed to call webhook: Post "{full}": context deadline exceeded'
            ) from None
        except aiohttp.ClientConnectorCertificateError as e:
            raise CallingWebhookError(hook.name, (
                f'failed to call webhook: Post "{full}": tls: failed to verify certificate: '
                f"{e.certificate_error}")) from None
        except aiohttp.ClientError as e:
            raise CallingWebhookError(
                hook.name, f'failed to call webhook: Post "{full}": {_dial_error(e)}') from None
        except ValueError as e:  # a URL aiohttp cannot even parse
            raise CallingWebhookError(
                hook.name, f'failed to call webhook: parse "{full}": {e}') from None
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError as e:
            raise CallingWebhookError(hook.name, f"failed to call webhook: {e}") from None

    async def _call_in_process(self, hook: Webhook, handler: InProcessWebhook,
                               review: dict[str, Any]) -> Any:
        try:
            answer = handler(orjson.loads(orjson.dumps(review)))
            if asyncio.iscoroutine(answer) or isinstance(answer, Awaitable):
                return await asyncio.wait_for(answer, hook.timeout_seconds)
            return answer
        except TimeoutError:
            raise CallingWebhookError(
                hook.name, "failed to call webhook: context deadline exceeded") from None
        except Exception as e:  # a test's handler raising: the webhook failed
            raise CallingWebhookError(
                hook.name, f"failed to call webhook: {type(e).__name__}: {e}") from None


def _dial_error(e: aiohttp.ClientError) -> str:
    if isinstance(e, aiohttp.ClientConnectorError):
        host, port = e.host, e.port
        cause = e.os_error
        if isinstance(cause, ConnectionRefusedError):
            return f"dial tcp {host}:{port}: connect: connection refused"
        return f"dial tcp {host}:{port}: {cause.strerror or cause}"
    return str(e) or type(e).__name__


__all__ = ["CallingWebhookError", "InProcessWebhook", "ServiceResolver", "WebhookClient"]
