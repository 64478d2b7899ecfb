"""The fault-injection examples (``examples/faults``, docs/faults.md) run as their users
run them: pytest in a new process on that directory — a plain official-client controller
and a kopf operator surviving every fault, and a naive controller whose tests show the bug
each fault finds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "faults"


def test_the_fault_examples_pass() -> None:
    pytest.importorskip("kopf")
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (src, os.environ.get("PYTHONPATH", "")) if p)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", str(EXAMPLES)], cwd=EXAMPLES, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
