"""One webhook of a stored configuration, parsed once when the configuration is written
(cf. k8s.io/apiserver/pkg/admission/plugin/webhook/accessors.go ``WebhookAccessor``), and
the configurations this server knows (cf. ``configuration/{validating,mutating}_webhook_manager
.go``: kept from the watch cache, the webhooks of every configuration sorted by the
configuration's name, in their order inside it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubegc.api.errors import StatusError
from kubegc.api.labels import NOTHING, LabelSelector, label_selector_from_dict
from kubegc.api.types import Obj

GROUP = "admissionregistration.k8s.io"
VALIDATING = "validatingwebhookconfigurations"
MUTATING = "mutatingwebhookconfigurations"


@dataclass(frozen=True, slots=True)
class Webhook:
    """A webhook as the dispatchers use it; ``uid`` tells it apart from every other one
    (upstream's ``<configuration>/<name>/<index>``)."""

    uid: str
    name: str
    configuration: str
    mutating: bool
    rules: tuple[dict[str, Any], ...]
    failure_policy: str
    match_policy: str
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    side_effects: str
    timeout_seconds: int
    reinvocation_policy: str
    client_config: dict[str, Any]
    admission_review_versions: tuple[str, ...] = ("v1",)

    @property
    def kind(self) -> str:
        """The configuration's kind, as the doctor and messages name it."""
        return ("MutatingWebhookConfiguration" if self.mutating
                else "ValidatingWebhookConfiguration")


def _selector(raw: Any) -> LabelSelector:
    try:
        return label_selector_from_dict(raw if isinstance(raw, dict) else {})
    except StatusError:
        return NOTHING  # refused by validation; a restored one matches nothing


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def webhooks_of(config: Obj, *, mutating: bool) -> list[Webhook]:
    """The webhooks of one configuration, defaulted as stored."""
    meta = config.get("metadata") or {}
    name = str(meta.get("name") or "")
    out: list[Webhook] = []
    for i, hook in enumerate(_list(config.get("webhooks"))):
        if not isinstance(hook, dict):
            continue
        out.append(Webhook(
            uid=f"{name}/{hook.get('name', '')}/{i}", name=str(hook.get("name") or ""),
            configuration=name, mutating=mutating,
            rules=tuple(r for r in _list(hook.get("rules")) if isinstance(r, dict)),
            failure_policy=str(hook.get("failurePolicy") or "Fail"),
            match_policy=str(hook.get("matchPolicy") or "Equivalent"),
            namespace_selector=_selector(hook.get("namespaceSelector")),
            object_selector=_selector(hook.get("objectSelector")),
            side_effects=str(hook.get("sideEffects") or ""),
            timeout_seconds=_int(hook.get("timeoutSeconds"), 10),
            reinvocation_policy=str(hook.get("reinvocationPolicy") or "Never"),
            client_config=(dict(hook["clientConfig"]) if isinstance(hook.get("clientConfig"),
                                                                    dict) else {}),
            admission_review_versions=tuple(
                str(v) for v in _list(hook.get("admissionReviewVersions")) or ["v1"])))
    return out


class WebhookConfigurations:
    """The stored configurations' webhooks, by kind.

    Ownership: the registry is the only writer (``written``: at start from storage, then
    from every watch cache event of the two resources); the dispatchers read ``validating``
    and ``mutating``, rebuilt on each write (a write is rare, a read is every request)."""

    def __init__(self) -> None:
        self._configs: dict[tuple[bool, str], list[Webhook]] = {}
        self.validating: tuple[Webhook, ...] = ()
        self.mutating: tuple[Webhook, ...] = ()

    def written(self, resource: str, obj: Obj, *, deleted: bool) -> None:
        mutating = resource == MUTATING
        name = str((obj.get("metadata") or {}).get("name") or "")
        if deleted:
            self._configs.pop((mutating, name), None)
        else:
            self._configs[(mutating, name)] = webhooks_of(obj, mutating=mutating)
        for kind in (False, True):
            hooks = tuple(h for (m, n), hs in sorted(self._configs.items()) if m is kind
                          for h in hs)
            if kind:
                self.mutating = hooks
            else:
                self.validating = hooks

    def all(self) -> tuple[Webhook, ...]:
        return self.validating + self.mutating


__all__ = ["GROUP", "MUTATING", "VALIDATING", "Webhook", "WebhookConfigurations",
           "webhooks_of"]
