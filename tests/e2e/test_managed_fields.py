"""managedFields as upstream's field manager keeps them, through the real kubectl: a write
that changes only managedFields is a write (co-ownership, kubectl's client-side to
server-side apply migration, clearing them), and a write that changes nothing is none."""

from __future__ import annotations

import json
from typing import Any

from .conftest import Server


def _cm(server: Server, ns: str, name: str) -> dict[str, Any]:
    out = server.kubectl("get", "configmap", name, "-n", ns, "-o", "json",
                         "--show-managed-fields").stdout
    obj: dict[str, Any] = json.loads(out)
    return obj


def _managers(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(e["manager"], e["operation"]) for e in obj["metadata"].get("managedFields", [])]


def _manifest(name: str, value: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                       "data": {"a": value}})


def test_a_server_side_apply_of_the_same_value_makes_a_co_owner(server: Server, ns: str) -> None:
    server.kubectl("create", "configmap", "co", "--from-literal=a=1", "-n", ns)
    before = _cm(server, ns, "co")
    server.kubectl("apply", "--server-side", "--field-manager=me", "-f", "-", "-n", ns,
                   input=_manifest("co", "1"))
    after = _cm(server, ns, "co")
    assert _managers(after) == [("me", "Apply"), ("kubectl-create", "Update")]
    assert after["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
    # and a repeated apply that changes nothing is no write at all
    server.kubectl("apply", "--server-side", "--field-manager=me", "-f", "-", "-n", ns,
                   input=_manifest("co", "1"))
    again = _cm(server, ns, "co")
    assert again["metadata"]["resourceVersion"] == after["metadata"]["resourceVersion"]


def test_client_side_apply_migrates_to_server_side_apply(server: Server, ns: str) -> None:
    """kubectl (1.26+) moves the client-side apply manager's fields to its server-side
    apply manager with a JSON patch of managedFields; the next server-side apply that
    changes the value then has no conflict."""
    server.kubectl("apply", "-f", "-", "-n", ns, input=_manifest("mig", "1"))
    server.kubectl("apply", "--server-side", "-f", "-", "-n", ns, input=_manifest("mig", "1"))
    migrated = _cm(server, ns, "mig")
    assert ("kubectl-client-side-apply", "Update") not in _managers(migrated)
    assert ("kubectl", "Apply") in _managers(migrated)
    server.kubectl("apply", "--server-side", "-f", "-", "-n", ns, input=_manifest("mig", "3"))
    assert _cm(server, ns, "mig")["data"] == {"a": "3"}


def test_managed_fields_can_be_cleared_and_an_unchanged_put_writes_nothing(
        server: Server, ns: str) -> None:
    server.kubectl("create", "configmap", "mf", "--from-literal=a=1", "-n", ns)
    read = _cm(server, ns, "mf")
    server.kubectl("replace", "-f", "-", "-n", ns, input=json.dumps(read))
    assert _cm(server, ns, "mf")["metadata"]["resourceVersion"] == read["metadata"][
        "resourceVersion"]
    server.kubectl("patch", "configmap", "mf", "-n", ns, "--type=json", "-p",
                   '[{"op":"replace","path":"/metadata/managedFields","value":[{}]}]')
    cleared = _cm(server, ns, "mf")
    assert "managedFields" not in cleared["metadata"]
    assert cleared["metadata"]["resourceVersion"] != read["metadata"]["resourceVersion"]


def test_a_create_owns_what_the_request_set_not_what_prepare_for_create_added(
        server: Server, ns: str) -> None:
    """As upstream's create handler: managedFields come before PrepareForCreate, so a
    Namespace's finalizer and phase and a Pod's status are nobody's; defaults are the
    creator's (the namespace name label is one)."""
    name = f"{ns}-mf"
    server.kubectl("create", "namespace", name)
    try:
        got = json.loads(server.kubectl("get", "namespace", name, "-o", "json",
                                        "--show-managed-fields").stdout)
        assert got["status"]["phase"] == "Active" and got["spec"]["finalizers"]
        [entry] = got["metadata"]["managedFields"]
        assert (entry["manager"], entry["operation"]) == ("kubectl-create", "Update")
        assert entry["fieldsV1"] == {"f:metadata": {"f:labels": {
            ".": {}, "f:kubernetes.io/metadata.name": {}}}}
    finally:
        server.kubectl("delete", "namespace", name, "--wait=false")
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
    server.kubectl("create", "-f", "-", "-n", ns, input=json.dumps(pod))
    got = json.loads(server.kubectl("get", "pod", "p", "-n", ns, "-o", "json",
                                    "--show-managed-fields").stdout)
    creator = [e for e in got["metadata"]["managedFields"] if e["manager"] == "kubectl-create"]
    assert creator and "f:status" not in creator[0]["fieldsV1"]
    assert "f:restartPolicy" in creator[0]["fieldsV1"]["f:spec"]  # a default
