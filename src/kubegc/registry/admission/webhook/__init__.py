"""Admission webhooks, as kube-apiserver calls them (cf.
k8s.io/apiserver/pkg/admission/plugin/webhook): the ``MutatingAdmissionWebhook`` and
``ValidatingAdmissionWebhook`` plugins.

- ``accessors``: the stored configurations' webhooks, kept by the registry;
- ``matching``: which webhooks a request calls (rules, scope, matchPolicy, selectors);
- ``review``: the ``admission.k8s.io/v1`` AdmissionReview sent, the answer verified;
- ``client``: the HTTPS call (``url`` or ``service``, caBundle, timeoutSeconds), or an
  in-process handler a test registered;
- ``dispatcher``: validating in parallel, mutating in order with reinvocation,
  failurePolicy, sideEffects on dry-run, warnings, upstream's messages.

``Admission`` (the package above) calls ``Webhooks.admit`` after the built-in mutating
plugins and ``Webhooks.validate`` after the built-in validating ones, on CREATE, UPDATE
(patch and apply included) and DELETE (the object being deleted as ``oldObject``, with the
DeleteOptions), as upstream's handlers and ``Store.Delete``'s ``deleteValidation`` do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubegc.registry.admission.webhook.accessors import (
    GROUP,
    MUTATING,
    VALIDATING,
    Webhook,
    WebhookConfigurations,
)
from kubegc.registry.admission.webhook.client import (
    CallingWebhookError,
    InProcessWebhook,
    ServiceResolver,
    WebhookClient,
)
from kubegc.registry.admission.webhook.dispatcher import Dispatcher
from kubegc.registry.admission.webhook.matching import NamespaceGetter
from kubegc.registry.generic.attributes import Attributes


@dataclass
class Webhooks:
    """The configurations, the client that calls them and the dispatchers.

    Ownership: the registry feeds ``configurations`` and sets ``get_namespace``; the
    composition root sets ``client.resolver``."""

    configurations: WebhookConfigurations = field(default_factory=WebhookConfigurations)
    client: WebhookClient = field(default_factory=WebhookClient)
    get_namespace: NamespaceGetter | None = None

    def _dispatcher(self) -> Dispatcher:
        return Dispatcher(self.client, self.get_namespace)

    async def admit(self, a: Attributes) -> None:
        hooks = self.configurations.mutating
        if hooks:
            await self._dispatcher().admit(hooks, a)

    async def validate(self, a: Attributes) -> None:
        hooks = self.configurations.validating
        if hooks:
            await self._dispatcher().validate(hooks, a)


__all__ = ["GROUP", "MUTATING", "VALIDATING", "Attributes", "CallingWebhookError",
           "InProcessWebhook", "ServiceResolver", "Webhook", "WebhookClient",
           "WebhookConfigurations", "Webhooks"]
