"""Resolve a ``KIND/NAME`` argument against discovery, as kubectl does.

Accepted spellings for the kind: plural (``configmaps``), singular (``configmap``), kind
in any case (``ConfigMap``), short name (``cm``), each optionally qualified with its
group (``sites.own.labhub.io``, ``Site.own.labhub.io``) or version and group
(``deployments.v1.apps``). Core resources win over same-named ones of other groups, as
kubectl prefers them. Unknown kinds raise ``UnknownKind`` with kubectl's message.
"""

from __future__ import annotations

from collections.abc import Sequence

from kubegc.client.interface import APIResource
from kubegc.tools.inventory import preferred_resources


class UnknownKind(LookupError):
    def __init__(self, text: str) -> None:
        super().__init__(f'the server doesn\'t have a resource type "{text}"')
        self.text = text


def split_target(args: Sequence[str]) -> tuple[str, str]:
    """``["configmap/app"]`` or ``["configmap", "app"]`` → ``("configmap", "app")``."""
    if len(args) == 1 and "/" in args[0]:
        kind, _, name = args[0].partition("/")
        if kind and name:
            return kind, name
    if len(args) == 2 and "/" not in args[0]:
        return args[0], args[1]
    raise ValueError("expected KIND/NAME (or KIND NAME), e.g. configmap/app-config")


def _names(res: APIResource) -> set[str]:
    return {res.resource, res.singular or res.kind.lower(), res.kind.lower(), *res.short_names}


def resolve_kind(resources: Sequence[APIResource], text: str) -> APIResource:
    wanted = text.lower()
    preferred = preferred_resources(resources)
    exact = [r for r in preferred if wanted in _names(r)]
    if exact:
        return sorted(exact, key=lambda r: r.group != "")[0]
    for res in resources:
        if "/" in res.resource or not res.group:
            continue
        for name in _names(res):
            if wanted in (f"{name}.{res.group}", f"{name}.{res.version}.{res.group}"):
                return res
    raise UnknownKind(text)
