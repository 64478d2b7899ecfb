"""The admission plugins kubegc has, by upstream's names, and which of them run
(kube-apiserver's ``--enable-admission-plugins`` / ``--disable-admission-plugins`` over
its default set, ``options.DefaultOffAdmissionPlugins``).

The plugins are the modules beside this one; ``Admission`` (the package) runs them.
"""

from __future__ import annotations

from collections.abc import Iterable

NAMESPACE_LIFECYCLE = "NamespaceLifecycle"
DEFAULT_TOLERATION_SECONDS = "DefaultTolerationSeconds"
OWNER_REFERENCES_PERMISSION_ENFORCEMENT = "OwnerReferencesPermissionEnforcement"
STORAGE_OBJECT_IN_USE_PROTECTION = "StorageObjectInUseProtection"
MUTATING_ADMISSION_WEBHOOK = "MutatingAdmissionWebhook"
VALIDATING_ADMISSION_WEBHOOK = "ValidatingAdmissionWebhook"

#: name → on by default (as kube-apiserver's)
PLUGINS: dict[str, bool] = {
    NAMESPACE_LIFECYCLE: True,
    DEFAULT_TOLERATION_SECONDS: True,
    OWNER_REFERENCES_PERMISSION_ENFORCEMENT: False,
    STORAGE_OBJECT_IN_USE_PROTECTION: True,
    MUTATING_ADMISSION_WEBHOOK: True,
    VALIDATING_ADMISSION_WEBHOOK: True,
}

#: kube-apiserver's registered plugins (``options.AllOrderedPlugins``, 1.32) that kubegc does
#: not have: disabling one is accepted (kubegc never runs it), enabling one is refused
UPSTREAM_ONLY = frozenset({
    "AlwaysAdmit", "NamespaceAutoProvision", "NamespaceExists",
    "LimitPodHardAntiAffinityTopology", "LimitRanger", "ServiceAccount", "NodeRestriction",
    "TaintNodesByCondition", "AlwaysPullImages", "ImagePolicyWebhook", "PodSecurity",
    "PodNodeSelector", "Priority", "PodTolerationRestriction", "EventRateLimit",
    "ExtendedResourceToleration", "DefaultStorageClass", "PersistentVolumeClaimResize",
    "RuntimeClass", "CertificateApproval",
    "CertificateSigning", "ClusterTrustBundleAttest", "CertificateSubjectRestriction",
    "DefaultIngressClass", "DenyServiceExternalIPs", "MutatingAdmissionPolicy",
    "ValidatingAdmissionPolicy",
    "ResourceQuota", "AlwaysDeny",
})


def enabled_plugins(enable: Iterable[str] = (), disable: Iterable[str] = ()) -> frozenset[str]:
    """The plugins that run: the default ones and ``enable``, less ``disable``."""
    on = {name for name, default in PLUGINS.items() if default} | set(enable)
    return frozenset((on - set(disable)) & set(PLUGINS))


def overlapping(enable: Iterable[str], disable: Iterable[str]) -> str | None:
    """kube-apiserver's ``AdmissionOptions.Validate`` error for names in both flags."""
    both = sorted(set(enable) & set(disable))
    if not both:
        return None
    return (f"[{' '.join(both)}] in enable-admission-plugins and disable-admission-plugins "
            "overlapped")
