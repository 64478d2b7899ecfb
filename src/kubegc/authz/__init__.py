"""Authorization rules that two floors share: RBAC's rule matching (``rules``, which the
registry's authorizer and the clusterrole-aggregation controller use) and
OwnerReferencesPermissionEnforcement's rule (``ownerreferences``, which the registry's
admission plugin enforces and ``kubegc doctor`` explains). Pure functions over
``kubegc.api.auth``'s vocabulary; nothing here does I/O.
May import: ``kubegc.api``.
"""
