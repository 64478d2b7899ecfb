"""``ClusterRoleAggregationController`` (cf. pkg/controller/clusterroleaggregation/
clusterroleaggregation_controller.go).

Any change to any ClusterRole queues every ClusterRole that has an aggregation rule
(``enqueue``: a label added to one role can make it join any aggregation). ``sync`` gathers,
selector by selector and role by role in name order, the rules of the selected roles (not
the aggregated role's own), each rule once, and writes them as the role's rules when they
differ. The write is an update preconditioned on the resourceVersion read (upstream applies
them server-side, and updates when the server cannot apply); the controller's role holds
``escalate`` on clusterroles, so it may write rules it does not hold.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.labels import label_selector_from_dict
from kubegc.api.meta import name_of
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj, clone
from kubegc.authz.rules import PolicyRule, rules_of
from kubegc.client.cache import DeletedFinalStateUnknown, FuncHandler
from kubegc.component.base_controller import BaseController
from kubegc.component.context import ControllerContext

CLUSTERROLES = GroupVersionResource("rbac.authorization.k8s.io", "v1", "clusterroles")
#: upstream's start function runs five workers
WORKERS = 5


def _aggregation_selectors(role: Obj) -> list[Any] | None:
    rule = role.get("aggregationRule")
    if not isinstance(rule, dict):
        return None
    selectors = rule.get("clusterRoleSelectors")
    return [s for s in selectors if isinstance(s, dict)] if isinstance(selectors, list) else []


def aggregated_rules(role: Obj, cluster_roles: list[Obj]) -> list[PolicyRule]:
    """The rules ``role`` aggregates from ``cluster_roles`` (``syncClusterRole``)."""
    rules: list[PolicyRule] = []
    for selector_obj in _aggregation_selectors(role) or []:
        selector = label_selector_from_dict(selector_obj)
        selected = sorted((r for r in cluster_roles if selector.matches(
            (r.get("metadata") or {}).get("labels"))), key=name_of)
        for other in selected:
            if name_of(other) == name_of(role):
                continue
            rules.extend(r for r in rules_of(other) if r not in rules)
    return rules


class ClusterRoleAggregationController(BaseController):
    """Ownership: the queue holds names of aggregated ClusterRoles; the workers read the
    informer's copies and write only the roles they were handed."""

    name = "clusterrole-aggregation"
    component = "clusterrole-aggregation-controller"

    def __init__(self, ctx: ControllerContext[Any]) -> None:
        super().__init__(ctx, workers=WORKERS)
        self.cluster_roles = self.informer_factory.for_resource(CLUSTERROLES)
        self.synced_informers = [self.cluster_roles]
        self.primary_informer = self.cluster_roles

    def register_handlers(self) -> None:
        self.cluster_roles.add_event_handler(FuncHandler(
            add=lambda obj, _: self.enqueue_aggregated(),
            update=lambda old, new: self.enqueue_aggregated(),
            delete=self._deleted))

    def _deleted(self, obj: Obj | DeletedFinalStateUnknown) -> None:
        self.enqueue_aggregated()

    def enqueue_aggregated(self) -> None:
        """``enqueue``: every ClusterRole with an aggregation rule."""
        for role in self.cluster_roles.indexer.list():
            if _aggregation_selectors(role) is not None:
                self.enqueue_key(name_of(role))

    async def sync(self, key: str) -> float | None:
        role = self.cluster_roles.indexer.get_by_key(key)
        if role is None or _aggregation_selectors(role) is None:
            return None
        rules = aggregated_rules(role, self.cluster_roles.indexer.list())
        if rules == list(rules_of(role)):
            return None
        updated = clone(role)
        updated["rules"] = [r.to_obj() for r in rules]
        await self.client.update(CLUSTERROLES, updated)
        return None
