"""Which webhooks a request calls, and at which version (cf. webhook/generic/webhook.go
``ShouldCallHook``, webhook/predicates/rules/rules.go ``Matcher``,
predicates/namespace/matcher.go ``MatchNamespaceSelector``, predicates/object/matcher.go
``MatchObjectSelector``, and ``IsExemptAdmissionConfigurationResource``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kubegc.api import errors
from kubegc.api.types import Obj
from kubegc.registry.admission.webhook.accessors import GROUP, Webhook
from kubegc.registry.generic.attributes import Attributes

#: never sent to a webhook, so that a broken webhook can always be removed
#: (``IsExemptAdmissionConfigurationResource``)
_EXEMPT = frozenset({
    "validatingwebhookconfigurations", "mutatingwebhookconfigurations",
    "validatingadmissionpolicies", "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies", "mutatingadmissionpolicybindings",
})

#: the stored namespace of that name, or None
NamespaceGetter = Callable[[str], Awaitable[Obj | None]]


def exempt(a: Attributes) -> bool:
    """``IsExemptAdmissionConfigurationResource``."""
    return a.t.info.group == GROUP and a.t.info.resource in _EXEMPT


def _split(resource: str) -> tuple[str, str]:
    name, _, sub = resource.partition("/")
    return name, sub


def _rule_matches(rule: dict[str, Any], a: Attributes, version: str) -> bool:
    """``Matcher.Matches``: operation, group, version, resource/subresource, scope."""
    info = a.t.info
    ops = rule.get("operations") or []
    if "*" not in ops and a.operation not in ops:
        return False
    groups, versions = rule.get("apiGroups") or [], rule.get("apiVersions") or []
    if "*" not in groups and info.group not in groups:
        return False
    if "*" not in versions and version not in versions:
        return False
    scope = rule.get("scope") or "*"
    namespaced = bool(a.t.namespace) and info.namespaced
    if (scope == "Cluster" and namespaced) or (scope == "Namespaced" and not namespaced):
        return False
    for entry in rule.get("resources") or []:
        res, sub = _split(str(entry))
        if res in ("*", info.resource) and sub in ("*", a.subresource):
            return True
    return False


def matched_version(hook: Webhook, a: Attributes) -> str | None:
    """The version the webhook is called at: the request's when a rule names it, else
    (``matchPolicy: Equivalent``) another served version of the resource a rule names;
    None when the webhook does not match."""
    request_version = a.t.version
    if any(_rule_matches(r, a, request_version) for r in hook.rules):
        return request_version
    if hook.match_policy != "Equivalent":
        return None
    for version in a.t.info.versions:
        if version != request_version and any(_rule_matches(r, a, version)
                                               for r in hook.rules):
            return version
    return None


def _labels(obj: Obj | None) -> dict[str, str]:
    meta = (obj or {}).get("metadata") or {}
    labels = meta.get("labels")
    return labels if isinstance(labels, dict) else {}


def matches_object_selector(hook: Webhook, a: Attributes) -> bool:
    """``MatchObjectSelector``: the object's labels or the old object's."""
    selector = hook.object_selector
    if selector.empty:
        return True
    return any(o is not None and selector.matches(_labels(o)) for o in (a.obj, a.old))


async def matches_namespace_selector(hook: Webhook, a: Attributes,
                                     get_namespace: NamespaceGetter | None) -> bool:
    """``MatchNamespaceSelector``: a cluster-scoped object other than a namespace always
    matches; a namespace by its own labels; others by their namespace's (404 when it does
    not exist, as upstream)."""
    selector = hook.namespace_selector
    is_namespace = a.t.info.group == "" and a.t.info.resource == "namespaces"
    if not is_namespace and not (a.t.info.namespaced and a.t.namespace):
        return True
    if selector.empty:
        return True
    if is_namespace:
        return selector.matches(_labels(a.obj if a.obj is not None else a.old))
    namespace = await get_namespace(a.t.namespace) if get_namespace is not None else None
    if namespace is None:
        raise errors.not_found(errors.GroupResource("", "namespaces"), a.t.namespace)
    return selector.matches(_labels(namespace))


__all__ = ["NamespaceGetter", "exempt", "matched_version", "matches_namespace_selector",
           "matches_object_selector"]
