"""The admission webhooks whose rules take DELETEs of a resource, read from a cluster's
Validating/MutatingWebhookConfigurations: the plan names them (it calls no webhook, so it
takes every DELETE as allowed) and the doctor names them where the garbage collector is
to delete an object (a refused DELETE is retried for ever, as upstream's workqueue does).

The match is on rules' operations, groups and resources only (selectors and scope are not
judged here), so a webhook named may in fact not be asked.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubegc.api.types import Obj
from kubegc.tools.inventory import Inventory

GROUP = "admissionregistration.k8s.io"
KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")


def _takes(rule: dict[str, Any], group: str, resource: str) -> bool:
    ops = rule.get("operations") or []
    groups = rule.get("apiGroups") or []
    resources = [str(r).split("/", 1)[0] for r in rule.get("resources") or []
                 if "/" not in str(r) or str(r).endswith("/*")]
    return (("*" in ops or "DELETE" in ops) and ("*" in groups or group in groups)
            and ("*" in resources or resource in resources))


def _hooks(config: Obj) -> list[dict[str, Any]]:
    return [h for h in config.get("webhooks") or [] if isinstance(h, dict)]


def delete_webhooks(inv: Inventory, resources: Iterable[tuple[str, str]]) -> list[str]:
    """Each webhook whose rules take DELETEs of some of ``resources`` ((group, resource)):
    ``ValidatingWebhookConfiguration/c (webhook "w", failurePolicy Fail: DELETE of
    configmaps)``."""
    wanted = sorted(set(resources))
    named = []
    for kind in KINDS:
        for config in inv.of_kind(GROUP, kind):
            name = str((config.get("metadata") or {}).get("name") or "")
            for hook in _hooks(config):
                taken = sorted(f"{r}.{g}" if g else r for g, r in wanted
                               if any(_takes(rule, g, r) for rule in hook.get("rules") or []
                                      if isinstance(rule, dict)))
                if taken:
                    named.append(f'{kind}/{name} (webhook "{hook.get("name")}", failurePolicy '
                                 f'{hook.get("failurePolicy") or "Fail"}: '
                                 f'DELETE of {", ".join(taken)})')
    return named


__all__ = ["delete_webhooks"]
