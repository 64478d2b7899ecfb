"""A dump taken with the real kubectl from a real ``kubegc serve``, then edited by hand the
way issue 24 did (one field changed each), read by ``kubegc doctor --from`` as a
process: exit 0, the edit reported as a MalformedObject finding naming the object and
the field, and the stuck deletion still explained."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import Server, eventually


def dump_of(server: Server, ns: str) -> dict[str, Any]:
    listed: dict[str, Any] = json.loads(server.kubectl(
        "get", "configmaps,deployments", "-n", ns, "-o", "json").stdout)
    return listed


@pytest.mark.parametrize(("name", "field", "value", "said"), [
    pytest.param("child", "ownerReferences", {"kind": "ConfigMap", "name": "held"},
                 "metadata.ownerReferences is an object, not a list: ignored", id="refs-object"),
    pytest.param("held", "finalizers", "example.com/hold",
                 'metadata.finalizers is the string "example.com/hold", not a list: ignored',
                 id="finalizers-string"),
    pytest.param("held", "deletionTimestamp", "yesterday-ish",
                 'metadata.deletionTimestamp is the string "yesterday-ish", not a time',
                 id="deletion-timestamp"),
])
def test_doctor_from_a_hand_edited_dump(server: Server, ns: str, tmp_path: Path, name: str,
                                        field: str, value: Any, said: str) -> None:
    server.kubectl("create", "configmap", "held", "-n", ns)
    server.kubectl("patch", "configmap", "held", "-n", ns, "--type=merge", "-p",
                   json.dumps({"metadata": {"finalizers": ["example.com/hold"]}}))
    uid = server.kubectl("get", "configmap", "held", "-n", ns, "-o",
                         "jsonpath={.metadata.uid}").stdout
    server.kubectl("apply", "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "child", "namespace": ns, "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "held", "uid": uid}]}}))
    server.kubectl("delete", "configmap", "held", "-n", ns, "--wait=false")
    eventually(lambda: "deletionTimestamp" in server.kubectl(
        "get", "configmap", "held", "-n", ns, "-o", "json").stdout)
    try:
        dump = dump_of(server, ns)
        (obj,) = [o for o in dump["items"] if o["metadata"]["name"] == name]
        obj["metadata"][field] = value
        path = tmp_path / "dump.json"
        path.write_text(json.dumps(dump))
        done = subprocess.run([sys.executable, "-m", "kubegc", "doctor", "--from", str(path),
                               "-o", "json", "--stuck-after", "0s"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        report = json.loads(done.stdout)
        (bad,) = [f for f in report["findings"] if f["kind"] == "MalformedObject"]
        assert (bad["object"]["kind"], bad["object"]["namespace"], bad["object"]["name"]) == (
            "ConfigMap", ns, name)
        assert any(said in fact for fact in bad["facts"]), bad["facts"]
        if field != "finalizers":  # the stuck deletion is still explained
            assert any(c["cause"].startswith("finalizer example.com/hold")
                       for c in report["rootCauses"]), report["rootCauses"]
        text = subprocess.run([sys.executable, "-m", "kubegc", "doctor", "--from", str(path)],
                              capture_output=True, text=True, timeout=120)
        assert text.returncode == 0 and "MalformedObject" in text.stdout, text.stderr
    finally:
        server.kubectl("patch", "configmap", "held", "-n", ns, "--type=merge", "-p",
                       '{"metadata":{"finalizers":null}}', check=False)


def test_doctor_of_a_manifest_of_the_wrong_shape_is_one_line(server: Server, ns: str,
                                                             tmp_path: Path) -> None:
    """``kubegc doctor -f FILE --as USER`` asks whether USER may write that object: a
    manifest the API server would refuse is said so, in one line, before asking."""
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "child", "namespace": ns,
            "ownerReferences": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x",
                                "uid": "u"}}}))
    done = subprocess.run([sys.executable, "-m", "kubegc", "doctor", "-f", str(manifest),
                           "--as", "jane", "--kubeconfig", str(server.kubeconfig)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert done.stderr == (f"kubegc doctor: {manifest}: metadata.ownerReferences is an "
                           "object, not a list\n")
