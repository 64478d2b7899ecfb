"""The tools' command line: as a kubectl plugin (``kubectl gc ...``), and its failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kubegc.testing import Cluster

from .conftest import LAB_DUMP, NOW_TEXT
from .lab import KUBECTL, ROOT, kubegc

pytestmark = pytest.mark.kubectl


@pytest.fixture
def plugin_path(tmp_path: Path) -> dict[str, str]:
    """PATH with a ``kubectl-gc`` like the one ``pip install`` makes (console script)."""
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    script = tmp_path / "kubectl-gc"
    script.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT / 'src')!r})\n"
                      "from kubegc.cli import kubectl_plugin_main\n"
                      "sys.exit(kubectl_plugin_main())\n")
    script.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{tmp_path}{os.pathsep}{env.get('PATH', '')}"
    env.pop("NO_COLOR", None)
    return env


def test_kubectl_finds_the_plugin(plugin_path: dict[str, str]) -> None:
    listed = subprocess.run([str(KUBECTL), "plugin", "list"], capture_output=True, text=True,
                            env=plugin_path, timeout=60)
    assert "kubectl-gc" in listed.stdout


def test_kubectl_gc_doctor_on_a_live_kubegc(plugin_path: dict[str, str],
                                            tmp_path: Path) -> None:
    with Cluster() as cluster:
        env = {**plugin_path, "KUBECONFIG": str(cluster.kubeconfig)}
        done = subprocess.run([str(KUBECTL), "gc", "doctor", "-o", "json"], capture_output=True,
                              text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["source"].startswith("context kubegc")
        tree = subprocess.run([str(KUBECTL), "gc", "tree", "namespace/default"],
                              capture_output=True, text=True, env=env, timeout=120)
        assert tree.returncode == 0 and "Namespace/default" in tree.stdout
        assert "\x1b[" not in tree.stdout  # not a terminal: no colour


def test_kubectl_gc_reads_a_dump(plugin_path: dict[str, str]) -> None:
    done = subprocess.run([str(KUBECTL), "gc", "doctor", "--from", str(LAB_DUMP), "--now",
                           NOW_TEXT, "-n", "lab"], capture_output=True, text=True,
                          env=plugin_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "StuckDeletion  Site/epsilon -n lab" in done.stdout


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(("doctor", "--kubeconfig", "/nonexistent/kubeconfig"),
                 "cannot load kubeconfig", id="missing-kubeconfig"),
    pytest.param(("doctor", "--from", "/nonexistent.json"), "cannot read dump",
                 id="missing-dump"),
    pytest.param(("tree", "configmap", "--from", str(LAB_DUMP)), "expected KIND/NAME",
                 id="bad-target"),
    pytest.param(("doctor", "--from", str(LAB_DUMP), "-n", "nosuchns"),
                 'kubegc doctor: Error from server (NotFound): namespaces "nosuchns" not found',
                 id="missing-namespace"),
    pytest.param(("doctor", "--from", str(LAB_DUMP), "-n", "nosuchns", "-o", "json"),
                 'namespaces "nosuchns" not found', id="missing-namespace-json"),
    pytest.param(("doctor", "--from", str(LAB_DUMP), "--as", "alice"),
                 "kubegc doctor: --as and --as-group ask about an object: give KIND/NAME or -f "
                 "FILE", id="as-without-object"),
    pytest.param(("doctor", "--from", str(LAB_DUMP), "site/alpha", "-n", "lab", "--as", "a"),
                 "KIND/NAME asks the cluster's authorizer: read a cluster", id="as-on-a-dump"),
])
def test_failures_are_one_line_on_stderr(args: tuple[str, ...], message: str) -> None:
    code, out, err = kubegc(*args)
    assert code == 1 and out == ""
    assert message in err and err.count("\n") == 1


def test_unreachable_cluster(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: x\nclusters:\n- name: x\n  cluster:\n"
        "    server: http://127.0.0.1:1\ncontexts:\n- name: x\n  context: {cluster: x, user: x}\n"
        "users:\n- name: x\n  user: {}\n")
    code, _, err = kubegc("doctor", "--kubeconfig", str(kubeconfig))
    assert code == 1 and "cannot reach the cluster" in err


def test_plan_of_a_missing_object(tmp_path: Path) -> None:
    code, _, err = kubegc("plan", "delete", "site/nope", "-n", "lab", "--from", str(LAB_DUMP))
    assert code == 1 and 'sites.own.labhub.io "nope" not found' in err


@pytest.mark.parametrize(("tty", "shown"), [(True, True), (False, False)])
def test_progress_only_on_a_terminal(tty: bool, shown: bool) -> None:
    import io

    from kubegc.tools.progress import Progress

    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    stream = Stream()
    progress = Progress(stream)
    progress(3, 10, "configmaps")
    assert ("reading 3/10 resources (configmaps)" in stream.getvalue()) is shown
    progress.done()
    assert stream.getvalue().endswith("\r\x1b[K") is shown
