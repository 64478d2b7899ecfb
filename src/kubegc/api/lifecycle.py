"""Which built-in group/version/resources are served at each emulated Kubernetes version:
the one table (cf. the ``+k8s:prerelease-lifecycle-gen:introduced``/``removed`` tags on
upstream's API types, their generated ``APILifecycleIntroduced``/``APILifecycleRemoved``,
and the apiserver's ``resourceExpirationEvaluator.shouldServe``, which since 1.32 judges
them against the *emulation* version, KEP-4330).

A resource version kubegc serves is served at an emulated version ``v`` unless it was
introduced after ``v`` or removed at or before ``v`` (``shouldServe``: ``introduced >
current`` is not served; ``ShouldServeForVersion``: ``removed <= current`` is not). What
is absent from ``API_LIFECYCLE`` is served at every version from
``EMULATION_VERSION_FLOOR`` on. The registry installs only what this table serves
(``Registry(version=...)``), so the routes (404 otherwise), discovery (legacy and
aggregated), OpenAPI v2 and v3, the Local APIServices and every client's resource list
follow it. docs/versions.md lists what changes.
"""

from __future__ import annotations

from dataclasses import dataclass

from kubegc.api.resources import ResourceInfo
from kubegc.api.version import MajorMinor


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """An API type's ``introduced`` and ``removed`` versions (None: before the emulation
    floor, or never)."""

    introduced: MajorMinor | None = None
    removed: MajorMinor | None = None

    def serves(self, emulation: MajorMinor) -> bool:
        """``resourceExpirationEvaluator.shouldServe`` at ``emulation``."""
        if self.introduced is not None and emulation < self.introduced:
            return False
        return self.removed is None or emulation < self.removed


#: (group, version, resource) -> its lifecycle, for the built-in resource versions kubegc
#: serves whose serving depends on the version (the rest are served at 1.30 and later).
API_LIFECYCLE: dict[tuple[str, str, str], Lifecycle] = {
    # KEP-3488: ValidatingAdmissionPolicy GA in 1.30 (served by default from the floor on)
    ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies"):
        Lifecycle(introduced=MajorMinor(1, 30)),
    ("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings"):
        Lifecycle(introduced=MajorMinor(1, 30)),
    # KEP-1880 (MultiCIDRServiceAllocator) GA in 1.33: networking.k8s.io/v1 types.go tags
    # IPAddress and ServiceCIDR ``introduced=1.33`` (v1beta1, 1.31-1.32, was off by
    # default; kubegc does not serve it)
    ("networking.k8s.io", "v1", "ipaddresses"): Lifecycle(introduced=MajorMinor(1, 33)),
    ("networking.k8s.io", "v1", "servicecidrs"): Lifecycle(introduced=MajorMinor(1, 33)),
    # flowcontrol v1beta3: in pkg/controlplane's legacyBetaEnabledByDefaultResources
    # ("deprecate in 1.29, remove in 1.32"), tagged ``removed=1.32``: served by default
    # beside v1 until then
    ("flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas"):
        Lifecycle(removed=MajorMinor(1, 32)),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", "prioritylevelconfigurations"):
        Lifecycle(removed=MajorMinor(1, 32)),
}


def serves(group: str, version: str, resource: str, emulation: MajorMinor) -> bool:
    """Whether ``group/version``'s ``resource`` is served at ``emulation``."""
    lifecycle = API_LIFECYCLE.get((group, version, resource))
    return lifecycle is None or lifecycle.serves(emulation)


def served_versions(info: ResourceInfo, emulation: MajorMinor) -> tuple[str, ...]:
    """The versions of built-in ``info`` served at ``emulation``, in its order (empty:
    the resource is not served at all)."""
    return tuple(v for v in info.versions if serves(info.group, v, info.resource, emulation))


__all__ = ["API_LIFECYCLE", "Lifecycle", "served_versions", "serves"]
