"""The smoke run of ``bench/bench_tools.py --dumps`` (issue 27: the doctor on big dumps):
small dumps in both forms, every line printed, the targets section reached."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_tools.py"
SRC = Path(__file__).resolve().parents[2] / "src"


def test_the_doctor_on_dumps_prints_each_form_and_the_targets() -> None:
    done = subprocess.run([sys.executable, str(BENCH), "--sizes", "", "--dumps", "1500,3000",
                           "--rounds", "1"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(SRC)})
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    for form in ("compact", "indented (kubectl)"):
        assert len(re.findall(rf"^    {re.escape(form)} +[\d.]+ s \(CPU +[\d.]+ s\)  peak RSS",
                              out, re.M)) == 3
    assert "issue 27 targets" in out
    assert len(re.findall(r"^      (time|CPU time|peak RSS): ", out, re.M)) == 6
