"""Defaulting of the apps kinds (cf. ``pkg/apis/apps/v1/defaults.go``; pod templates as the
core API defaults them). Functions mutate the object in place and never overwrite a field
the user set."""

from __future__ import annotations

from kubegc.api.types import Obj
from kubegc.registry.groups.core.defaults import default_template, spec_of


def default_deployment(obj: Obj) -> None:
    spec = spec_of(obj)
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    strategy = spec.setdefault("strategy", {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            if isinstance(rolling, dict):
                rolling.setdefault("maxUnavailable", "25%")
                rolling.setdefault("maxSurge", "25%")
    default_template(spec)


def default_replicaset(obj: Obj) -> None:
    spec = spec_of(obj)
    spec.setdefault("replicas", 1)
    default_template(spec)


def default_statefulset(obj: Obj) -> None:
    spec = spec_of(obj)
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    spec.setdefault("persistentVolumeClaimRetentionPolicy",
                    {"whenDeleted": "Retain", "whenScaled": "Retain"})
    default_template(spec)


def default_daemonset(obj: Obj) -> None:
    spec = spec_of(obj)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("updateStrategy", {
        "type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0},
    })
    default_template(spec)
