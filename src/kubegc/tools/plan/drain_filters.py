"""Which pods ``kubectl drain`` evicts, skips or refuses to touch (cf. kubectl's
pkg/drain/filters.go ``makeFilters`` and ``GetPodsForDeletion``): a pure function of the
node's pods and the flags, used by ``kubegc plan drain``.

The filters run in upstream's order and stop at the first one that does not delete the pod
(``skipDeletedFilter`` is not built: kubectl's ``--skip-wait-for-delete-timeout`` is 0 by
default, which keeps it out):

* ``daemonSetFilter``: a running pod whose controller is a DaemonSet is an error without
  ``--ignore-daemonsets`` ("cannot delete DaemonSet-managed Pods ..."), else skipped with
  the warning "ignoring DaemonSet-managed Pods"; when that DaemonSet is gone, ``--force``
  deletes the pod with the GET's error as warning;
* ``mirrorPodFilter``: a mirror pod (annotation ``kubernetes.io/config.mirror``) is skipped;
* ``localStorageFilter``: a running pod with an ``emptyDir`` volume is an error without
  ``--delete-emptydir-data``;
* ``unreplicatedFilter``: a running pod with no controller is an error without ``--force``.
Errors are grouped by message as kubectl prints them ("cannot delete <message>: ns/a,
ns/b"); any error means that nothing is evicted (the node stays cordoned).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubegc.api.meta import name_of, namespace_of, owner_references_of
from kubegc.api.pod import pod_phase
from kubegc.api.types import Obj

DAEMON_SET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMON_SET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


@dataclass(frozen=True, slots=True)
class DrainOptions:
    """kubectl drain's flags that choose the pods (and ``--timeout``: 0 waits for ever)."""

    ignore_daemonsets: bool = False
    delete_emptydir_data: bool = False
    force: bool = False
    timeout: float = 0.0


@dataclass(frozen=True, slots=True)
class PodDeleteStatus:
    """``PodDeleteStatus``: whether the pod is evicted, and the reason (Okay, Skip,
    Warning, Error) with its message."""

    delete: bool
    reason: str = "Okay"
    message: str = ""


OKAY = PodDeleteStatus(True)
SKIP = PodDeleteStatus(False, "Skip")


@dataclass
class PodDeleteList:
    """The node's pods with their status (``PodDeleteList``)."""

    items: list[tuple[Obj, PodDeleteStatus]] = field(default_factory=list)

    def pods(self) -> list[Obj]:
        """The pods to evict."""
        return [pod for pod, status in self.items if status.delete]

    def skipped(self) -> list[tuple[Obj, PodDeleteStatus]]:
        return [(pod, status) for pod, status in self.items if not status.delete]

    def warnings(self) -> str:
        """``Warnings``: "message: ns/a, ns/b" per message, joined by "; "."""
        return "; ".join(f"{m}: {', '.join(p)}" for m, p in self._by_message("Warning").items())

    def errors(self) -> list[str]:
        """``errors``: "cannot delete message: ns/a, ns/b" per message."""
        return [f"cannot delete {m}: {', '.join(p)}"
                for m, p in self._by_message("Error").items()]

    def _by_message(self, reason: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for pod, status in self.items:
            if status.reason == reason:
                out.setdefault(status.message or "unexpected error", []).append(
                    f"{namespace_of(pod)}/{name_of(pod)}")
        return out


def aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one message as is, more in brackets."""
    return errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]"


def _controller_of(pod: Obj) -> dict[str, object] | None:
    return next((r for r in owner_references_of(pod) if r.get("controller")), None)


def _finished(pod: Obj) -> bool:
    return pod_phase(pod) in ("Succeeded", "Failed")


def has_local_storage(pod: Obj) -> bool:
    return any(isinstance(v, dict) and v.get("emptyDir") is not None
               for v in (pod.get("spec") or {}).get("volumes") or [])


def _daemon_set_filter(pod: Obj, opts: DrainOptions,
                       daemon_set_exists: Callable[[str, str], bool]) -> PodDeleteStatus:
    ref = _controller_of(pod)
    if ref is None or ref.get("kind") != "DaemonSet" or _finished(pod):
        return OKAY
    name = str(ref.get("name") or "")
    if not daemon_set_exists(namespace_of(pod), name):
        message = f'daemonsets.apps "{name}" not found'
        return (PodDeleteStatus(True, "Warning", message) if opts.force
                else PodDeleteStatus(False, "Error", message))
    if not opts.ignore_daemonsets:
        return PodDeleteStatus(False, "Error", DAEMON_SET_FATAL)
    return PodDeleteStatus(False, "Warning", DAEMON_SET_WARNING)


def _mirror_pod_filter(pod: Obj) -> PodDeleteStatus:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return SKIP if MIRROR_POD_ANNOTATION in annotations else OKAY


def _local_storage_filter(pod: Obj, opts: DrainOptions) -> PodDeleteStatus:
    if not has_local_storage(pod) or _finished(pod):
        return OKAY
    if not opts.delete_emptydir_data:
        return PodDeleteStatus(False, "Error", LOCAL_STORAGE_FATAL)
    return PodDeleteStatus(True, "Warning", LOCAL_STORAGE_WARNING)


def _unreplicated_filter(pod: Obj, opts: DrainOptions) -> PodDeleteStatus:
    if _finished(pod) or _controller_of(pod) is not None:
        return OKAY
    if opts.force:
        return PodDeleteStatus(True, "Warning", UNMANAGED_WARNING)
    return PodDeleteStatus(False, "Error", UNMANAGED_FATAL)


def pods_for_deletion(pods: list[Obj], opts: DrainOptions,
                      daemon_set_exists: Callable[[str, str], bool]) -> PodDeleteList:
    """``GetPodsForDeletion`` over the node's ``pods``; ``daemon_set_exists(namespace,
    name)`` stands for the filter's GET of the DaemonSet."""
    filters: list[Callable[[Obj], PodDeleteStatus]] = [
        lambda p: _daemon_set_filter(p, opts, daemon_set_exists), _mirror_pod_filter,
        lambda p: _local_storage_filter(p, opts), lambda p: _unreplicated_filter(p, opts)]
    out = PodDeleteList()
    for pod in pods:
        status = OKAY
        for f in filters:
            status = f(pod)
            if not status.delete:
                break  # "short-circuit as soon as pod is filtered out"
        out.items.append((pod, status))
    return out
