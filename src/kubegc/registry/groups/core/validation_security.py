"""Security contexts (``pkg/apis/core/validation``): the pod's
(``validatePodSpecSecurityContext``: user and group IDs, ``fsGroupChangePolicy``, the
seccomp profile, ``shareProcessNamespace`` with ``hostPID``; its sysctls are
``validation_pods``') and each container's (``ValidateSecurityContext``: user and group IDs,
``procMount``, the seccomp profile, ``allowPrivilegeEscalation: false`` with ``privileged``
or ``CAP_SYS_ADMIN``).

Not checked: ``privileged`` against the cluster's ``--allow-privileged`` (kubegc allows it),
Windows options, AppArmor profiles, ``seLinuxChangePolicy`` and ``supplementalGroupsPolicy``.
"""

from __future__ import annotations

from typing import Any

from kubegc.registry.groups.core.validation_podspec import validate_local_descending_path
from kubegc.registry.validation.common import (
    Causes,
    in_range,
    invalid,
    mapping,
    not_supported,
    required,
)

#: ``IsValidUserID`` / ``IsValidGroupID``: 0 to ``math.MaxInt32``
MAX_ID = 2 ** 31 - 1
FS_GROUP_CHANGE_POLICIES = ("Always", "OnRootMismatch")
PROC_MOUNTS = ("Default", "Unmasked")
SECCOMP_TYPES = ("Localhost", "RuntimeDefault", "Unconfined")


def _ids(context: dict[str, Any], keys: tuple[str, ...], path: str) -> Causes:
    causes: Causes = []
    for key in keys:
        causes += in_range(context.get(key), f"{path}.{key}", 0, MAX_ID)
    return causes


def validate_pod_security_context(spec: dict[str, Any], path: str) -> Causes:
    """``validatePodSpecSecurityContext`` (``path`` is the pod's ``securityContext``; the
    internal type keeps ``shareProcessNamespace`` and ``hostPID`` there, so upstream reports
    them under it)."""
    context = mapping(spec, "securityContext")
    causes = _ids(context, ("fsGroup", "runAsUser", "runAsGroup"), path)
    groups = context.get("supplementalGroups")
    for i, gid in enumerate(groups if isinstance(groups, list) else []):
        causes += in_range(gid, f"{path}.supplementalGroups[{i}]", 0, MAX_ID)
    if spec.get("shareProcessNamespace") is True and spec.get("hostPID") is True:
        causes.append(invalid(f"{path}.shareProcessNamespace", True,
                              "ShareProcessNamespace and HostPID cannot both be enabled"))
    policy = context.get("fsGroupChangePolicy")
    if policy is not None and policy not in FS_GROUP_CHANGE_POLICIES:
        causes.append(not_supported(f"{path}.fsGroupChangePolicy", policy,
                                    FS_GROUP_CHANGE_POLICIES))
    return causes + _seccomp(context.get("seccompProfile"), f"{path}.seccompProfile")


def validate_container_security_context(context: Any, host_users: bool, path: str) -> Causes:
    """``ValidateSecurityContext``."""
    if not isinstance(context, dict):
        return []
    causes = _ids(context, ("runAsUser", "runAsGroup"), path)
    proc_mount = context.get("procMount")
    if proc_mount is not None:
        if proc_mount not in PROC_MOUNTS:  # ValidateProcMountType
            causes.append(not_supported(f"{path}.procMount", proc_mount, PROC_MOUNTS))
        if host_users and proc_mount == "Unmasked":
            causes.append(invalid(f"{path}.procMount", proc_mount,
                                  "`hostUsers` must be false to use `Unmasked`"))
    causes += _seccomp(context.get("seccompProfile"), f"{path}.seccompProfile")
    if context.get("allowPrivilegeEscalation") is False:
        if context.get("privileged") is True:
            causes.append(invalid(path, context, "cannot set `allowPrivilegeEscalation` to "
                                                 "false and `privileged` to true"))
        added = mapping(context, "capabilities").get("add")
        causes += [invalid(path, context, "cannot set `allowPrivilegeEscalation` to false and "
                                          "`capabilities.Add` CAP_SYS_ADMIN")
                   for cap in (added if isinstance(added, list) else []) if cap == "CAP_SYS_ADMIN"]
    return causes


def _seccomp(profile: Any, path: str) -> Causes:
    """``validateSeccompProfileField``: a type; a local descending path for ``Localhost``
    only."""
    if not isinstance(profile, dict):
        return []
    kind, local = profile.get("type") or "", profile.get("localhostProfile")
    if not kind:
        causes = [required(f"{path}.type", "type is required when seccompProfile is set")]
    elif kind not in SECCOMP_TYPES:
        causes = [not_supported(f"{path}.type", kind, SECCOMP_TYPES)]
    else:
        causes = []
    if kind == "Localhost":
        if local is None:
            return [*causes, required(f"{path}.localhostProfile",
                                      "must be set when seccomp type is Localhost")]
        return causes + validate_local_descending_path(str(local), f"{path}.localhostProfile")
    if local is not None:
        causes.append(invalid(f"{path}.localhostProfile", profile,
                              "can only be set when seccomp type is Localhost"))
    return causes
