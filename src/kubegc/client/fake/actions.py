"""The fake client's recorded calls (cf. client-go's ``testing.Action``) and their two
string renderings: kubegc's short one and client-go's, which upstream's GC tests print."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubegc.api.resources import GroupVersionResource
from kubegc.api.types import Obj
from kubegc.client.interface import PatchType

Reactor = Callable[["Action"], Obj | None]
ActionFormat = Callable[["Action"], str]


@dataclass(frozen=True, slots=True)
class Action:
    """One recorded call. ``body``: the object (create/update), the patch (patch), the
    ``DeleteOptions`` (delete), the ``ListOptions``/``WatchOptions`` (list/watch).

    ``str()`` gives ``"<verb> <group/version> <resource>[/<subresource>] [<namespace>/]<name>"``
    (e.g. ``"get apps/v1 deployments ns1/deployment1"``, ``"list v1 pods ns1"``).
    """

    verb: str
    gvr: GroupVersionResource
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    body: Any = None
    patch_type: PatchType | None = None

    def __str__(self) -> str:
        resource = f"{self.gvr.resource}/{self.subresource}" if self.subresource else (
            self.gvr.resource
        )
        target = f"{self.namespace}/{self.name}" if self.namespace and self.name else (
            self.name or self.namespace
        )
        return " ".join(p for p in (self.verb, self.gvr.group_version, resource, target) if p)


def client_go_string(action: Action) -> str:
    """``"<verb> <group>/<version>, Resource=<resource>[ ns=<namespace>][ name=<name>]"``:
    the verb and Go's ``GroupVersionResource.String()``, then namespace and name, as
    upstream's garbage collector tests print the fake metadata client's actions (e.g.
    ``"get /v1, Resource=pods ns=ns1 name=pod1"``). The subresource is not shown."""
    text = f"{action.verb} {action.gvr.group}/{action.gvr.version}, Resource={action.gvr.resource}"
    if action.namespace:
        text += f" ns={action.namespace}"
    if action.name:
        text += f" name={action.name}"
    return text
