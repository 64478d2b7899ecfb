"""The ``DefaultTolerationSeconds`` admission plugin
(plugin/pkg/admission/defaulttolerationseconds). As upstream's, it handles pods only
(``RESOURCE``: its ``Handles`` and the ``api.Resource("pods")`` test of its ``Admit``)."""

from __future__ import annotations

from kubegc.api.errors import GroupResource
from kubegc.api.types import Obj
from kubegc.registry.generic.target import Target

RESOURCE = GroupResource("", "pods")

#: The node controller's NoExecute taints a pod tolerates for ``DEFAULT_TOLERATION_SECONDS``
#: unless it says otherwise (kube-apiserver's ``--default-not-ready-toleration-seconds`` and
#: ``--default-unreachable-toleration-seconds``).
DEFAULT_TOLERATED_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")
DEFAULT_TOLERATION_SECONDS = 300


def admit_default_toleration_seconds(t: Target, obj: Obj) -> None:
    """Mutating admission (plugin/pkg/admission/defaulttolerationseconds ``Admit``, on
    create and update of a pod, not its subresources): a toleration of each taint of
    ``DEFAULT_TOLERATED_TAINTS`` the pod does not tolerate already — a toleration with that
    key or no key, for ``NoExecute`` or every effect."""
    if t.info.resource != RESOURCE.resource or t.info.group != RESOURCE.group:
        return
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    tolerations = spec.get("tolerations") or []
    if not isinstance(tolerations, list):
        return  # validation reports it
    given = [tol for tol in tolerations if isinstance(tol, dict)]
    for key in DEFAULT_TOLERATED_TAINTS:
        if not any(tol.get("key") in (key, "", None) and tol.get("effect") in
                   ("NoExecute", "", None) for tol in given):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})
    spec["tolerations"] = tolerations
