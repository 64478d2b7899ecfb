"""The simulated kubelets (cf. pkg/kubelet), a component of its own beside the controllers:
``kubelet`` (pod workers: start, run, terminate, final DELETE), ``kubelet_pods`` (a pod's
simulated processes and status), ``termination`` (the termination timeline and the
per-pod ``kubegc.io/*`` knobs), ``nodes`` (node registration, status and leases).

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component`` — not
``kubegc.controllers`` nor ``kubegc.scheduler``.
"""

from kubegc.kubelet.kubelet import Kubelet

__all__ = ["Kubelet"]
