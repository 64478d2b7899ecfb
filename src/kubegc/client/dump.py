"""``DumpClient``: the ``Client`` protocol read-only over a dump file, with no cluster.

A dump is what ``kubectl get -A -o json <resources>`` (or ``-o yaml``) prints: a ``List``
(or typed ``<Kind>List``) of objects, a single object, several JSON documents one after
the other, or a YAML stream of documents (``---``). Lists nest; their items are flattened.

Contract:
  * ``get``/``list`` serve the dumped objects as they are (deep copies: callers may
    mutate them) or as the reader's ``Prepare`` left them (the doctor's keeps less),
    filtered by namespace, label selector and field selector; ``list`` pages with
    ``limit``/``continue``. A missing object raises 404 NotFound with
    upstream's message; a resource the dump does not know raises 404 "the server could
    not find the requested resource", as a real server does.
  * ``watch`` yields nothing and blocks until the caller cancels it: a dump never changes.
  * Every write (``create``/``update``/``patch``/``delete``) raises 405 MethodNotAllowed.
  * ``discover`` lists one ``APIResource`` per (group, version, resource) known from:
    kubegc's built-in resources, a small table of other Kubernetes built-ins, the
    CustomResourceDefinitions present in the dump, and, for any other kind found in the
    dump, a guess (plural by English rules, namespaced when its objects have a
    namespace). Every resource is offered with the verbs ``get``, ``list``, ``watch``.
Reading the file is ``client/dump_reader.py`` (``parse_dump``, ``read_dump``, ``Prepare``,
re-exported here).
May import: ``kubegc.api`` and the client protocol.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import orjson

from kubegc.api import errors
from kubegc.api.fields import object_fields, parse_field_selector
from kubegc.api.interning import intern_common
from kubegc.api.labels import parse_label_selector
from kubegc.api.resources import BUILTIN_RESOURCES, GroupVersionResource, split_api_version
from kubegc.api.types import Obj
from kubegc.client.dump_reader import Prepare, parse_dump, read_dump
from kubegc.client.interface import (
    APIResource,
    Client,
    DeleteOptions,
    ListOptions,
    PatchType,
    WatchEvent,
    WatchOptions,
)

READ_VERBS = ("get", "list", "watch")

#: Kubernetes built-ins kubegc does not serve but real dumps contain:
#: (group, version, resource, kind, namespaced).
_OTHER_BUILTINS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("", "v1", "limitranges", "LimitRange", True),
    ("", "v1", "resourcequotas", "ResourceQuota", True),
    ("", "v1", "podtemplates", "PodTemplate", True),
    ("apps", "v1", "controllerrevisions", "ControllerRevision", True),
    ("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True),
    ("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True),
    ("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True),
    ("networking.k8s.io", "v1", "ingresses", "Ingress", True),
    ("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True),
    ("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False),
    ("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    ("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", False),
    ("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    ("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    ("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False),
    ("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False),
    ("certificates.k8s.io", "v1", "certificatesigningrequests", "CertificateSigningRequest",
     False),
    ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
     "ValidatingWebhookConfiguration", False),
    ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
     "MutatingWebhookConfiguration", False),
    ("apiregistration.k8s.io", "v1", "apiservices", "APIService", False),
)


def _labels(obj: Obj) -> dict[str, str] | None:
    """An object's labels; None when they are not a map (a dump edited by hand)."""
    labels = obj["metadata"].get("labels")
    return labels if isinstance(labels, dict) else None


T = TypeVar("T")


def _copy(value: T) -> T:
    """A deep copy of JSON data (an encode/decode round trip: ~10x ``copy.deepcopy``)."""
    copied: T = orjson.loads(orjson.dumps(value))
    return copied


@dataclass(frozen=True, slots=True)
class _Resource:
    group: str
    resource: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()


def guess_plural(kind: str) -> str:
    """English plural of a lower-cased kind, as kubebuilder names CRD resources."""
    word = kind.lower()
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def _crd_resource(crd: Obj) -> tuple[_Resource, list[str]] | None:
    """The resource a CRD of the dump serves; None for one that names none (a CRD edited
    by hand may hold anything: whatever is not of its schema's type is left out)."""
    spec = _mapping(crd.get("spec"))
    names = _mapping(spec.get("names"))
    plural, kind = names.get("plural"), names.get("kind")
    if not plural or not kind or not isinstance(plural, str) or not isinstance(kind, str):
        return None
    listed = spec.get("versions")
    versions = [str(v.get("name")) for v in (listed if isinstance(listed, list) else ())
                if isinstance(v, dict) and v.get("name") and v.get("served", True)]
    if not versions and isinstance(spec.get("version"), str):
        versions = [str(spec["version"])]
    short = names.get("shortNames")
    res = _Resource(str(spec.get("group") or ""), plural, kind,
                    spec.get("scope", "Namespaced") == "Namespaced",
                    tuple(str(n) for n in (short if isinstance(short, list) else ())))
    return res, versions


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class DumpClient(Client):
    """Read-only ``Client`` over the objects of a dump (see the module docstring).

    Ownership: immutable after construction; safe to share between tasks."""

    def __init__(self, objects: Iterable[Obj], *, source: str = "") -> None:
        self.source = source
        self.resource_version = "1"
        self._resources: dict[tuple[str, str], _Resource] = {}
        self._versions: dict[tuple[str, str], list[str]] = {}
        self._by_kind: dict[tuple[str, str], tuple[str, str]] = {}
        self._objects: dict[tuple[str, str], list[Obj]] = {}
        for info in BUILTIN_RESOURCES:
            self._add(_Resource(info.group, info.resource, info.kind, info.namespaced,
                                info.short_names), list(info.versions))
        for group, version, resource, kind, namespaced in _OTHER_BUILTINS:
            self._add(_Resource(group, resource, kind, namespaced), [version])
        #: objects that cannot be served (metadata no object, kind or apiVersion no
        #: string: edited by hand), for the tools to report (``tools.wellformed``)
        self.malformed: list[Obj] = []
        #: (apiVersion, kind) -> its objects, in file order; the CRDs: one walk over the
        #: objects (issue 27: a dump of 1M), their resources found after it
        stored: dict[tuple[str, str], list[Obj]] = {}
        crds: list[Obj] = []
        objs = objects if isinstance(objects, list) else list(objects)
        for obj in objs:
            api_version, of_kind = obj.get("apiVersion"), obj.get("kind")
            if of_kind == "CustomResourceDefinition":
                crds.append(obj)
            if (isinstance(obj.get("metadata"), dict) and isinstance(of_kind, str)
                    and isinstance(api_version, str)):
                into = stored.get((api_version, of_kind))
                if into is None:
                    stored[(api_version, of_kind)] = [obj]
                else:
                    into.append(obj)
            else:
                self.malformed.append(obj)
        for crd in crds:
            found = _crd_resource(crd)
            if found is not None:
                self._add(*found)
        self._store_all(stored, objs)

    @classmethod
    def from_file(cls, path: str | Path, *, prepare: Prepare = intern_common) -> DumpClient:
        """Read a dump file (``-`` is not supported: pass the text to ``from_text``)."""
        file = Path(path)
        return cls(read_dump(file, prepare=prepare), source=str(file))

    @classmethod
    def from_text(cls, text: str, *, source: str = "", prepare: Prepare = intern_common
                  ) -> DumpClient:
        return cls(parse_dump(text, prepare=prepare), source=source)

    # -- building ------------------------------------------------------------------------

    def _add(self, res: _Resource, versions: list[str]) -> None:
        key = (res.group, res.resource)
        self._resources.setdefault(key, res)
        known = self._versions.setdefault(key, [])
        known.extend(v for v in versions if v not in known)
        self._by_kind.setdefault((res.group, res.kind), key)

    def _store_all(self, stored: dict[tuple[str, str], list[Obj]], in_file: list[Obj]
                   ) -> None:
        """Store the objects of each (apiVersion, kind), in the order each first appears;
        where two versions of one resource both appear, its objects stay in file order."""
        merged: set[tuple[str, str]] = set()
        for (api_version, kind), objs in stored.items():
            key = self._resource_key(api_version, kind, objs[0])
            if key in self._objects:
                merged.add(key)  # a new list: ``stored``'s stay as they were read
                self._objects[key] = self._objects[key] + objs
            else:
                self._objects[key] = objs
        for key in merged:  # rare: file order, as the objects came
            held = {id(o) for o in self._objects[key]}
            self._objects[key] = [o for o in in_file if id(o) in held]

    def _resource_key(self, api_version: str, kind: str, obj: Obj) -> tuple[str, str]:
        """The resource of ``kind`` at ``api_version`` (``obj`` one of its objects), added
        (a guess) if unknown, ``api_version``'s version added to it if new."""
        group, version = split_api_version(api_version)
        key = self._by_kind.get((group, kind))
        if key is None:
            namespaced = bool((obj.get("metadata") or {}).get("namespace"))
            res = _Resource(group, guess_plural(kind), kind, namespaced)
            self._add(res, [version])
            key = (group, res.resource)
        elif version not in self._versions[key]:
            self._versions[key].append(version)
        return key

    def objects(self) -> builtins.list[Obj]:
        """Every dumped object (shared, do not mutate)."""
        return [o for objs in self._objects.values() for o in objs]

    def shared_items(self, gvr: GroupVersionResource, *, namespace: str = ""
                     ) -> builtins.list[Obj]:
        """``list``'s items without the copy, for read-only callers that read everything
        (the tools' inventory): shared, do not mutate."""
        return list(self._select(gvr, namespace))

    # -- reads ---------------------------------------------------------------------------

    def _resource(self, gvr: GroupVersionResource) -> _Resource:
        key = (gvr.group, gvr.resource)
        res = self._resources.get(key)
        if res is None or gvr.version not in self._versions.get(key, []):
            raise errors.route_not_found()
        return res

    def _select(self, gvr: GroupVersionResource, namespace: str) -> builtins.list[Obj]:
        res = self._resource(gvr)
        items = self._objects.get((gvr.group, gvr.resource), [])
        if res.namespaced and namespace:
            items = [o for o in items if (o.get("metadata") or {}).get("namespace") == namespace]
        return items

    async def get(self, gvr: GroupVersionResource, name: str, *, namespace: str = "") -> Obj:
        for obj in self._select(gvr, namespace):
            if obj["metadata"].get("name") == name:
                return _copy(obj)
        raise errors.not_found(errors.GroupResource(gvr.group, gvr.resource), name)

    async def list(
        self, gvr: GroupVersionResource, *, namespace: str = "", options: ListOptions | None = None,
    ) -> Obj:
        o = options or ListOptions()
        res = self._resource(gvr)
        items = self._select(gvr, namespace)
        if o.label_selector:
            labels = parse_label_selector(o.label_selector)
            items = [i for i in items if labels.matches(_labels(i))]
        if o.field_selector:
            fields = parse_field_selector(o.field_selector)
            items = [i for i in items if fields.matches(object_fields(gvr.group, gvr.resource, i))]
        start = int(o.continue_) if o.continue_.isdigit() else 0
        end = start + o.limit if o.limit > 0 else len(items)
        meta: dict[str, Any] = {"resourceVersion": self.resource_version}
        if end < len(items):
            meta["continue"] = str(end)
            meta["remainingItemCount"] = len(items) - end
        return {"apiVersion": gvr.group_version, "kind": f"{res.kind}List", "metadata": meta,
                "items": _copy(items[start:end])}

    async def watch(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: WatchOptions | None = None,
    ) -> AsyncIterator[WatchEvent]:
        self._resource(gvr)
        await asyncio.Event().wait()  # a dump never changes: block until cancelled
        nothing: tuple[WatchEvent, ...] = ()
        for event in nothing:  # pragma: no cover - makes this an async generator
            yield event

    async def discover(self) -> builtins.list[APIResource]:
        out = []
        for key, res in self._resources.items():
            for version in self._versions[key]:
                out.append(APIResource(group=res.group, version=version, resource=res.resource,
                                       kind=res.kind, namespaced=res.namespaced,
                                       verbs=READ_VERBS, singular=res.kind.lower(),
                                       short_names=res.short_names))
        return out

    # -- writes: refused -----------------------------------------------------------------

    def _refuse(self, gvr: GroupVersionResource, action: str) -> errors.StatusError:
        return errors.method_not_supported(errors.GroupResource(gvr.group, gvr.resource), action)

    async def create(self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "") -> Obj:
        raise self._refuse(gvr, "create")

    async def update(
        self, gvr: GroupVersionResource, obj: Obj, *, namespace: str = "", subresource: str = "",
    ) -> Obj:
        raise self._refuse(gvr, "update")

    async def patch(
        self, gvr: GroupVersionResource, name: str, patch: Any, *, namespace: str = "",
        patch_type: PatchType = PatchType.MERGE, subresource: str = "", field_manager: str = "",
        force: bool = False,
    ) -> Obj:
        raise self._refuse(gvr, "patch")

    async def delete(
        self, gvr: GroupVersionResource, name: str, *, namespace: str = "",
        options: DeleteOptions | None = None,
    ) -> Obj:
        raise self._refuse(gvr, "delete")

    async def delete_collection(
        self, gvr: GroupVersionResource, *, namespace: str = "",
        options: DeleteOptions | None = None, list_options: ListOptions | None = None,
    ) -> Obj:
        raise self._refuse(gvr, "deletecollection")


__all__ = ["DumpClient", "Prepare", "guess_plural", "parse_dump", "read_dump"]
