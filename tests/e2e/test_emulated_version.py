"""``kubegc serve --emulated-version`` and ``--feature-gates`` with the real kubectl: what
``/version`` reports, and the namespace controller's order (``OrderedNamespaceDeletion``:
off by default at 1.30-1.32, on from 1.33; KEP-5080).

The namespace holds a pod kept by a finalizer and a ConfigMap. With the gate on, the
namespace controller deletes the pod and waits for it to be gone before touching the
ConfigMap; with it off, both are deleted in the same pass. Releasing the pod then lets the
namespace go either way. ``kubegc plan`` predicts the same beforehand: it reads the
server's ``/version`` and simulates that version's order (the gate flipped by
``--feature-gates`` is not visible through ``/version``: those cases plan the version's
default).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.conftest import Server, eventually, start_server, stop_server
from tests.e2e.test_volumes import deleted

HOLD = "example.com/hold"

CASES = {
    "1.32": ("--emulated-version", "1.32"),
    "1.33": ("--emulated-version", "1.33"),
    "1.33-gate-off": ("--emulated-version", "kube=1.33",
                      "--feature-gates", "OrderedNamespaceDeletion=false"),
    "1.32-gate-on": ("--emulated-version", "1.32",
                     "--feature-gates", "OrderedNamespaceDeletion=true"),
}
#: whether pods go first in each case
ORDERED = {"1.32": False, "1.33": True, "1.33-gate-off": False, "1.32-gate-on": True}


@pytest.fixture(scope="module", params=list(CASES))
def case(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
         ) -> Iterator[tuple[str, Server]]:
    server = start_server(tmp_path_factory.mktemp("emulated"), *CASES[request.param])
    yield request.param, server
    stop_server(server)


def _manifest(ns: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": "held", "namespace": ns, "finalizers": [HOLD]},
         "spec": {"terminationGracePeriodSeconds": 0,
                  "containers": [{"name": "c", "image": "busybox"}]}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "settings", "namespace": ns}, "data": {"k": "v"}}]})


def test_version_reports_the_emulated_version(case: tuple[str, Server]) -> None:
    name, server = case
    out = json.loads(server.kubectl("version", "-o", "json").stdout)["serverVersion"]
    emulated = name.split("-")[0].split(".")[1]
    assert (out["major"], out["minor"], out["gitVersion"]) == ("1", "33", "v1.33.0+kubegc")
    assert (out["emulationMajor"], out["emulationMinor"]) == ("1", emulated)
    assert out["minCompatibilityMinor"] == str(int(emulated) - 1)


def test_namespace_deletion_order(case: tuple[str, Server]) -> None:
    name, server = case
    ns = f"order-{name.replace('.', '-')}"
    server.kubectl("apply", "-f", "-", input=_manifest(ns))
    eventually(lambda: server.kubectl("get", "pod", "held", "-n", ns, "-o",
                                      "jsonpath={.status.phase}").stdout == "Running",
               what="the pod running")
    planned = server.kubegc_json("plan", "delete", f"namespace/{ns}")
    assert planned["verdict"]["completes"] is False  # the pod's finalizer holds it
    if name in ("1.32", "1.33"):  # the version's default order, as planned
        assert ("ConfigMap/settings" in deleted(planned)) is not ORDERED[name], planned
    server.kubectl("delete", "namespace", ns, "--wait=false")
    # the pod is deleted and stays, held by its finalizer
    eventually(lambda: server.kubectl("get", "pod", "held", "-n", ns, "-o",
                                      "jsonpath={.metadata.deletionTimestamp}").stdout,
               what="the pod deleted")
    condition = eventually(lambda: _condition(server, ns, "NamespaceContentRemaining"),
                           what="NamespaceContentRemaining")
    assert "pods. has 1 resource instances" in condition["message"]
    if name in ("1.32", "1.33"):  # the doctor reads the order of the version too
        server.settle()
        doctor = server.kubegc_json("doctor")
        (finding,) = [f for f in doctor["findings"] if f["object"]["kind"] == "Namespace"
                      and f["object"]["name"] == ns]
        said = " ".join(finding["facts"])
        assert ("pods first: Kubernetes 1.33 deletes a namespace's pods first" in said) is (
            ORDERED[name]), finding
    if ORDERED[name]:
        server.settle()
        # pods first: the ConfigMap is left alone while the pod remains
        assert server.kubectl("get", "configmap", "settings", "-n", ns, "-o",
                              "name").stdout.strip() == "configmap/settings"
    else:
        eventually(lambda: server.kubectl("get", "configmap", "settings", "-n", ns,
                                          check=False).returncode != 0,
                   what="the ConfigMap deleted beside the pod")
    server.kubectl("patch", "pod", "held", "-n", ns, "--type=json",
                   "-p", '[{"op": "remove", "path": "/metadata/finalizers"}]')
    eventually(lambda: server.kubectl("get", "namespace", ns, check=False).returncode != 0,
               what="the namespace gone")


def _condition(server: Server, ns: str, kind: str) -> dict[str, str] | None:
    out = server.kubectl("get", "namespace", ns, "-o", "json", check=False)
    if out.returncode != 0:
        return None
    for c in json.loads(out.stdout).get("status", {}).get("conditions") or []:
        if c["type"] == kind and c["status"] == "True":
            return dict(c)
    return None


@pytest.mark.parametrize("flags,message", [
    (("--emulated-version", "1.29"),
     "kubegc: --emulated-version: emulation version 1.29 is not between [1.30.0, 1.33.0]"),
    (("--feature-gates", "Nope=true"),
     'kubegc: invalid argument "Nope=true" for "--feature-gates" flag: unrecognized '
     "feature gate: Nope"),
    (("--feature-gates", "OrderedNamespaceDeletion"),
     "argument --feature-gates: missing bool value for OrderedNamespaceDeletion"),
], ids=["too-old", "unknown-gate", "no-value"])
def test_bad_values_are_refused(tmp_path: Path, flags: tuple[str, ...], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "kubegc.cli", "serve", "--storage", "memory", "--port", "0",
         "--data-dir", str(tmp_path), *flags], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert message in proc.stderr
