"""Security contexts (``validation_security``); the answers a server gives are in
``tests/invalid_corpus.py``."""

from __future__ import annotations

from typing import Any

from kubegc.registry.groups.core.validation_security import (
    validate_container_security_context,
    validate_pod_security_context,
)


def _container(context: dict[str, Any], *, host_users: bool = True) -> list[tuple[str, str]]:
    return [(c.field, c.message)
            for c in validate_container_security_context(context, host_users, "sc")]


def test_valid_contexts_as_clients_write_them() -> None:
    pod = {"securityContext": {"runAsUser": 0, "runAsGroup": 2147483647, "fsGroup": 2000,
                               "supplementalGroups": [1000, 2000], "runAsNonRoot": True,
                               "fsGroupChangePolicy": "OnRootMismatch",
                               "seccompProfile": {"type": "RuntimeDefault"}},
           "shareProcessNamespace": True}
    assert validate_pod_security_context(pod, "spec.securityContext") == []
    assert _container({"privileged": True, "allowPrivilegeEscalation": True,
                       "capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]},
                       "readOnlyRootFilesystem": True, "procMount": "Default",
                       "seccompProfile": {"type": "Localhost",
                                          "localhostProfile": "profiles/a.json"}}) == []
    assert _container({"procMount": "Unmasked"}, host_users=False) == []


def test_ids_are_between_0_and_max_int32() -> None:
    pod = {"securityContext": {"runAsUser": -1, "supplementalGroups": [1, 2147483648]}}
    assert [(c.field, c.message) for c in validate_pod_security_context(pod, "s")] == [
        ("s.runAsUser", "Invalid value: -1: must be between 0 and 2147483647, inclusive"),
        ("s.supplementalGroups[1]",
         "Invalid value: 2147483648: must be between 0 and 2147483647, inclusive")]


def test_no_escalation_refuses_privileged_and_sys_admin() -> None:
    causes = _container({"allowPrivilegeEscalation": False, "privileged": True,
                         "capabilities": {"add": ["CAP_SYS_ADMIN"]}})
    assert [field for field, _ in causes] == ["sc", "sc"]
    assert causes[0][1].endswith(": cannot set `allowPrivilegeEscalation` to false and "
                                 "`privileged` to true")
    assert causes[1][1].endswith("`capabilities.Add` CAP_SYS_ADMIN")


def test_seccomp_profile_paths() -> None:
    assert _container({"seccompProfile": {"type": "Localhost",
                                          "localhostProfile": "/abs"}}) == [
        ("sc.seccompProfile.localhostProfile",
         'Invalid value: "/abs": must be a relative path')]
    causes = _container({"seccompProfile": {"type": "Unconfined", "localhostProfile": "a"}})
    assert [field for field, _ in causes] == ["sc.seccompProfile.localhostProfile"]
    assert causes[0][1].endswith(": can only be set when seccomp type is Localhost")
