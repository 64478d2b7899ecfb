"""``--from`` refuses what is not a dump, and ``doctor --fail-on`` gates CI (exit 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import LAB_DUMP, NOW_TEXT, TESTDATA
from .lab import kubegc


@pytest.mark.parametrize("text", [
    pytest.param("hello world\n", id="text"),
    pytest.param("{}", id="empty-object"),
    pytest.param("", id="empty-file"),
    pytest.param("error: the server doesn't have a resource type \"pods\"\n",
                 id="kubectl-error-message"),
    pytest.param('[{"name": "x"}]', id="json-that-is-no-object"),
])
@pytest.mark.parametrize("tool", ["doctor", "why", "tree", "plan"])
def test_a_file_that_is_no_dump_is_refused(tmp_path: Path, text: str, tool: str) -> None:
    """What a failed ``kubectl get ... > dump.json`` leaves behind: one line, exit 1 (it
    used to read 0 objects and report "no stuck deletions", exit 0)."""
    dump = tmp_path / "dump.json"
    dump.write_text(text)
    target = () if tool == "doctor" else (("delete",) if tool == "plan" else ()) + (
        "configmap/x",)
    code, out, err = kubegc(tool, *target, "--from", str(dump))
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and "not a Kubernetes dump" in err
    assert "kubectl get -A -o json" in err  # how to make one


def test_an_empty_list_is_a_dump_of_nothing(tmp_path: Path) -> None:
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": []}))
    code, out, _ = kubegc("doctor", "--from", str(dump), "--fail-on", "info")
    assert code == 0 and "nothing is being deleted" in out


@pytest.mark.parametrize(("args", "level", "code"), [
    pytest.param((), "error", 3, id="lab-has-errors"),
    pytest.param((), "warning", 3, id="lab-has-warnings"),
    pytest.param(("-n", "labhub-system"), "info", 0, id="clean-namespace"),
    pytest.param((), None, 0, id="no-gate-by-default"),
])
def test_fail_on_gates_on_the_worst_finding(args: tuple[str, ...], level: str | None,
                                            code: int) -> None:
    gate = ("--fail-on", level) if level else ()
    got, out, err = kubegc("doctor", "--from", str(LAB_DUMP), "--now", NOW_TEXT, *args, *gate,
                           "-o", "json")
    assert got == code, err
    assert json.loads(out)["findings"] is not None  # the report is printed either way


def test_fail_on_refuses_an_unknown_level() -> None:
    with pytest.raises(SystemExit) as exc:
        kubegc("doctor", "--from", str(LAB_DUMP), "--fail-on", "fatal")
    assert exc.value.code == 2


def test_a_dump_without_the_dependents_kinds_says_so(tmp_path: Path) -> None:
    """A dump with Deployments and ReplicaSets but no Pods: the ReplicaSet's foreground
    deletion cannot be judged ("not in the dump"), never "none left ... nothing to do but
    wait"."""
    meta = {"namespace": "shop", "creationTimestamp": "2026-01-01T00:00:00Z",
            "deletionTimestamp": "2026-01-01T00:01:00Z", "finalizers": ["foregroundDeletion"]}
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment",
              "metadata": {"name": "web", "uid": "d1", **meta}}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "web-1", "uid": "r1", **meta, "ownerReferences": [
              {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d1",
               "controller": True, "blockOwnerDeletion": True}]}}
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [deploy, rs]}))
    code, out, _ = kubegc("doctor", "--from", str(dump), "--now", NOW_TEXT, "-o", "json")
    assert code == 0
    report = json.loads(out)
    by_name = {f["object"]["name"]: f for f in report["findings"]}
    facts = " ".join(by_name["web-1"]["facts"])
    assert "not in the dump (it holds no Pod)" in facts
    assert "none left" not in json.dumps(report) and "nothing to do but wait" not in json.dumps(
        report)
    (cause,) = report["rootCauses"]
    assert cause["cause"] == "foregroundDeletion whose blocking dependents are not in the dump"
    assert {o["name"] for o in cause["holds"]} == {"web", "web-1"}


def test_golden_files_are_dumps() -> None:
    for path in TESTDATA.glob("*-dump.*"):
        code, _, err = kubegc("doctor", "--from", str(path))
        assert code == 0, err
