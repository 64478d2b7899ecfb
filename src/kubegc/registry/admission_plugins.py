"""The admission plugins kubegc has, by upstream's names, and which of them run
(kube-apiserver's ``--enable-admission-plugins`` / ``--disable-admission-plugins`` over
its default set, ``options.DefaultOffAdmissionPlugins``)."""

from __future__ import annotations

from collections.abc import Iterable

#: name → on by default (as kube-apiserver's)
PLUGINS: dict[str, bool] = {
    "NamespaceLifecycle": True,
    "DefaultTolerationSeconds": True,
    "OwnerReferencesPermissionEnforcement": False,
}


def enabled_plugins(enable: Iterable[str] = (), disable: Iterable[str] = ()) -> frozenset[str]:
    """The plugins that run: the default ones and ``enable``, less ``disable``."""
    on = {name for name, default in PLUGINS.items() if default} | set(enable)
    return frozenset(on - set(disable))
