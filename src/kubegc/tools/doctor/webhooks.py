"""Admission webhooks that hold a namespace's deletion: the namespace controller's
``NamespaceDeletionContentFailure`` condition quotes each refused DELETE
(``admission webhook "x" denied the request: ...``) or each webhook it could not reach
(``failed calling webhook "x": ...``, under ``failurePolicy: Fail``), and the namespace
stays ``Terminating`` until the webhook lets the DELETEs through (cf.
pkg/controller/namespace/deletion ``deleteAllContentForGroupVersionResource`` and
apiserver's webhook ``ToStatusErr`` / ``ErrCallingWebhook``).

The cause names the webhook and the configuration it is part of, read from the cluster;
the fix is on the webhook (allow the DELETE, exclude the namespace, bring back its backend),
or, for a webhook nobody serves any more, deleting its configuration: webhook
configurations are never themselves sent to a webhook, so that is always possible.
"""

from __future__ import annotations

import re

from kubegc.api.types import Obj
from kubegc.tools.doctor.context import Context
from kubegc.tools.doctor.findings import Cause, CauseDetail
from kubegc.tools.model import ObjRef

CONTENT_FAILURE = "NamespaceDeletionContentFailure"
GROUP = "admissionregistration.k8s.io"
KINDS = (("ValidatingWebhookConfiguration", "validatingwebhookconfiguration"),
         ("MutatingWebhookConfiguration", "mutatingwebhookconfiguration"))
_DENIED = re.compile(r'admission webhook "([^"]+)" denied the request')
_FAILED = re.compile(r'failed calling webhook "([^"]+)"')


def _content_failure(ns: Obj) -> str:
    for cond in (ns.get("status") or {}).get("conditions") or []:
        if cond.get("type") == CONTENT_FAILURE and cond.get("status") == "True":
            return str(cond.get("message") or "")
    return ""


def _configurations(ctx: Context, webhook: str) -> list[tuple[Obj, dict[str, object], str]]:
    """(configuration, the webhook in it, kubectl's resource name) of every configuration
    holding a webhook of that name."""
    out = []
    for kind, resource in KINDS:
        for config in ctx.inv.of_kind(GROUP, kind):
            for hook in config.get("webhooks") or []:
                if isinstance(hook, dict) and hook.get("name") == webhook:
                    out.append((config, hook, resource))
    return out


def _backend(hook: dict[str, object]) -> str:
    client = hook.get("clientConfig")
    if not isinstance(client, dict):
        return "its backend"
    service = client.get("service")
    if isinstance(service, dict):
        return (f"its backend (Service {service.get('namespace')}/{service.get('name')} "
                f"port {service.get('port') or 443})")
    return f"its backend ({client.get('url')})"


def webhook_causes(ctx: Context, ns: Obj) -> dict[Cause, CauseDetail]:
    """The webhooks the namespace's content-failure condition names, each a cause."""
    message = _content_failure(ns)
    name = str((ns.get("metadata") or {}).get("name") or "")
    out: dict[Cause, CauseDetail] = {}
    refused = dict.fromkeys(_DENIED.findall(message), True)
    refused.update(dict.fromkeys(_FAILED.findall(message), False))
    for webhook, denied in refused.items():
        found = _configurations(ctx, webhook)
        what = (f'admission webhook "{webhook}" refuses the DELETEs of the namespace\'s content'
                if denied else f'admission webhook "{webhook}" cannot be called '
                "(failurePolicy: Fail), so the DELETEs of the namespace's content fail")
        if not found:
            out[Cause(what)] = CauseDetail(
                [f"namespace {name} stays Terminating while the webhook refuses"],
                ["find its Validating/MutatingWebhookConfiguration (`kubectl get "
                 "validatingwebhookconfigurations,mutatingwebhookconfigurations`) and make "
                 "the webhook allow the DELETE, or delete that configuration"])
            continue
        for config, hook, resource in found:
            config_name = str((config.get("metadata") or {}).get("name") or "")
            fix = ([f"make the webhook allow DELETE in namespace {name}, or keep the namespace "
                    "out of its namespaceSelector / its rules"] if denied else
                   [f"bring back {_backend(hook)}, or set failurePolicy: Ignore on the "
                    "webhook"])
            out[Cause(what, ObjRef.of(config))] = CauseDetail(
                [f"the namespace controller retries; namespace {name} is deleted once the "
                 "webhook lets the DELETEs through"], fix, dead=not denied,
                commands=[f"kubectl delete {resource} {config_name}"],
                by_hand="if nothing serves the webhook any more, delete its configuration "
                "(its checks then stop for every client and everything it covered)")
    return out


__all__ = ["webhook_causes"]
