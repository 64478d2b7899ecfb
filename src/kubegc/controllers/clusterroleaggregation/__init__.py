"""The ClusterRole aggregation controller: the rules of every ClusterRole with an
``aggregationRule`` are those of the ClusterRoles its selectors select (cf.
pkg/controller/clusterroleaggregation).

May import: ``kubegc.api``, ``kubegc.client``, ``kubegc.component``.
"""

from kubegc.controllers.clusterroleaggregation.clusterroleaggregation_controller import (
    CLUSTERROLES,
    ClusterRoleAggregationController,
    aggregated_rules,
)

__all__ = ["CLUSTERROLES", "ClusterRoleAggregationController", "aggregated_rules"]
