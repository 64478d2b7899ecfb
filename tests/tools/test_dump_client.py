"""DumpClient (src/kubegc/client/dump.py): a read-only Client over kubectl dump files.

(Lives here because the tools' engineer owns it; its natural home is tests/client/.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from kubegc.api.errors import StatusError
from kubegc.api.resources import GroupVersionResource
from kubegc.client import dump_items
from kubegc.client.dump import DumpClient, guess_plural, parse_dump, read_dump
from kubegc.client.dump_items import list_items
from kubegc.client.interface import DeleteOptions, ListOptions

CM = GroupVersionResource("", "v1", "configmaps")
PODS = GroupVersionResource("", "v1", "pods")
WIDGETS = GroupVersionResource("example.com", "v1", "widgets")
CLUSTERWIDGETS = GroupVersionResource("example.com", "v1", "clusterwidgets")


def cm(name: str, ns: str = "a", **labels: str) -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": ns, "uid": f"uid-{ns}-{name}",
                         "labels": labels}}


LIST = {"apiVersion": "v1", "kind": "List", "items": [cm("one"), cm("two", "b")]}
TYPED = {"apiVersion": "v1", "kind": "PodList",
         "items": [{"metadata": {"name": "p", "namespace": "a"}, "spec": {}}]}


@pytest.mark.parametrize(("text", "names"), [
    pytest.param(json.dumps(LIST), ["one", "two"], id="json-list"),
    pytest.param(json.dumps(TYPED), ["p"], id="typed-list-items-without-kind"),
    pytest.param(json.dumps(cm("one")) + "\n" + json.dumps(LIST), ["one", "one", "two"],
                 id="several-json-documents"),
    pytest.param("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y, namespace: a}\n---\n"
                 "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n"
                 "  metadata: {name: s, namespace: a}\n", ["y", "s"], id="yaml-stream"),
    pytest.param(json.dumps([cm("x")]), ["x"], id="json-array"),
])
def test_parse_dump_flattens_lists(text: str, names: list[str]) -> None:
    assert [o["metadata"]["name"] for o in parse_dump(text)] == names
    # a file's bytes (``from_file``) read as its text
    assert [o["metadata"]["name"] for o in parse_dump(text.encode())] == names


def test_parse_dump_shares_the_strings_objects_repeat() -> None:
    """Issue 27: a million decoded objects held their own "v1", namespace, label values
    and owner's coordinates; the dump's objects share them (``api.interning``)."""
    ref = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1",
           "uid": "uid-of-the-owner-1234"}
    items = [{**cm(name, "team-a", app="web-frontend"),
              "metadata": {**cm(name, "team-a", app="web-frontend")["metadata"],
                           "ownerReferences": [dict(ref)]}} for name in ("one", "two")]
    dump = json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode()
    one, two = parse_dump(dump)
    for path in (("apiVersion",), ("kind",), ("metadata", "namespace"),
                 ("metadata", "labels", "app"), ("metadata", "ownerReferences", 0, "uid"),
                 ("metadata", "ownerReferences", 0, "name")):
        a, b = one, two
        for step in path:
            a, b = a[step], b[step]
        assert a == b and a is b, path
    assert one["metadata"]["uid"] != two["metadata"]["uid"]


def test_a_dump_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dump.yaml"
    path.write_bytes(b"kind: \xff\xfe\n")
    with pytest.raises(ValueError):
        DumpClient.from_file(path)


@pytest.mark.parametrize("text", [
    pytest.param("---\n# nothing\n", id="empty-yaml"),
    pytest.param("", id="empty"),
    pytest.param("hello world", id="a-word"),
    pytest.param("{}", id="empty-object"),
])
def test_parse_dump_refuses_what_holds_no_kubernetes_object(text: str) -> None:
    with pytest.raises(ValueError, match="not a Kubernetes dump"):
        parse_dump(text)


def test_parse_dump_accepts_an_empty_list() -> None:
    assert parse_dump('{"apiVersion": "v1", "kind": "List", "items": []}') == []


def test_typed_list_items_get_kind_and_api_version() -> None:
    (pod,) = parse_dump(json.dumps(TYPED))
    assert (pod["apiVersion"], pod["kind"]) == ("v1", "Pod")


def test_garbage_is_rejected() -> None:
    with pytest.raises(ValueError, match="not a JSON dump"):
        parse_dump("{not json")


async def test_get_and_list_filter_like_a_server() -> None:
    c = DumpClient([cm("one", app="web"), cm("two", "b", app="db"), cm("three", app="db")])
    assert (await c.get(CM, "two", namespace="b"))["metadata"]["uid"] == "uid-b-two"
    listed = await c.list(CM, namespace="a")
    assert [i["metadata"]["name"] for i in listed["items"]] == ["one", "three"]
    assert listed["kind"] == "ConfigMapList"
    by_label = await c.list(CM, options=ListOptions(label_selector="app=db"))
    assert [i["metadata"]["name"] for i in by_label["items"]] == ["two", "three"]
    by_field = await c.list(CM, options=ListOptions(field_selector="metadata.name=three"))
    assert [i["metadata"]["name"] for i in by_field["items"]] == ["three"]


async def test_list_pages_with_continue() -> None:
    c = DumpClient([cm(f"c{i}") for i in range(5)])
    first = await c.list(CM, options=ListOptions(limit=2))
    assert len(first["items"]) == 2 and first["metadata"]["remainingItemCount"] == 3
    rest = await c.list(CM, options=ListOptions(limit=10, continue_=first["metadata"]["continue"]))
    assert [i["metadata"]["name"] for i in rest["items"]] == ["c2", "c3", "c4"]
    assert "continue" not in rest["metadata"]


async def test_returned_objects_are_copies() -> None:
    c = DumpClient([cm("one")])
    got = await c.get(CM, "one", namespace="a")
    got["metadata"]["name"] = "changed"
    assert (await c.get(CM, "one", namespace="a"))["metadata"]["name"] == "one"


async def test_missing_object_and_unknown_resource_are_404() -> None:
    c = DumpClient([cm("one")])
    with pytest.raises(StatusError) as e:
        await c.get(CM, "nope", namespace="a")
    assert (e.value.code, e.value.message) == (404, 'configmaps "nope" not found')
    with pytest.raises(StatusError) as e:
        await c.list(GroupVersionResource("nope.io", "v1", "things"))
    assert e.value.message == "the server could not find the requested resource"


@pytest.mark.parametrize("call", [
    pytest.param(lambda c: c.create(CM, cm("x"), namespace="a"), id="create"),
    pytest.param(lambda c: c.update(CM, cm("one"), namespace="a"), id="update"),
    pytest.param(lambda c: c.patch(CM, "one", {}, namespace="a"), id="patch"),
    pytest.param(lambda c: c.delete(CM, "one", namespace="a", options=DeleteOptions()),
                 id="delete"),
])
async def test_writes_are_refused_with_405(call: object) -> None:
    c = DumpClient([cm("one")])
    with pytest.raises(StatusError) as e:
        await call(c)  # type: ignore[operator]
    assert e.value.code == 405 and e.value.reason == "MethodNotAllowed"


async def test_discovery_knows_builtins_crds_and_guesses() -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1", "served": True, "storage": True}]}}
    policy = {"apiVersion": "example.com/v1", "kind": "ClusterWidget",
              "metadata": {"name": "cw"}}
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "r", "namespace": "a"}}
    c = DumpClient([crd, policy, role])
    found = {(r.group, r.resource): r for r in await c.discover()}
    assert found[("example.com", "widgets")].namespaced
    assert not found[("example.com", "clusterwidgets")].namespaced  # guessed: no namespace
    assert found[("rbac.authorization.k8s.io", "roles")].kind == "Role"
    assert found[("apps", "deployments")].verbs == ("get", "list", "watch")
    assert (await c.get(CLUSTERWIDGETS, "cw"))["kind"] == "ClusterWidget"


@pytest.mark.parametrize(("kind", "plural"), [
    ("Widget", "widgets"), ("Policy", "policies"), ("Ingress", "ingresses"),
    ("Gateway", "gateways"), ("Box", "boxes"), ("Match", "matches"),
])
def test_guess_plural(kind: str, plural: str) -> None:
    assert guess_plural(kind) == plural


async def test_watch_yields_nothing_and_blocks_until_cancelled() -> None:
    c = DumpClient([cm("one")])
    events = []

    async def consume() -> None:
        async for event in c.watch(CM):
            events.append(event)

    task = asyncio.create_task(consume())
    done, _ = await asyncio.wait({task}, timeout=0.05)
    assert not done and events == []
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_discovery_of_a_dump_carries_short_names() -> None:
    """Tools resolve ``deploy/web`` or ``cm/x`` on a dump as on a cluster."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.qa.io"},
           "spec": {"group": "qa.io", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
                    "versions": [{"name": "v1", "served": True, "storage": True}]}}
    client = DumpClient([crd])
    short = {r.resource: r.short_names for r in await client.discover()}
    assert "deploy" in short["deployments"] and "cm" in short["configmaps"]
    assert short["widgets"] == ("wd",)


NESTED = {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": [
    {**cm("one"), "data": {"tricky": "\n        },\n        {", "n": {"deep": [{}, {"x": 1}]}}},
    {"apiVersion": "v1", "kind": "List", "items": [cm("inner", "b")]},
    TYPED, cm("last", "c")]}


@pytest.mark.parametrize("indent", [1, 2, 4, 8])
def test_an_indented_list_decodes_an_item_at_a_time_as_a_whole(indent: int) -> None:
    """Issue 27: kubectl's indented List is decoded an item at a time (the doctor's peak
    memory); the objects are those of decoding the whole file."""
    data = json.dumps(NESTED, indent=indent).encode()
    assert list_items(data) is not None
    assert parse_dump(data) == parse_dump(json.dumps(NESTED))
    assert [o["metadata"]["name"] for o in parse_dump(data)] == ["one", "inner", "p", "last"]


@pytest.mark.parametrize("data", [
    pytest.param(json.dumps(NESTED).encode(), id="compact"),
    pytest.param(json.dumps(NESTED, separators=(",", ":")).encode(), id="compact-no-spaces"),
    pytest.param(json.dumps({**NESTED, "items": []}, indent=4).encode(), id="empty"),
    pytest.param(json.dumps(NESTED, indent=4).encode().replace(b'\n        }', b'\n       }', 1),
                 id="indented-unevenly"),
])
def test_other_list_shapes_decode_a_chunk_at_a_time_as_a_whole(data: bytes) -> None:
    """Issue 27: a compact List too (``make_dump.py``, ``json.dumps``) is decoded a chunk
    at a time, whatever its separators or indentation."""
    assert list_items(data) is not None
    assert parse_dump(data) == parse_dump(data.decode())


@pytest.mark.parametrize("data", [
    pytest.param(json.dumps(cm("x"), indent=4).encode(), id="one-object"),
    pytest.param(json.dumps(NESTED).encode()[:-5], id="truncated"),
    pytest.param(json.dumps(NESTED).encode() + json.dumps(NESTED).encode(), id="two-lists"),
    pytest.param(json.dumps({"kind": "X", "spec": {"items": [1]}, "items": []}).encode(),
                 id="items-of-something-inside"),
])
def test_what_is_not_one_list_is_decoded_whole(data: bytes) -> None:
    assert list_items(data) is None


def _owned(i: int) -> dict[str, object]:
    """A Pod whose lists of objects (two ownerReferences, conditions) hold the same
    separator as the List's items, and whose strings are not all ASCII."""
    refs = [{"apiVersion": "v1", "kind": "ConfigMap", "name": f"o{j}", "uid": f"u{j}"}
            for j in range(i % 3)]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"p{i}-é€", "namespace": "a", "ownerReferences": refs},
            "status": {"conditions": [{"type": "Ready"}, {"type": "Initialized"}]},
            "spec": {"note": "},{\"apiVersion\": " * (i % 5)}}


@pytest.mark.parametrize("indent", [None, 2])
def test_chunks_end_after_whole_items(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                      indent: int | None) -> None:
    """A chunk's end is only ever after a whole item: where a compact List's separator
    belongs to a list inside an item, the items up to it are decoded one at a time."""
    monkeypatch.setattr(dump_items, "CHUNK", 2048)
    doc = {"apiVersion": "v1", "kind": "List", "items": [_owned(i) for i in range(300)],
           "metadata": {"resourceVersion": ""}}
    data = json.dumps(doc, indent=indent, ensure_ascii=False).encode()
    path = tmp_path / "dump.json"
    path.write_bytes(data)
    with path.open("rb") as file:
        assert dump_items.stream_list(file, each=lambda item: item) == json.loads(data)
    assert read_dump(path) == parse_dump(data.decode())
