"""pkg/controller/history's rules (controller_history_test.go's cases, in kubegc's words):
names, hashes, ordering, equality, the template a revision puts back, and creation that
steps over a name taken by another revision (a hash collision)."""

from __future__ import annotations

from kubegc.api.clock import ManualClock
from kubegc.api.types import Obj
from kubegc.client.cache import NAMESPACE_INDEX, SharedInformer, meta_namespace_index_func
from kubegc.client.fake import FakeClient
from kubegc.controllers.history import (
    CONTROLLER_REVISION_HASH_LABEL,
    CONTROLLER_REVISIONS,
    ControllerHistory,
    apply_revision,
    controller_revision_name,
    equal_revision,
    find_equal_revisions,
    hash_controller_revision,
    new_controller_revision,
    sort_controller_revisions,
    template_patch,
)

PARENT: Obj = {"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "web", "namespace": "ns", "uid": "u-web"},
               "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                                     "spec": {"containers": [{"name": "c",
                                                              "image": "nginx"}]}}}}


def revision(image: str, number: int, collisions: int = 0) -> Obj:
    parent = apply_revision(PARENT, {"data": {"spec": {"template": {
        "metadata": {"labels": {"app": "web"}},
        "spec": {"containers": [{"name": "c", "image": image}]}}}}})
    return new_controller_revision(parent, api_version="apps/v1", kind="StatefulSet",
                                   template_labels={"app": "web"},
                                   raw=template_patch(parent), revision=number,
                                   collision_count=collisions)


def test_a_revision_is_named_and_labelled_by_the_hash_of_its_data() -> None:
    cr = revision("nginx", 1)
    hash_ = hash_controller_revision(template_patch(PARENT), 0)
    assert cr["metadata"]["name"] == f"web-{hash_}"
    assert cr["metadata"]["labels"] == {"app": "web", CONTROLLER_REVISION_HASH_LABEL: hash_}
    assert cr["metadata"]["ownerReferences"][0]["uid"] == "u-web"
    assert cr["data"]["spec"]["template"]["$patch"] == "replace"
    assert controller_revision_name("x" * 300, "h") == "x" * 223 + "-h"
    assert revision("nginx", 1, collisions=1)["metadata"]["name"] != cr["metadata"]["name"]


def test_revisions_sort_by_number_then_creation_then_name() -> None:
    a, b, c = revision("a", 2), revision("b", 1), revision("c", 2)
    a["metadata"].update(name="z", creationTimestamp="2026-01-01T00:00:02Z")
    c["metadata"].update(name="y", creationTimestamp="2026-01-01T00:00:01Z")
    assert [r["metadata"]["name"] for r in sort_controller_revisions([a, b, c])] == [
        b["metadata"]["name"], "y", "z"]


def test_equal_revisions_hold_the_same_template() -> None:
    one, again, other = revision("nginx", 1), revision("nginx", 5), revision("nginx:2", 2)
    assert equal_revision(one, again) and not equal_revision(one, other)
    assert equal_revision(None, None) and not equal_revision(one, None)
    assert find_equal_revisions([one, other, again], one) == [one, again]
    restored = apply_revision({**PARENT, "spec": {"replicas": 3, "template": {}}}, other)
    assert restored["spec"]["replicas"] == 3
    assert restored["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:2"
    assert "$patch" not in restored["spec"]["template"]


async def test_creation_steps_over_a_name_taken_by_other_data() -> None:
    client = FakeClient()
    wanted = revision("nginx", 1)
    squatter = revision("nginx:other", 7)
    squatter["metadata"]["name"] = wanted["metadata"]["name"]
    client.add_object(CONTROLLER_REVISIONS, squatter)
    informer = SharedInformer(client, CONTROLLER_REVISIONS, clock=ManualClock())
    informer.indexer.add_indexers({NAMESPACE_INDEX: meta_namespace_index_func})
    history = ControllerHistory(client, informer)
    created = await history.create_controller_revision(PARENT, wanted, 0)
    assert created.collision_count == 1
    assert created.revision["metadata"]["name"] == "web-" + hash_controller_revision(
        template_patch(PARENT), 1)
    again = await history.create_controller_revision(PARENT, wanted, 1)
    assert again.revision["metadata"]["uid"] == created.revision["metadata"]["uid"]
