"""What a plan cannot say about admission webhooks: a plan never calls the cluster's
webhooks (it must not reach outside its simulation), so the DELETEs it simulates are all
allowed. When the cluster has webhooks whose rules take DELETEs of resources the plan
deletes, the report names them: if one refuses those DELETEs, or cannot be reached under
``failurePolicy: Fail``, the objects stay (and a namespace stays Terminating with
``NamespaceDeletionContentFailure``: ``kubegc doctor`` then names the webhook).

The match is on rules' operations, groups and resources only (selectors and scope are not
judged here), so a webhook named may in fact not be asked.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.types import Obj
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef

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


def webhook_notes(inv: Inventory, deleted: list[ObjRef]) -> list[str]:
    """One note naming the webhooks that may be asked about the plan's DELETEs (of
    ``deleted``: what it deletes, and what it sends a DELETE for that never goes)."""
    resources: set[tuple[str, str]] = set()
    for ref in deleted:
        group = ref.group
        res = inv.resource_for_kind(group, ref.kind)
        if res is not None:
            resources.add((group, res.resource))
    named = []
    for kind in KINDS:
        for config in inv.of_kind(GROUP, kind):
            name = str((config.get("metadata") or {}).get("name") or "")
            for hook in _hooks(config):
                taken = sorted(f"{r}.{g}" if g else r for g, r in resources
                               if any(_takes(rule, g, r) for rule in hook.get("rules") or []
                                      if isinstance(rule, dict)))
                if taken:
                    named.append(f'{kind}/{name} (webhook "{hook.get("name")}", failurePolicy '
                                 f'{hook.get("failurePolicy") or "Fail"}: '
                                 f'DELETE of {", ".join(taken)})')
    if not named:
        return []
    return ["admission webhooks are not called by a plan, which takes every DELETE as "
            "allowed; these webhooks take DELETEs of what it deletes: " + "; ".join(named)
            + ". If one refuses them, or cannot be reached under failurePolicy Fail, those "
            "objects stay (a namespace stays Terminating: kubegc doctor names the webhook)"]


__all__ = ["webhook_notes"]
