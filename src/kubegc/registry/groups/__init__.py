"""Strategies of the built-in resources beyond the core workloads, one module per API
group (cf. ``pkg/registry/<group>/<resource>/strategy.go`` and
``pkg/apis/<group>/{v1/defaults.go,validation}``).

Each module exports ``STRATEGIES`` — ``(group, resource)`` → the keyword arguments of
``registry.strategy.Strategy`` (validators, ``prepare_for_create``, generation tracking) —
and ``DEFAULTERS``; ``registry.strategy`` builds its strategies from them. Validators check
what upstream's validation checks for the fields a client relies on (required fields,
enumerations, immutable fields), with upstream's messages; their module docstrings say
what no controller does with the objects (most are stored only).
May import: ``kubegc.api``, ``kubegc.registry.defaults``.
"""

from __future__ import annotations

from typing import Any

from kubegc.registry.defaults import Defaulter
from kubegc.registry.groups import (
    admissionregistration,
    autoscaling,
    certificates,
    core,
    flowcontrol,
    networking,
    policy,
    rbac,
    scheduling,
    storage,
)

_MODULES = (admissionregistration, autoscaling, certificates, core, flowcontrol, networking,
            policy, rbac, scheduling, storage)

STRATEGY_OPTIONS: dict[tuple[str, str], dict[str, Any]] = {
    key: options for module in _MODULES for key, options in module.STRATEGIES.items()}
DEFAULTERS: dict[tuple[str, str], Defaulter] = {
    key: defaulter for module in _MODULES
    for key, defaulter in getattr(module, "DEFAULTERS", {}).items()}

__all__ = ["DEFAULTERS", "STRATEGY_OPTIONS"]
