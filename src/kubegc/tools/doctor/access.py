"""What a cluster enforces about ownerReferences, on evidence only: whether the
``OwnerReferencesPermissionEnforcement`` admission plugin runs, and whether RBAC decides
(or every request is allowed). No evidence means **unknown**, never a guess: the doctor
must not be confidently wrong.

Evidence, in order:

* kubegc: ``GET /debug/kubegc/access`` (its ``--authorization-mode`` and the admission
  plugins it runs; readable by ``system:masters`` under RBAC);
* a kube-apiserver that runs as a pod (kubeadm, kind, minikube): the flags of the
  ``kube-system`` pods labelled ``component=kube-apiserver`` (``--enable-admission-plugins``,
  ``--disable-admission-plugins``, ``--admission-control``, ``--authorization-mode``);
* OpenShift (serves ``config.openshift.io``): the plugin is part of its default set;
* the authorizer itself: a SubjectAccessReview for a made-up user with no groups — allowed
  means every request is (``AlwaysAllow``), denied that something (RBAC) decides.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from kubegc.api.auth import Attributes, UserInfo
from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.authz.ownerreferences import ACCESS_CONFIG_PATH, PLUGIN_NAME, Verdict
from kubegc.client.interface import APIResource, Client, ListOptions
from kubegc.client.rest import RestClient

_PODS = GroupVersionResource("", "v1", "pods")
#: a user no cluster grants anything to, for probing the authorizer
PROBE_USER = UserInfo("system:kubegc-doctor:probe")


class State(enum.StrEnum):
    ON = "on"
    OFF = "off"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Access:
    """What the cluster enforces, each with the evidence it was read from."""

    plugin: State
    plugin_evidence: str
    #: ON: an authorizer (RBAC) decides; OFF: every request is allowed
    rbac: State
    rbac_evidence: str

    def to_dict(self) -> dict[str, str]:
        return {"ownerReferencesPermissionEnforcement": self.plugin.value,
                "ownerReferencesPermissionEnforcementEvidence": self.plugin_evidence,
                "authorization": self.rbac.value, "authorizationEvidence": self.rbac_evidence}


#: asks the cluster's authorizer about one record (a SubjectAccessReview); None: could not
Ask = Callable[[Attributes], Awaitable[Verdict | None]]


async def read_access(client: Client, resources: Sequence[APIResource], ask: Ask, *,
                      refused: bool = False) -> Access:
    """``refused``: the authorizer already refused the user something (so it is not
    AlwaysAllow)."""
    plugin, plugin_evidence, modes = await _kubegc(client, resources)
    if plugin is State.UNKNOWN:
        plugin, plugin_evidence, pod_modes = await _apiserver_pods(client, plugin_evidence)
        modes = modes or pod_modes
    if plugin is State.UNKNOWN and any(r.group == "config.openshift.io" for r in resources):
        plugin, plugin_evidence = State.ON, ("OpenShift (serves config.openshift.io): its API "
                                             f"server runs {PLUGIN_NAME}")
    rbac, rbac_evidence = await _authorization(ask, modes, refused)
    return Access(plugin, plugin_evidence, rbac, rbac_evidence)


async def _kubegc(client: Client, resources: Sequence[APIResource]
                  ) -> tuple[State, str, list[str]]:
    if not any(r.group == "kubegc.io" for r in resources):
        return State.UNKNOWN, "", []
    if not isinstance(client, RestClient):
        return State.UNKNOWN, "kubegc, read in-process: its configuration was not read", []
    try:
        doc = await client.request("GET", ACCESS_CONFIG_PATH)
    except StatusError as e:
        return (State.UNKNOWN, f"kubegc, but GET {ACCESS_CONFIG_PATH} answered {e.code} "
                               f"{e.reason} (it is readable by system:masters)", [])
    plugins = [str(p) for p in doc.get("admissionPlugins") or []]
    modes = [str(m) for m in doc.get("authorizationModes") or []]
    state = State.ON if PLUGIN_NAME in plugins else State.OFF
    return state, (f"kubegc runs the admission plugins {', '.join(plugins) or 'none'} "
                   f"({ACCESS_CONFIG_PATH})"), modes


def _flag(args: Sequence[str], name: str) -> list[str] | None:
    """The comma-separated values of ``--name=V`` or ``--name V`` (the last one wins)."""
    found: list[str] | None = None
    for i, arg in enumerate(args):
        value = None
        if arg.startswith(f"--{name}="):
            value = arg.split("=", 1)[1]
        elif arg == f"--{name}" and i + 1 < len(args):
            value = args[i + 1]
        if value is not None:
            found = [v.strip() for v in value.split(",") if v.strip()]
    return found


def _pod_args(pod: Obj) -> list[str]:
    out: list[str] = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        if isinstance(container, dict):
            out += [str(a) for a in (container.get("command") or []) + (
                container.get("args") or [])]
    return out


def _plugin_in_flags(args: Sequence[str]) -> bool:
    """kube-apiserver's rule: ``--admission-control`` (deprecated) is the whole list;
    otherwise the default set (the plugin is off in it) plus enable, less disable."""
    control = _flag(args, "admission-control")
    if control is not None:
        return PLUGIN_NAME in control
    return PLUGIN_NAME in (_flag(args, "enable-admission-plugins") or []) and (
        PLUGIN_NAME not in (_flag(args, "disable-admission-plugins") or []))


async def _apiserver_pods(client: Client, why: str) -> tuple[State, str, list[str]]:
    try:
        listed = await client.list(_PODS, namespace="kube-system", options=ListOptions(
            label_selector="component=kube-apiserver"))
    except StatusError as e:
        reason = f"the kube-apiserver pods could not be read ({e.code} {e.reason})"
        return State.UNKNOWN, "; ".join(filter(None, (why, reason))), []
    pods = [p for p in listed.get("items") or [] if isinstance(p, dict)]
    if not pods:
        reason = ("no kube-apiserver pod in kube-system (a managed control plane does not "
                  "show its flags)")
        return State.UNKNOWN, "; ".join(filter(None, (why, reason))), []
    verdicts = {_plugin_in_flags(_pod_args(p)) for p in pods}
    names = ", ".join(str((p.get("metadata") or {}).get("name")) for p in pods)
    if len(verdicts) > 1:
        return State.UNKNOWN, f"the kube-apiserver pods ({names}) disagree", []
    modes = _flag(_pod_args(pods[0]), "authorization-mode") or []
    state = State.ON if verdicts.pop() else State.OFF
    return state, f"the flags of kube-system pod {names}", modes


async def _authorization(ask: Ask, modes: list[str], refused: bool) -> tuple[State, str]:
    if modes:
        state = State.OFF if "AlwaysAllow" in modes else State.ON
        return state, f"--authorization-mode {','.join(modes)}"
    if refused:
        return State.ON, "the authorizer refused some of the permissions below"
    verdict = await ask(Attributes(user=PROBE_USER, verb="get", namespace="default",
                                   api_version="v1", resource="pods", name="probe"))
    if verdict is None:
        return State.UNKNOWN, "the authorizer could not be asked about another user"
    if verdict.allowed:
        return State.OFF, (f"a SubjectAccessReview allows {PROBE_USER.name}, who has no "
                           "groups and no bindings, to get a pod: every request is allowed")
    return State.ON, (f"a SubjectAccessReview refuses {PROBE_USER.name} (no groups, no "
                      "bindings): an authorizer decides")
