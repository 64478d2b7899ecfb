"""OpenAPI v3 documents: ``GET /openapi/v3`` and ``GET /openapi/v3/<api|apis/g>/<v>``.

Pure functions of the resource ``Catalog`` and the CRD schemas; the HTTP layer
(``openapi_handler``) serializes the returned dicts and caches them (per
``catalog.generation`` and CRD schema change). ``/openapi/v2`` is built from these
documents (``openapi_v2``).

Who reads these documents (KEP-2896, OpenAPI v3):
  * ``kubectl create -f`` / ``apply -f`` (validation on by default) read the index, then the
    object's group-version document, and look for a path whose ``patch`` operation carries
    ``x-kubernetes-group-version-kind`` = the object's GVK and a ``fieldValidation`` query
    parameter; without one they fail. Every patch operation here carries both.
  * client-side ``apply`` computes its strategic merge patch from the schemas when the
    patch operation accepts ``application/strategic-merge-patch+json`` — offered for the
    built-in kinds with a schema in ``kubegc.registry.definitions`` (whose patch
    metadata kubectl then uses) that the server strategic-merges
    (``has_strategic_schema``), never for custom resources, which get merge patches.
  * ``kubectl explain`` finds the schema whose ``x-kubernetes-group-version-kind`` matches.

The index links each group-version as ``?hash=<uppercase hex sha512 of its document>``, so
kubectl's HTTP cache never serves a stale document after a CRD changes.

Built-in schemas come from ``kubegc.registry.definitions``, including the hand-written ones
of kubegc's own kinds (``io.kubegc.v1.DeletionRecord``, see scripts/gen_openapi.py); a custom
resource's schema is its CRD version's ``openAPIV3Schema`` as given, plus
apiVersion/kind/metadata and its GVK, named like upstream (``com.example.v1.Widget``). A
built-in kind without any schema is published the same way with a schema that accepts any
fields. Returned documents share nested schema dicts with ``kubegc.registry.definitions``'s data:
treat them as read-only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import orjson

from kubegc.api.resources import Catalog, ResourceInfo, Subresource
from kubegc.api.version import EffectiveVersion
from kubegc.registry import definitions as schema
from kubegc.registry.fieldmanager import has_strategic_schema

CrdSchemas = Mapping[tuple[str, str, str], Mapping[str, Any]]

#: ``info.version`` when no emulated version is given: the binary's (``1.33``)
KUBERNETES_VERSION = EffectiveVersion().openapi_info_version
_META = "io.k8s.apimachinery.pkg.apis.meta.v1"
_STATUS, _DELETE_OPTIONS, _PATCH = f"{_META}.Status", f"{_META}.DeleteOptions", f"{_META}.Patch"
_OBJECT_META, _LIST_META = f"{_META}.ObjectMeta", f"{_META}.ListMeta"
_SCALE = "io.k8s.api.autoscaling.v1.Scale"

_PATCH_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                "application/apply-patch+yaml")
_BUILTIN_PATCH_TYPES = (*_PATCH_TYPES[:2], "application/strategic-merge-patch+json",
                        _PATCH_TYPES[2])


def group_version_path(group: str, version: str) -> str:
    """The index key and URL tail of a group-version: ``api/v1``, ``apis/apps/v1``."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def parse_group_version_path(path: str) -> tuple[str, str] | None:
    """``api/v1`` → ``("", "v1")``; ``apis/apps/v1`` → ``("apps", "v1")``; else None."""
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[0] == "api":
        return "", parts[1]
    if len(parts) == 3 and parts[0] == "apis" and parts[1]:
        return parts[1], parts[2]
    return None


def document_hash(document: Mapping[str, Any]) -> str:
    """Uppercase hex sha512 of the document's canonical (key-sorted) JSON."""
    return hashlib.sha512(orjson.dumps(document, option=orjson.OPT_SORT_KEYS)).hexdigest().upper()


def openapi_v3_index(catalog: Catalog, crd_schemas: CrdSchemas | None = None, *,
                     kubernetes_version: str = KUBERNETES_VERSION) -> dict[str, Any]:
    """``GET /openapi/v3``: one ``serverRelativeURL`` (with content hash) per group-version."""
    paths: dict[str, Any] = {}
    for group, versions in catalog.groups():
        for version in versions:
            document = openapi_v3_group_version(catalog, group, version, crd_schemas,
                                                kubernetes_version=kubernetes_version)
            if document is not None:
                key = group_version_path(group, version)
                url = f"/openapi/v3/{key}?hash={document_hash(document)}"
                paths[key] = {"serverRelativeURL": url}
    return {"paths": paths}


def openapi_v3_group_version(
    catalog: Catalog, group: str, version: str, crd_schemas: CrdSchemas | None = None,
    *, kubernetes_version: str = KUBERNETES_VERSION,
) -> dict[str, Any] | None:
    """``GET /openapi/v3/<api|apis/g>/<v>``, or None (404) when nothing is served there.

    ``crd_schemas`` maps ``(group, version, kind)`` of a custom resource to its CRD's
    ``schema.openAPIV3Schema``; a custom resource without one gets a schema that accepts
    any fields.
    """
    infos = catalog.in_group_version(group, version)
    if not infos:
        return None
    schemas: dict[str, Any] = {}  # custom resources' own schemas, then built-in ones
    paths: dict[str, Any] = {}
    for info in infos:
        paths.update(_resource_paths(info, version, _Kinds.of(info, version, crd_schemas, schemas)))
    defs = schema.definitions()
    names = schema.closure([*schema.referenced(paths), *schema.referenced(schemas)])
    schemas.update((name, defs[name]) for name in names)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": kubernetes_version},
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas.items()))},
    }


class _Kinds:
    """Schema names of one resource in one version: object, list and each subresource."""

    def __init__(self, info: ResourceInfo, version: str, obj: str, lst: str, *,
                 strategic: bool) -> None:
        self.info, self.version, self.obj, self.lst = info, version, obj, lst
        self.strategic = strategic  # offer strategic merge patch: upstream schema known

    @classmethod
    def of(cls, info: ResourceInfo, version: str, crd_schemas: CrdSchemas | None,
           schemas: dict[str, Any]) -> _Kinds:
        """Names the schemas; adds the schemas of kinds without an upstream definition
        (custom resources, kubegc's own kinds) to ``schemas``."""
        obj = schema.definition_name(info.group, version, info.kind)
        if info.custom or obj is None:
            obj = custom_schema_name(info.group, version, info.kind)
            lst = custom_schema_name(info.group, version, info.list_kind_name)
            raw = (crd_schemas or {}).get((info.group, version, info.kind))
            schemas[obj] = custom_resource_schema(info, version, raw if info.custom else None)
            schemas[lst] = _custom_list_schema(info, version, obj)
            return cls(info, version, obj, lst, strategic=False)
        lst = schema.definition_name(info.group, version, info.list_kind_name) or ""
        return cls(info, version, obj, lst, strategic=has_strategic_schema(info.group, info.kind))

    def gvk(self, sub: Subresource | None = None) -> dict[str, str]:
        group, version, kind = self.info.group, self.version, self.info.kind
        if sub is not None and sub.kind:
            group = group if sub.group is None else sub.group
            version, kind = sub.version or version, sub.kind
        return {"group": group, "kind": kind, "version": version}

    def response(self, sub: Subresource | None = None) -> str:
        """The schema of a subresource's body: its own kind's (Scale, TokenRequest,
        Binding) or the resource's."""
        if sub is not None and self.gvk(sub)["kind"] == "Scale":
            return _SCALE
        if sub is not None and sub.kind:
            gvk = self.gvk(sub)
            return schema.definition_name(gvk["group"], gvk["version"], gvk["kind"]) or self.obj
        return self.obj


def custom_schema_name(group: str, version: str, kind: str) -> str:
    """Upstream's name for a custom resource schema: ``example.com`` v1 Widget →
    ``com.example.v1.Widget``."""
    return ".".join([*reversed(group.split(".")), version, kind])


def custom_resource_schema(
    info: ResourceInfo, version: str, openapi_v3_schema: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A CRD version's ``openAPIV3Schema`` as published: with apiVersion, kind, metadata and
    ``x-kubernetes-group-version-kind`` added (the input is not modified)."""
    out: dict[str, Any] = dict(openapi_v3_schema or {"x-kubernetes-preserve-unknown-fields": True})
    out.setdefault("type", "object")
    status = schema.definitions()[_STATUS]["properties"]
    out["properties"] = {
        **(out.get("properties") or {}),
        "apiVersion": status["apiVersion"],
        "kind": status["kind"],
        "metadata": {"allOf": [schema.ref(_OBJECT_META)],
                     "description": "Standard object's metadata."},
    }
    out["x-kubernetes-group-version-kind"] = [
        {"group": info.group, "kind": info.kind, "version": version},
    ]
    return out


def _custom_list_schema(info: ResourceInfo, version: str, item: str) -> dict[str, Any]:
    status = schema.definitions()[_STATUS]["properties"]
    kind = info.list_kind_name
    return {
        "type": "object",
        "description": f"{kind} is a list of {info.kind}",
        "properties": {
            "apiVersion": status["apiVersion"],
            "items": {"type": "array", "items": schema.ref(item),
                      "description": f"List of {info.resource}."},
            "kind": status["kind"],
            "metadata": {"allOf": [schema.ref(_LIST_META)],
                         "description": "Standard list metadata."},
        },
        "required": ["items"],
        "x-kubernetes-group-version-kind": [
            {"group": info.group, "kind": kind, "version": version},
        ],
    }


# -- paths -----------------------------------------------------------------------------------

_ACTIONS = {"get": "get", "update": "put", "patch": "patch", "delete": "delete"}


def _resource_paths(info: ResourceInfo, version: str, kinds: _Kinds) -> dict[str, Any]:
    prefix = "/" + group_version_path(info.group, version)
    scope = "/namespaces/{namespace}" if info.namespaced else ""
    collection = f"{prefix}{scope}/{info.resource}"
    item = f"{collection}/{{name}}"
    ops = _Ops(info, version, kinds)
    paths: dict[str, Any] = {}
    collection_ops = {
        "get": ops.list() if info.supports("list") else None,
        "post": ops.create() if info.supports("create") else None,
        "delete": ops.delete_collection() if info.supports("deletecollection") else None,
    }
    _add(paths, collection, collection_ops, namespaced=info.namespaced, named=False)
    if info.namespaced and info.supports("list"):
        _add(paths, f"{prefix}/{info.resource}", {"get": ops.list(all_namespaces=True)},
             namespaced=False, named=False)
    item_ops = {method: ops.item(verb) for verb, method in _ACTIONS.items() if info.supports(verb)}
    _add(paths, item, item_ops, namespaced=info.namespaced, named=True)
    for sub in info.subresources:
        sub_ops = {method: ops.item(verb, sub) for verb, method in _ACTIONS.items()
                   if verb in sub.verbs}
        if "create" in sub.verbs:  # pods/binding, serviceaccounts/token
            sub_ops["post"] = ops.item("create", sub)
        _add(paths, f"{item}/{sub.name}", sub_ops, namespaced=info.namespaced, named=True)
    return paths


def _add(paths: dict[str, Any], path: str, ops: Mapping[str, Any], *, namespaced: bool,
         named: bool) -> None:
    present = {method: op for method, op in ops.items() if op is not None}
    if not present:
        return
    params = [_param("pretty", "If 'true', then the output is pretty printed.")]
    if named:
        params.insert(0, _path_param("name", "name of the object"))
    if namespaced:
        params.insert(int(named), _path_param("namespace", "object name and auth scope"))
    paths[path] = {**present, "parameters": params}


def _path_param(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "string", "uniqueItems": True}}


def _param(name: str, description: str, type_: str = "string") -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description,
            "schema": {"type": type_, "uniqueItems": True}}


_DRY_RUN = _param("dryRun", "When present, modifications are not persisted. Valid value: All")
_FIELD_MANAGER = _param("fieldManager", "Name of the actor or entity making the change.")
_FIELD_VALIDATION = _param(
    "fieldValidation",
    "How the server handles unknown or duplicate fields in the request: Ignore, Warn or Strict.")
_WRITE_PARAMS = (_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION)
_FORCE = _param("force", "Force an apply request, taking over conflicting fields.", "boolean")
_LIST_PARAMS = tuple(
    _param(name, description, type_) for name, description, type_ in (
        ("allowWatchBookmarks", "Request watch events with type BOOKMARK.", "boolean"),
        ("continue", "The continue token of a previous paginated list call.", "string"),
        ("fieldSelector", "Restrict the returned objects by their fields.", "string"),
        ("labelSelector", "Restrict the returned objects by their labels.", "string"),
        ("limit", "Maximum number of objects to return in one page.", "integer"),
        ("resourceVersion", "The resource version the list or watch starts from.", "string"),
        ("resourceVersionMatch", "How resourceVersion applies to list calls.", "string"),
        ("sendInitialEvents", "Start a watch with the current state as events.", "boolean"),
        ("timeoutSeconds", "Timeout for the list/watch call.", "integer"),
        ("watch", "Watch for changes instead of listing.", "boolean"),
    )
)
_DELETE_PARAMS = tuple(
    _param(name, description, type_) for name, description, type_ in (
        ("dryRun", "When present, modifications are not persisted. Valid value: All", "string"),
        ("gracePeriodSeconds", "Duration in seconds before the object is deleted.", "integer"),
        ("orphanDependents", "Deprecated: use propagationPolicy.", "boolean"),
        ("propagationPolicy", "Garbage collection policy: Orphan, Background or Foreground.",
         "string"),
    )
)
_LOG_PARAMS = tuple(
    _param(name, description, type_) for name, description, type_ in (
        ("container", "The container whose logs to stream.", "string"),
        ("follow", "Follow the log stream of the pod.", "boolean"),
        ("previous", "Return the logs of the previous terminated container.", "boolean"),
        ("tailLines", "Number of lines from the end of the log to show.", "integer"),
        ("timestamps", "Prefix every line with an RFC3339 timestamp.", "boolean"),
    )
)


class _Ops:
    """Builds the operations of one resource in one group-version."""

    def __init__(self, info: ResourceInfo, version: str, kinds: _Kinds) -> None:
        self.info, self.kinds = info, kinds
        word = "".join(p.capitalize() for p in info.group.removesuffix(".k8s.io").split("."))
        self.op_prefix = f"{word or 'Core'}{version.capitalize()}"  # readCoreV1NamespacedPod
        self.tag = f"{(word or 'Core').lower()}_{version}"  # core_v1

    def _op(self, action: str, op_id: str, description: str, *, gvk: dict[str, str],
            params: tuple[dict[str, Any], ...], responses: dict[str, Any],
            body: dict[str, Any] | None = None) -> dict[str, Any]:
        op: dict[str, Any] = {
            "tags": [self.tag],
            "description": description, "operationId": op_id,
            "parameters": list(params), "responses": responses,
            "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk,
        }
        if body is not None:
            op["requestBody"] = body
        return op

    def _name(self, verb: str, sub: Subresource | None = None, *, scope: bool = True) -> str:
        namespaced = "Namespaced" if self.info.namespaced and scope else ""
        suffix = sub.name.capitalize() if sub is not None else ""
        return f"{verb}{self.op_prefix}{namespaced}{self.info.kind}{suffix}"

    def list(self, *, all_namespaces: bool = False) -> dict[str, Any]:
        op_id = self._name("list", scope=not all_namespaces)
        return self._op("list", op_id + ("ForAllNamespaces" if all_namespaces else ""),
                        f"list or watch objects of kind {self.info.kind}",
                        gvk=self.kinds.gvk(), params=_LIST_PARAMS,
                        responses=_ok(self.kinds.lst))

    def create(self) -> dict[str, Any]:
        return self._op("post", self._name("create"), f"create a {self.info.kind}",
                        gvk=self.kinds.gvk(), params=_WRITE_PARAMS,
                        responses=_ok(self.kinds.obj, "201", "202"),
                        body=_body({"*/*": self.kinds.obj}))

    def delete_collection(self) -> dict[str, Any]:
        return self._op("deletecollection", self._name("deletecollection"),
                        f"delete collection of {self.info.kind}", gvk=self.kinds.gvk(),
                        params=_LIST_PARAMS + _DELETE_PARAMS, responses=_ok(_STATUS),
                        body=_body({"*/*": _DELETE_OPTIONS}))

    def item(self, verb: str, sub: Subresource | None = None) -> dict[str, Any]:
        gvk, target = self.kinds.gvk(sub), self.kinds.response(sub)
        what = f"{sub.name} of the specified {self.info.kind}" if sub else (
            f"the specified {self.info.kind}")
        if sub is not None and sub.name == "log":
            return self._op("get", self._name("read", sub), "read log of the specified Pod",
                            gvk=gvk, params=_LOG_PARAMS, responses=_text_ok())
        if verb == "get":
            return self._op("get", self._name("read", sub), f"read {what}", gvk=gvk, params=(),
                            responses=_ok(target))
        if verb == "update":
            return self._op("put", self._name("replace", sub), f"replace {what}", gvk=gvk,
                            params=_WRITE_PARAMS, responses=_ok(target, "201"),
                            body=_body({"*/*": target}))
        if verb == "create":
            return self._op("post", self._name("create", sub),
                            f"create {sub.name if sub else ''} of a {self.info.kind}", gvk=gvk,
                            params=_WRITE_PARAMS, responses=_ok(target, "201", "202"),
                            body=_body({"*/*": target}))
        if verb == "patch":
            types = _BUILTIN_PATCH_TYPES if self.kinds.strategic else _PATCH_TYPES
            return self._op("patch", self._name("patch", sub), f"partially update {what}",
                            gvk=gvk, params=(*_WRITE_PARAMS, _FORCE),
                            responses=_ok(target, "201"),
                            body=_body(dict.fromkeys(types, _PATCH)))
        return self._op("delete", self._name("delete", sub), f"delete {what}", gvk=gvk,
                        params=_DELETE_PARAMS, responses=_ok(_STATUS, "202"),
                        body=_body({"*/*": _DELETE_OPTIONS}))


def _schema_ref(name: str) -> dict[str, Any]:
    return schema.ref(name) if name else {"type": "object"}


def _body(content: Mapping[str, str]) -> dict[str, Any]:
    return {"content": {ct: {"schema": _schema_ref(name)} for ct, name in content.items()},
            "required": True}


_CODES = {"200": "OK", "201": "Created", "202": "Accepted"}


def _ok(name: str, *codes: str) -> dict[str, Any]:
    content = {"application/json": {"schema": _schema_ref(name)},
               "application/yaml": {"schema": _schema_ref(name)}}
    responses: dict[str, Any] = {
        code: {"description": _CODES[code], "content": content} for code in ("200", *codes)
    }
    responses["401"] = {"description": "Unauthorized"}
    return responses


def _text_ok() -> dict[str, Any]:
    return {"200": {"description": "OK",
                    "content": {"text/plain": {"schema": {"type": "string"}}}},
            "401": {"description": "Unauthorized"}}
