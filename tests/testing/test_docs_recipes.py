"""The recipes of docs/testing.md, run as a user runs them: the files the page shows are
written to a directory and pytest runs there in a new process, with kubegc's plugin loaded
by its entry point — a kopf operator with its default login against the fixture."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
FILE_BLOCK = re.compile(r"<!-- file: (\S+) -->\n```python\n(.*?)```", re.S)


def recipe_files() -> dict[str, str]:
    return dict(FILE_BLOCK.findall(DOC.read_text()))


def test_the_page_has_the_kopf_recipe() -> None:
    assert set(recipe_files()) == {"mirror_operator.py", "test_operator.py",
                                   "test_service_account.py", "test_in_process_webhook.py",
                                   "admission_operator.py", "test_admission.py",
                                   "test_settle_stuck.py"}


@pytest.mark.slow
def test_the_kopf_recipe_passes(tmp_path: Path) -> None:
    for name, text in recipe_files().items():
        (tmp_path / name).write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_operator.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
        env={k: v for k, v in __import__("os").environ.items() if k != "KUBECONFIG"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout


@pytest.mark.slow
def test_the_service_account_recipe_passes(tmp_path: Path) -> None:
    (tmp_path / "test_service_account.py").write_text(recipe_files()["test_service_account.py"])
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "test_service_account.py"], cwd=tmp_path, capture_output=True, text=True, timeout=180,
        env={k: v for k, v in __import__("os").environ.items() if k != "KUBECONFIG"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout


@pytest.mark.slow
@pytest.mark.parametrize("test_file", ["test_in_process_webhook.py", "test_admission.py",
                                       "test_settle_stuck.py"])
def test_the_admission_webhook_recipes_pass(tmp_path: Path, test_file: str) -> None:
    """An in-process webhook, kopf's admission handlers with its own HTTPS server, and a
    ``settle()`` stuck on the garbage collector's DELETE an in-process webhook refuses."""
    for name, text in recipe_files().items():
        (tmp_path / name).write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
        env={k: v for k, v in __import__("os").environ.items() if k != "KUBECONFIG"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
