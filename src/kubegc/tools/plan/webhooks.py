"""What a plan cannot say about admission webhooks: a plan never calls the cluster's
webhooks (it must not reach outside its simulation), so the DELETEs it simulates are all
allowed. When the cluster has webhooks whose rules take DELETEs of resources the plan
deletes, the report names them: if one refuses those DELETEs, or cannot be reached under
``failurePolicy: Fail``, the objects stay (and a namespace stays Terminating with
``NamespaceDeletionContentFailure``: ``kubegc doctor`` then names the webhook). The
matching is ``kubegc.tools.delete_webhooks``.
"""

from __future__ import annotations

from kubegc.tools.delete_webhooks import delete_webhooks
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef


def webhook_notes(inv: Inventory, deleted: list[ObjRef]) -> list[str]:
    """One note naming the webhooks that may be asked about the plan's DELETEs (of
    ``deleted``: what it deletes, and what it sends a DELETE for that never goes)."""
    resources: set[tuple[str, str]] = set()
    for ref in deleted:
        group = ref.group
        res = inv.resource_for_kind(group, ref.kind)
        if res is not None:
            resources.add((group, res.resource))
    named = delete_webhooks(inv, resources)
    if not named:
        return []
    return ["admission webhooks are not called by a plan, which takes every DELETE as "
            "allowed; these webhooks take DELETEs of what it deletes: " + "; ".join(named)
            + ". If one refuses them, or cannot be reached under failurePolicy Fail, those "
            "objects stay (a namespace stays Terminating: kubegc doctor names the webhook)"]


__all__ = ["webhook_notes"]
