"""Golden files: the text, JSON and DOT forms of doctor, tree and why on the lab dump, and
of plan on a small chain.

Regenerate after an intended change with ``KUBEGC_UPDATE_GOLDEN=1 pytest tests/tools``
and review the diff."""

from __future__ import annotations

import os
import shutil

import pytest

from .conftest import NOW_TEXT, TESTDATA
from .lab import kubegc

UPDATE = os.environ.get("KUBEGC_UPDATE_GOLDEN") == "1"
COMMON = ("--from", "lab-dump.yaml", "--now", NOW_TEXT, "--color", "never")
#: plan-dump.json is a single chain (ConfigMap → Secret → Pod): the garbage collector acts
#: on one object at a time, so the order of the steps is deterministic
PLAN = ("plan", "delete", "configmap/root", "-n", "shop", "--from", "plan-dump.json",
        "--now", NOW_TEXT, "--color", "never", "--cascade")

CASES = [
    ("doctor", ("doctor",)),
    ("doctor-lab", ("doctor", "-n", "lab", "--stuck-after", "0")),
    ("tree-epsilon", ("tree", "site/epsilon", "-n", "lab")),
    ("tree-owners-loop-b", ("tree", "configmap/loop-b", "-n", "lab", "--owners")),
    ("why-cross-namespace", ("why", "secret/cross-namespace", "-n", "other")),
    ("plan-foreground", (*PLAN, "foreground")),
    ("plan-background", (*PLAN, "background")),
    ("plan-orphan", (*PLAN, "orphan")),
]


@pytest.mark.parametrize("fmt", ["text", "json", "dot"])
@pytest.mark.parametrize(("name", "args"), [pytest.param(n, a, id=n) for n, a in CASES])
def test_golden(monkeypatch: pytest.MonkeyPatch, name: str, args: tuple[str, ...],
                fmt: str) -> None:
    monkeypatch.chdir(TESTDATA)
    code, out, err = kubegc(*args, *(() if args[0] == "plan" else COMMON), "-o", fmt)
    assert code == 0, err
    path = TESTDATA / f"{name}.{ {'text': 'txt'}.get(fmt, fmt) }"
    if UPDATE:
        path.write_text(out)
    assert out == path.read_text(), f"{path.name} differs (KUBEGC_UPDATE_GOLDEN=1 to update)"


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_svg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(TESTDATA)
    code, out, err = kubegc("tree", "site/epsilon", "-n", "lab", *COMMON, "-o", "svg")
    assert code == 0, err
    assert out.lstrip().startswith("<?xml") and "<svg" in out and "hold&#45;me" in out


def test_svg_without_graphviz_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(TESTDATA)
    monkeypatch.setattr(shutil, "which", lambda name: None)
    code, out, err = kubegc("doctor", *COMMON, "-o", "svg")
    assert code == 1 and out == ""
    assert "needs Graphviz's `dot` program, which is not installed" in err


@pytest.mark.parametrize(("env", "flag", "colored"), [
    pytest.param({}, "always", True, id="always"),
    pytest.param({"NO_COLOR": "1"}, "always", True, id="always-beats-NO_COLOR"),
    pytest.param({}, "auto", False, id="auto-not-a-tty"),
    pytest.param({}, "never", False, id="never"),
])
def test_color(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], flag: str,
               colored: bool) -> None:
    monkeypatch.chdir(TESTDATA)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    code, out, _ = kubegc("doctor", "--from", "lab-dump.yaml", "--now", NOW_TEXT,
                          "--color", flag)
    assert code == 0
    assert ("\x1b[" in out) is colored


def test_no_color_env_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from kubegc.tools.render.style import use_color

    class Tty:
        def isatty(self) -> bool:
            return True

    assert use_color(Tty(), "auto")  # type: ignore[arg-type]
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(Tty(), "auto")  # type: ignore[arg-type]


def test_graphs_point_from_dependent_to_owner_mark_holders_and_carry_a_legend(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's complaints: "Deployment blocks ReplicaSet" edges (owner to dependent),
    no mark on what holds everything, no legend."""
    monkeypatch.chdir(TESTDATA)
    _, dot, _ = kubegc("doctor", *COMMON, "-o", "dot")
    assert '"cm-hold-me" -> "site-epsilon" [style="solid", label="blocks"]' in dot
    assert '"site-epsilon" -> "cm-hold-me"' not in dot
    holders = [line for line in dot.splitlines() if "HOLDS:" in line and "legend" not in line]
    assert any('"cm-hold-me"' in line and "finalizer manual.labhub.io/hold" in line
               for line in holders)
    assert not any('"site-epsilon"' in line for line in holders)  # held, not holding
    assert "subgraph cluster_legend" in dot
    _, tree, _ = kubegc("tree", "site/epsilon", "-n", "lab", *COMMON, "-o", "dot")
    assert '"cm-hold-me" -> "site-epsilon"' in tree and "cluster_legend" in tree
