"""Where ``fcntl`` and ``uvloop`` do not exist (Windows), kubegc still imports, its pytest
plugin — which pytest loads for anyone who installed kubegc — does no harm, the tools run
and ``kubegc serve`` says in one line that it serves on Linux and macOS. Simulated in a new
interpreter where importing either module fails, as it does there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .tools.conftest import LAB_DUMP, NOW_TEXT

#: makes ``import fcntl`` and ``import uvloop`` raise ImportError, as on Windows
WITHOUT = "import sys\nsys.modules['fcntl'] = None\nsys.modules['uvloop'] = None\n"


def run_without(code: str, *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT + code], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_every_module_imports() -> None:
    proc = run_without(
        "import pkgutil, importlib, kubegc\n"
        "for m in pkgutil.walk_packages(kubegc.__path__, 'kubegc.'):\n"
        "    if not m.name.endswith('__main__'):  # runs the command line\n"
        "        importlib.import_module(m.name)\n"
        "print('imported')\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "imported"


def test_a_pytest_run_with_the_plugin_loaded(tmp_path: Path) -> None:
    """Tests that never use kubegc pass; so does one that asks for the fixture (a cluster
    without a data directory needs no file lock, and runs on asyncio's loop)."""
    (tmp_path / "test_mine.py").write_text(
        "def test_unrelated():\n    assert True\n\n"
        "def test_with_kubegc(kubegc_cluster):\n    kubegc_cluster.settle()\n")
    proc = run_without("import pytest\nraise SystemExit(pytest.main(['-q', '-p', "
                       "'no:cacheprovider', 'test_mine.py']))\n", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout


def test_the_tools_run() -> None:
    proc = run_without("from kubegc.cli import main\n"
                       f"raise SystemExit(main(['doctor', '--from', {str(LAB_DUMP)!r}, "
                       f"'--now', {NOW_TEXT!r}, '-o', 'json']))\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.lstrip().startswith("{")


@pytest.mark.parametrize("loop", ["auto", "asyncio"])
def test_serve_says_where_it_serves_in_one_line(tmp_path: Path, loop: str) -> None:
    proc = run_without("from kubegc.cli import main\n"
                       f"raise SystemExit(main(['serve', '--data-dir', {str(tmp_path)!r}, "
                       f"'--port', '0', '--loop', {loop!r}]))\n")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "serves on Linux and macOS" in proc.stderr
