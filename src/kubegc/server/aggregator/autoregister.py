"""Local APIServices for the groups this server serves itself (cf. kube-apiserver's
``autoregister`` controller fed by ``apiServicesToRegister`` in
cmd/kube-apiserver/app/aggregator.go, and ``crdregistration_controller.go`` for the groups
of CRDs).

Every served group-version gets ``v<version>.<group>`` (``v1.`` for the core group) with no
``spec.service``: built-ins labelled ``kube-aggregator.kubernetes.io/automanaged: onstart``,
CRD groups ``"true"``; a CRD group's APIService goes when its last CRD does.
"""

from __future__ import annotations

from typing import Any

from kubegc.api.resources import Catalog
from kubegc.api.types import Obj

AUTOMANAGED_LABEL = "kube-aggregator.kubernetes.io/automanaged"
#: (groupPriorityMinimum, versionPriority) of the built-in group-versions
#: (``apiVersionPriorities`` in cmd/kube-apiserver/app/aggregator.go)
PRIORITIES: dict[tuple[str, str], tuple[int, int]] = {
    ("", "v1"): (18000, 1),
    ("apps", "v1"): (17800, 15),
    ("events.k8s.io", "v1"): (17750, 15),
    ("authentication.k8s.io", "v1"): (17700, 15),
    ("authorization.k8s.io", "v1"): (17600, 15),
    ("autoscaling", "v2"): (17500, 30),
    ("autoscaling", "v1"): (17500, 15),
    ("batch", "v1"): (17400, 15),
    ("certificates.k8s.io", "v1"): (17300, 15),
    ("networking.k8s.io", "v1"): (17200, 15),
    ("policy", "v1"): (17100, 15),
    ("rbac.authorization.k8s.io", "v1"): (17000, 15),
    ("storage.k8s.io", "v1"): (16800, 15),
    ("apiextensions.k8s.io", "v1"): (16700, 15),
    ("admissionregistration.k8s.io", "v1"): (16700, 15),
    ("scheduling.k8s.io", "v1"): (16600, 15),
    ("coordination.k8s.io", "v1"): (16500, 15),
    ("node.k8s.io", "v1"): (16300, 15),
    ("discovery.k8s.io", "v1"): (16200, 15),
    ("flowcontrol.apiserver.k8s.io", "v1"): (16100, 21),
    ("flowcontrol.apiserver.k8s.io", "v1beta3"): (16100, 18),
    ("apiregistration.k8s.io", "v1"): (16000, 15),
}
#: a group-version missing from the table (a CRD's: ``crdregistration``'s values)
CRD_PRIORITY = (1000, 100)


def api_service_name(group: str, version: str) -> str:
    return f"{version}.{group}"


def local_api_service(group: str, version: str, *, builtin: bool) -> Obj:
    """The Local APIService of ``group``/``version``."""
    minimum, priority = PRIORITIES.get((group, version), (16000, 15) if builtin
                                       else CRD_PRIORITY)
    spec: dict[str, Any] = {"group": group, "version": version,
                            "groupPriorityMinimum": minimum, "versionPriority": priority}
    return {
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": api_service_name(group, version),
                     "labels": {AUTOMANAGED_LABEL: "onstart" if builtin else "true"}},
        "spec": spec,
    }


def served_group_versions(catalog: Catalog) -> set[tuple[str, str]]:
    return {(group, version) for group, versions in catalog.groups() for version in versions}


def wanted(catalog: Catalog, crd_groups: set[str]) -> dict[str, Obj]:
    """The Local APIServices of what ``catalog`` serves, by name."""
    return {api_service_name(g, v): local_api_service(g, v, builtin=g not in crd_groups)
            for g, v in served_group_versions(catalog)}


def stale_automanaged(existing: list[Obj], want: dict[str, Obj]) -> list[str]:
    """Names of CRD-group APIServices (automanaged ``"true"``) no longer served."""
    out = []
    for obj in existing:
        meta = obj.get("metadata") or {}
        if ((meta.get("labels") or {}).get(AUTOMANAGED_LABEL) == "true"
                and not (obj.get("spec") or {}).get("service") and meta.get("name") not in want):
            out.append(str(meta.get("name")))
    return out
