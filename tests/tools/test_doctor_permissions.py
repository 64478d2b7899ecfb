"""The doctor's permission question, the parts that need no cluster: the user ``--as``
names (as the impersonation filter completes it), the rule it prints, and how a
kube-apiserver's flags say whether OwnerReferencesPermissionEnforcement runs."""

from __future__ import annotations

import pytest

from kubegc.api.auth import Attributes, UserInfo
from kubegc.tools.doctor.access import _plugin_in_flags
from kubegc.tools.doctor.permissions import Rule, impersonated_user

PLUGIN = "OwnerReferencesPermissionEnforcement"


@pytest.mark.parametrize(("name", "groups", "expected"), [
    ("alice", (), ("system:authenticated",)),
    ("alice", ("dev",), ("dev", "system:authenticated")),
    ("alice", ("system:unauthenticated",), ("system:unauthenticated",)),
    ("system:anonymous", (), ("system:unauthenticated",)),
    ("system:serviceaccount:lab:op", (), ("system:serviceaccounts",
                                          "system:serviceaccounts:lab",
                                          "system:authenticated")),
    ("system:serviceaccount:lab:op", ("g",), ("g", "system:authenticated")),  # as upstream's
])
def test_impersonated_user(name: str, groups: tuple[str, ...],
                           expected: tuple[str, ...]) -> None:
    assert impersonated_user(name, groups) == UserInfo(name, groups=expected)


def test_rules_are_yaml_to_paste() -> None:
    site = Rule.granting(Attributes(user=UserInfo("u"), verb="update", namespace="lab",
                                    api_group="own.labhub.io", resource="sites",
                                    subresource="finalizers", name="blog"))
    assert site.yaml() == ("- apiGroups: [own.labhub.io]\n  resources: [sites/finalizers]\n"
                           "  verbs: [update]")
    assert "Role in namespace lab" in site.where()
    node = Rule.granting(Attributes(user=UserInfo("u"), verb="update", resource="nodes",
                                    subresource="finalizers", name="n1"))
    assert node.yaml().startswith('- apiGroups: [""]\n') and "ClusterRole" in node.where()


@pytest.mark.parametrize(("args", "on"), [
    (["kube-apiserver", f"--enable-admission-plugins=NodeRestriction,{PLUGIN}"], True),
    (["kube-apiserver", "--enable-admission-plugins", f"{PLUGIN}"], True),
    (["kube-apiserver", "--enable-admission-plugins=NodeRestriction"], False),
    (["kube-apiserver"], False),
    (["kube-apiserver", f"--enable-admission-plugins={PLUGIN}",
      f"--disable-admission-plugins={PLUGIN}"], False),
    (["kube-apiserver", f"--admission-control=NamespaceLifecycle,{PLUGIN}"], True),
    (["kube-apiserver", f"--enable-admission-plugins={PLUGIN}",
      "--admission-control=NamespaceLifecycle"], False),
])
def test_kube_apiserver_flags(args: list[str], on: bool) -> None:
    assert _plugin_in_flags(args) is on
