"""The pure rule of OwnerReferencesPermissionEnforcement (after upstream's
gc_admission_test.go ``TestIsChangingOwnerReference`` and ``TestNewBlockingOwnerDeletionRefs``)
and ``records_asked``, which the doctor asks about before running the same ``validate``."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.api.auth import Attributes, UserInfo
from kubegc.authz.ownerreferences import (
    NoMapping,
    Operation,
    OwnerMapping,
    Verdict,
    WriteAttributes,
    is_changing_owner_reference,
    new_blocking_owner_deletion_refs,
    no_kind_match,
    parse_group_version,
    record_key,
    records_asked,
    validate,
)

USER = UserInfo("bob")


def ref(uid: str = "u1", **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": uid, **fields}


def resolve(group: str, version: str, kind: str) -> list[OwnerMapping]:
    if (group, version, kind) == ("apps", "v1", "Deployment"):
        return [OwnerMapping("apps", "v1", "deployments", True)]
    raise no_kind_match(group, version, kind)


@pytest.mark.parametrize(("new", "old", "changing"), [
    pytest.param([], None, False, id="create-without"),
    pytest.param([ref()], None, True, id="create-with"),
    pytest.param([ref()], [ref()], False, id="same"),
    pytest.param([ref()], [], True, id="added"),
    pytest.param([], [ref()], True, id="removed"),
    pytest.param([ref(controller=True)], [ref()], True, id="controller-set"),
    pytest.param([ref(controller=False)], [ref()], True, id="false-is-not-unset"),
    pytest.param([ref("a"), ref("b")], [ref("b"), ref("a")], True, id="reordered"),
    pytest.param([ref(extra="x")], [ref()], False, id="undecoded-fields-ignored"),
])
def test_is_changing_owner_reference(new: list[dict[str, Any]],
                                     old: list[dict[str, Any]] | None, changing: bool) -> None:
    assert is_changing_owner_reference(new, old) is changing


@pytest.mark.parametrize(("new", "old", "blocking"), [
    pytest.param([ref(blockOwnerDeletion=True)], None, ["u1"], id="create"),
    pytest.param([ref(blockOwnerDeletion=False)], None, [], id="create-not-blocking"),
    pytest.param([ref(blockOwnerDeletion=True)], [ref(blockOwnerDeletion=True)], [],
                 id="already-blocking"),
    pytest.param([ref(blockOwnerDeletion=True)], [ref()], ["u1"], id="from-unset"),
    pytest.param([ref(blockOwnerDeletion=True)], [ref(blockOwnerDeletion=False)], ["u1"],
                 id="from-false"),
    pytest.param([ref("a", blockOwnerDeletion=True), ref("b", blockOwnerDeletion=True)],
                 [ref("a", blockOwnerDeletion=True)], ["b"], id="new-uid"),
    pytest.param([ref(name="renamed", blockOwnerDeletion=True)],
                 [ref(blockOwnerDeletion=True)], [], id="same-uid-other-name"),
])
def test_new_blocking_owner_deletion_refs(new: list[dict[str, Any]],
                                          old: list[dict[str, Any]] | None,
                                          blocking: list[str]) -> None:
    assert [r["uid"] for r in new_blocking_owner_deletion_refs(new, old)] == blocking


def test_parse_group_version() -> None:
    assert parse_group_version("v1") == ("", "v1")
    assert parse_group_version("example.com/v1") == ("example.com", "v1")
    with pytest.raises(NoMapping, match=r"^unexpected GroupVersion string: a/b/c$"):
        parse_group_version("a/b/c")


def _write(new: list[dict[str, Any]], old: list[dict[str, Any]] | None) -> WriteAttributes:
    return WriteAttributes(user=USER, operation=Operation.CREATE if old is None else
                           Operation.UPDATE, namespace="shop", group="", version="v1",
                           resource="configmaps", name="c", new_refs=new, old_refs=old)


def test_records_asked_are_the_ones_validate_asks() -> None:
    write = _write([ref(blockOwnerDeletion=True),
                    ref("u2", kind="Widget", blockOwnerDeletion=True)], [])
    asked = records_asked(write, resolve)
    assert [(a.verb, a.api_group, a.resource, a.subresource, a.name) for a in asked] == [
        ("delete", "", "configmaps", "", "c"), ("update", "*", "*", "finalizers", "*"),
        ("update", "apps", "deployments", "finalizers", "web")]
    seen: list[Attributes] = []

    def allow_all_but(*denied: Attributes) -> Any:
        def authorize(attrs: Attributes) -> Verdict:
            seen.append(attrs)
            return Verdict(record_key(attrs) not in {record_key(d) for d in denied},
                           "RBAC: no", "<nil>")
        return authorize

    assert validate(write, allow_all_but(), resolve) is None  # finalizers of anything
    refusal = validate(write, allow_all_but(asked[1]), resolve)
    assert refusal is not None and refusal.record is None and refusal.ref is not None
    assert refusal.ref["kind"] == "Widget"
    assert refusal.message == (
        "cannot set blockOwnerDeletion in this case because cannot find RESTMapping for "
        'APIVersion apps/v1 Kind Widget: no matches for kind "Widget" in version "apps/v1"')
    assert {record_key(a) for a in seen} <= {record_key(a) for a in asked}
    refusal = validate(write, allow_all_but(asked[0]), resolve)
    assert refusal is not None and refusal.record == asked[0]
    assert refusal.message == ("cannot set an ownerRef on a resource you can't delete: "
                               "RBAC: no, <nil>")
    assert records_asked(_write([ref()], [ref()]), resolve) == []
