"""Who removes a finalizer, and is it alive now? (the seed's third question)

``who_removes(finalizer, obj, inv, mapping)`` returns a ``Remover``: the component that
removes the finalizer, how we know, the condition under which it does, what removing it by
hand would skip, and the evidence that the component is alive now. A remover is named only
on evidence that names that very finalizer, never by similarity of names or domains (a
Lease called ``8f2a1c.backup.example.com`` says nothing about ``example.com/hold``):

* the user's mapping file (``--controllers-file``, ``ControllerMap``), first;
* the well-known upstream finalizers: ``orphan`` / ``foregroundDeletion`` — the garbage
  collector; ``kubernetes`` — the namespace controller; ``kubernetes.io/pv-protection`` /
  ``pvc-protection`` (said of the object: the pods using the claim, the claim of the
  volume, ``volumes``), ``batch.kubernetes.io/job-tracking``,
  ``networking.k8s.io/service-cidr-finalizer`` (said of the object: the IPAddresses that
  hold it, ``servicecidrs``) — other kube-controller-manager controllers (evidence: the
  ``kube-system/kube-controller-manager`` leader-election Lease, or, on kubegc, which
  serves ``kubegc.io``, the kubegc process itself);
  ``customresourcecleanup.apiextensions.k8s.io`` — the API server (alive: it answered);
* a controller that publishes the finalizers it removes: a Lease or Deployment annotated
  ``kubegc.io/removes-finalizers`` with a comma-separated list of finalizer names (or
  globs) — docs/tools.md documents this convention;
* else the remover is unknown, and the report says so.

Liveness is judged only from evidence: a Lease is fresh when ``renewTime +
leaseDurationSeconds`` is not past and it has a holder; a Deployment is alive when it has
ready replicas. No evidence means ``UNKNOWN``, never "alive".
"""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

from kubegc.api.clock import format_time
from kubegc.api.servicecidrs import SERVICE_CIDR_FINALIZER
from kubegc.api.types import Obj
from kubegc.api.volumes import PV_PROTECTION_FINALIZER, PVC_PROTECTION_FINALIZER
from kubegc.tools.inventory import Inventory
from kubegc.tools.model import ObjRef, age, human_duration, timestamp
from kubegc.tools.servicecidrs import service_cidr_when
from kubegc.tools.volumes import pv_protection_when, pvc_protection_when

CONTROLLER_MANAGER = "kube-controller-manager"


class Alive(enum.StrEnum):
    YES = "alive"
    NO = "not alive"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Evidence:
    source: str  # "Lease kube-system/kube-controller-manager", "Deployment ns/name", ...
    fact: str  # "renewed 3s ago, holder cm-1 (lease 15s)"
    alive: Alive

    def to_dict(self) -> dict[str, str]:
        return {"source": self.source, "fact": self.fact, "alive": self.alive.value}


@dataclass(frozen=True, slots=True)
class Remover:
    finalizer: str
    who: str  # "the garbage collector (kube-controller-manager)"
    found_by: str  # "built-in", "mapping file", "Lease name matches own.labhub.io", ...
    removes_when: str  # when the remover takes the finalizer off
    skips: str  # what removing the finalizer by hand skips
    evidence: tuple[Evidence, ...] = ()

    @property
    def alive(self) -> Alive:
        verdicts = {e.alive for e in self.evidence}
        if Alive.YES in verdicts:
            return Alive.YES
        return Alive.NO if Alive.NO in verdicts else Alive.UNKNOWN

    def alive_at(self, now: datetime | None, *, facts: bool = True) -> str:
        """What the reading shows of whether ``who`` runs, and never more: a state at the
        reading's time ``now``, with the evidence it rests on ("alive at T per Lease X:
        held by h, renewed at ..."); without evidence "unknown whether it is running".
        ``facts=False``: the sources only (a cause's title)."""
        at = f"at {format_time(now)}" if now is not None else "when read"
        state = self.alive
        sources = [e for e in self.evidence if e.alive is state]
        if facts:
            cited = "; ".join(f"{e.source}: {e.fact}" for e in sources)
        else:  # "the controller of Lease ns/x (alive at T per that Lease)"
            cited = "; ".join(f"that {e.source.split()[0]}" if e.source in self.who
                              else e.source for e in sources)
        if state is Alive.YES:
            return f"alive {at} per {cited}"
        if state is Alive.NO:
            return f"not running {at} per {cited}"
        return "unknown whether it is running" + (f" ({cited})" if cited and facts else "")

    def to_dict(self) -> dict[str, Any]:
        return {"finalizer": self.finalizer, "who": self.who, "foundBy": self.found_by,
                "removesWhen": self.removes_when, "skips": self.skips,
                "alive": self.alive.value, "evidence": [e.to_dict() for e in self.evidence]}


@dataclass(frozen=True, slots=True)
class ControllerEntry:
    finalizer: str  # exact name or glob
    controller: str
    leases: tuple[str, ...] = ()  # "namespace/name"
    deployments: tuple[str, ...] = ()
    cleanup: str = ""


@dataclass
class ControllerMap:
    """The user's mapping file (YAML)::

        finalizers:
          - finalizer: own.labhub.io/cleanup      # exact, or a glob: "*.labhub.io/*"
            controller: Site operator
            leases: [labhub-system/site-operator.own.labhub.io]
            deployments: [labhub-system/site-operator]
            cleanup: deletes the Site's outside state
    """

    entries: list[ControllerEntry] = field(default_factory=list)

    @classmethod
    def load(cls, path: str | Path) -> ControllerMap:
        """The file's entries; ``ValueError`` saying where it is not of the form above."""
        try:
            doc = yaml.safe_load(Path(path).read_text()) or {}
        except yaml.YAMLError as e:
            raise ValueError(f"not YAML: {' '.join(str(e).replace('^', '').split())}") from None
        listed = doc.get("finalizers") if isinstance(doc, dict) else None
        if not isinstance(doc, dict) or not isinstance(listed, list | None):
            raise ValueError("expected a map with a list under \"finalizers:\" (each entry "
                             "a map with finalizer, controller, leases, deployments, cleanup)")
        return cls([_entry(i, item) for i, item in enumerate(listed or [])])

    def lookup(self, finalizer: str) -> ControllerEntry | None:
        for entry in self.entries:
            if entry.finalizer == finalizer or fnmatch.fnmatchcase(finalizer, entry.finalizer):
                return entry
        return None


def _entry(i: int, item: object) -> ControllerEntry:
    """One entry of a controllers file (``ValueError`` naming the field that is wrong)."""
    where = f"finalizers[{i}]"
    if not isinstance(item, dict) or not isinstance(item.get("finalizer"), str):
        raise ValueError(f"{where}: expected a map with a \"finalizer:\" string")

    def names(key: str) -> tuple[str, ...]:
        value = item.get(key) or []
        if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
            raise ValueError(f"{where}.{key}: expected a list of NAMESPACE/NAME strings")
        return tuple(value)

    return ControllerEntry(finalizer=item["finalizer"], controller=str(
        item.get("controller") or ""), leases=names("leases"), deployments=names("deployments"),
        cleanup=str(item.get("cleanup") or ""))


_KCM_SKIPS = "the controller's own bookkeeping"
#: finalizer -> (who, removes_when, skips)
_BUILTIN: dict[str, tuple[str, str, str]] = {
    "foregroundDeletion": (
        "the garbage collector (kube-controller-manager)",
        "once no dependent with blockOwnerDeletion=true is left",
        "the ordered deletion of its dependents: they become orphans or are collected later"),
    "orphan": (
        "the garbage collector (kube-controller-manager)",
        "once it has removed this owner's reference from every dependent",
        "orphaning: dependents keep a reference to a deleted owner and are then deleted"),
    "kubernetes": (
        "the namespace controller (kube-controller-manager)",
        "once every object in the namespace is gone",
        "the deletion of the namespace's content: its objects lose their namespace record "
        "without any clean-up"),
    "kubernetes.io/pv-protection": (
        "the pv-protection controller (kube-controller-manager)",
        "once the PersistentVolume is no longer bound to a claim",
        "protection of a volume still bound to a claim: its data may be released in use"),
    "kubernetes.io/pvc-protection": (
        "the pvc-protection controller (kube-controller-manager)",
        "once no pod uses the claim",
        "protection of a claim still mounted by pods: their volume can vanish under them"),
    "batch.kubernetes.io/job-tracking": (
        "the job controller (kube-controller-manager)",
        "once the Job has counted the pod's outcome", "the Job's accounting of this pod"),
    SERVICE_CIDR_FINALIZER: (
        "the service-cidr controller (kube-controller-manager)",
        "once no IPAddress allocated from its range is left outside another ServiceCIDR",
        "the protection of the Service IPs allocated from its range: their IPAddresses are "
        "left in no ServiceCIDR"),
    "customresourcecleanup.apiextensions.k8s.io": (
        "the API server (apiextensions-apiserver)",
        "once every instance of the custom resource is deleted",
        "deletion of the instances: they stay in storage, unreachable until the CRD returns"),
}


def who_removes(finalizer: str, obj: Obj, inv: Inventory,
                mapping: ControllerMap | None = None) -> Remover:
    entry = mapping.lookup(finalizer) if mapping is not None else None
    if entry is not None:
        return _mapped(finalizer, entry, inv)
    builtin = _BUILTIN.get(finalizer)
    if builtin is not None:
        who, when, skips = builtin
        when = _removes_when(finalizer, obj, inv, when)
        evidence = (_api_server_alive(inv) if finalizer.startswith("customresourcecleanup")
                    else controller_manager_evidence(inv))
        return Remover(finalizer, who, "built-in", when, skips, evidence)
    return _published(finalizer, inv)


def _removes_when(finalizer: str, obj: Obj, inv: Inventory, default: str) -> str:
    """A built-in remover's condition, said of ``obj`` where the rule names what holds it
    (the pods using a claim, the claim of a Bound volume: ``volumes``)."""
    if finalizer == PVC_PROTECTION_FINALIZER and obj.get("kind") == "PersistentVolumeClaim":
        return pvc_protection_when(obj, inv)
    if finalizer == PV_PROTECTION_FINALIZER and obj.get("kind") == "PersistentVolume":
        return pv_protection_when(obj)
    if finalizer == SERVICE_CIDR_FINALIZER and obj.get("kind") == "ServiceCIDR":
        return service_cidr_when(obj, inv)
    return default


def _mapped(finalizer: str, entry: ControllerEntry, inv: Inventory) -> Remover:
    evidence = [lease_evidence(inv, *_split(s)) for s in entry.leases]
    evidence += [deployment_evidence(inv, *_split(s)) for s in entry.deployments]
    return Remover(finalizer, entry.controller or "the controller named in the mapping file",
                   "mapping file", "once its clean-up is done",
                   entry.cleanup or "whatever clean-up that controller does before releasing "
                   "the object", tuple(evidence))


#: The annotation by which a controller's Lease or Deployment names the finalizers that
#: controller removes (kubegc's convention, docs/tools.md).
REMOVES_FINALIZERS_ANNOTATION = "kubegc.io/removes-finalizers"
UNKNOWN_REMOVER = "an unknown controller"
NOTHING_NAMES_IT = "nothing names its controller"
#: How a user tells the tools who removes a finalizer.
HOW_TO_NAME_IT = ("name it in a --controllers-file, or annotate the controller's Lease or "
                  f"Deployment with {REMOVES_FINALIZERS_ANNOTATION}")
_UNKNOWN_SKIPS = ("whatever clean-up the controller does before releasing the object "
                  "(outside resources such as cloud resources, backups or connections stay "
                  "behind)")


def publishes(obj: Obj, finalizer: str) -> bool:
    """Whether ``obj`` (a Lease or Deployment) names ``finalizer`` in its
    ``kubegc.io/removes-finalizers`` annotation."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    listed = str(annotations.get(REMOVES_FINALIZERS_ANNOTATION) or "")
    return any(name == finalizer or fnmatch.fnmatchcase(finalizer, name)
               for name in (part.strip() for part in listed.split(",")) if name)


def _published(finalizer: str, inv: Inventory) -> Remover:
    """The controllers that publish ``finalizer`` (see ``publishes``); unknown if none."""
    leases = [o for o in inv.of_kind("coordination.k8s.io", "Lease") if publishes(o, finalizer)]
    deploys = [o for o in inv.of_kind("apps", "Deployment") if publishes(o, finalizer)]
    if not leases and not deploys:
        return Remover(finalizer, UNKNOWN_REMOVER, NOTHING_NAMES_IT, "once its clean-up is done",
                       _UNKNOWN_SKIPS)
    names = [f"{ObjRef.of(o).kind} {ObjRef.of(o).namespace}/{ObjRef.of(o).name}"
             for o in (*leases, *deploys)]
    evidence = tuple([_lease(o, inv) for o in leases] + [_deployment(o) for o in deploys])
    return Remover(finalizer, "the controller of " + ", ".join(names),
                   f"{REMOVES_FINALIZERS_ANNOTATION} on " + ", ".join(names),
                   "once its clean-up is done", _UNKNOWN_SKIPS, evidence)


def _split(text: str) -> tuple[str, str]:
    ns, _, name = text.rpartition("/")
    return ns, name


def controller_manager_evidence(inv: Inventory) -> tuple[Evidence, ...]:
    lease = inv.find("coordination.k8s.io", "Lease", "kube-system", CONTROLLER_MANAGER)
    if lease is not None:
        return (_lease(lease, inv),)
    if not inv.dump and any(r.group == "kubegc.io" for r in inv.resources):
        return (Evidence("kubegc", "the API server is kubegc: its controllers (the garbage "
                         "collector, the namespace controller) run in the serving process "
                         "unless it was started with --controllers without them", Alive.YES),)
    if inv.was_read("coordination.k8s.io", "Lease", "kube-system"):
        return (Evidence(f"Lease kube-system/{CONTROLLER_MANAGER}", "not found", Alive.UNKNOWN),)
    return ()


def _api_server_alive(inv: Inventory) -> tuple[Evidence, ...]:
    return (Evidence("API server", f"answered at {inv.now:%Y-%m-%dT%H:%M:%SZ}", Alive.YES),)


def lease_evidence(inv: Inventory, namespace: str, name: str) -> Evidence:
    lease = inv.find("coordination.k8s.io", "Lease", namespace, name)
    if lease is None:
        return Evidence(f"Lease {namespace}/{name}", "not found", Alive.NO)
    return _lease(lease, inv)


def _lease(lease: Obj, inv: Inventory) -> Evidence:
    ref = ObjRef.of(lease)
    source = f"Lease {ref.namespace}/{ref.name}"
    spec = lease.get("spec") or {}
    holder = str(spec.get("holderIdentity") or "")
    duration = float(spec.get("leaseDurationSeconds") or 0)
    since = age(spec.get("renewTime"), inv.now)
    if not holder:
        return Evidence(source, "released: no holder", Alive.NO)
    if since is None:
        return Evidence(source, f"held by {holder}, never renewed", Alive.NO)
    fact = (f"held by {holder}, renewed at {_renewed(spec)}, {human_duration(since)} "
            f"before the reading (lease {human_duration(duration)})")
    return Evidence(source, fact, Alive.YES if since <= duration else Alive.NO)


def _renewed(spec: dict[str, Any]) -> str:
    when = timestamp(spec.get("renewTime"))
    return format_time(when) if when is not None else str(spec.get("renewTime"))


def deployment_evidence(inv: Inventory, namespace: str, name: str) -> Evidence:
    deploy = inv.find("apps", "Deployment", namespace, name)
    if deploy is None:
        return Evidence(f"Deployment {namespace}/{name}", "not found", Alive.NO)
    return _deployment(deploy)


def _deployment(deploy: Obj) -> Evidence:
    ref = ObjRef.of(deploy)
    source = f"Deployment {ref.namespace}/{ref.name}"
    wanted = (deploy.get("spec") or {}).get("replicas", 1)
    ready = int((deploy.get("status") or {}).get("readyReplicas") or 0)
    if wanted == 0:
        return Evidence(source, "scaled to 0 replicas", Alive.NO)
    return Evidence(source, f"{ready}/{wanted} replicas ready", Alive.YES if ready else Alive.NO)
