"""``bench_tools.py --dumps``: ``kubegc doctor --from DUMP -o json`` on big dumps (issue 27).

For each size N (``make_dump.py``: one owner ConfigMap per 1,000 dependents, ~0.7 KB of
JSON each) in both forms a user has (compact, as ``make_dump.py`` or a script writes it;
indented by 4, as ``kubectl get -A -o json`` prints it), the doctor runs as its own process
(start-up, reading, the checks, the report, as a user runs it): wall time, CPU time (user +
system: steadier on a shared VM) and peak RSS, the
fastest of ``--rounds`` runs. With ``--baseline REV`` the same commands run from that
commit's ``src`` (a ``git worktree``), alternating with this checkout's, and their ratios
are printed; the reports must be the same bytes. An empty dump gives the fixed cost
(start-up); the cost per object at the two largest sizes says whether they grow linearly,
and only then is 1M extrapolated (the fixed cost plus the marginal cost per object between
the two sizes) and judged against issue 27's targets: <= 10 s and <= 2 GB at 1M objects.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _common import verdict  # noqa: E402
from make_dump import write_list  # noqa: E402

TARGET_S = 10.0
TARGET_BYTES = 2e9
AT = 1_000_000
#: per-object figures of the two largest sizes within this ratio: linear
LINEAR = 1.25


@dataclass(frozen=True)
class Run:
    wall_s: float
    peak_rss: int
    report: bytes
    #: user + system CPU seconds: on a VM shared with other work, steadier than the wall
    cpu_s: float = 0.0


def write_dumps(n: int, into: Path) -> dict[str, Path]:
    """The two forms, written as their objects are made (``make_dump.write_list``)."""
    compact, indented = into / f"compact-{n}.json", into / f"indented-{n}.json"
    write_list(n, compact, indent=False)
    write_list(n, indented, indent=True)
    return {"compact": compact, "indented (kubectl)": indented}


#: run the command given and print its wall time and peak RSS: from a small process, since
#: a child's ru_maxrss counts the pages of the process it was forked from (this one, which
#: made the dumps)
_MEASURE = """import resource, subprocess, sys, time
start = time.perf_counter()
code = subprocess.run(sys.argv[1:]).returncode
wall = time.perf_counter() - start
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(wall, used.ru_maxrss * 1024, used.ru_utime + used.ru_stime, file=sys.stderr)
sys.exit(code)
"""


def _env(src: Path, into: Path) -> dict[str, str]:
    """The doctor's environment: ``src`` first, and its modules' bytecode cached (under
    ``into``, a directory per tree), as an installed kubegc runs: with
    ``PYTHONDONTWRITEBYTECODE`` (set on the project's VM) every run compiled each module
    it imports, ~0.3 s of the start-up."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(src),
            "PYTHONPYCACHEPREFIX": str(into / "pyc" / str(src).strip("/").replace("/", "+"))}


def doctor(src: Path, dump: Path, timeout: float) -> Run:
    argv = [sys.executable, "-c", _MEASURE, sys.executable, "-m", "kubegc", "doctor", "--from",
            str(dump), "-o", "json", "--now", "2026-12-06T12:00:00Z"]
    done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False,
                          env=_env(src, dump.parent))
    if done.returncode != 0:
        raise RuntimeError(f"kubegc doctor failed: {done.stderr.decode()[-2000:]}")
    wall, rss, cpu = done.stderr.decode().split()[-3:]
    return Run(float(wall), int(rss), done.stdout, float(cpu))


def checkout(rev: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(into), rev],
                   check=True, capture_output=True)
    return into / "src"


def _line(label: str, run: Run, n: int, base: Run | None, empty: Run | None) -> str:
    per = (f"{(run.peak_rss - empty.peak_rss) / n:,.0f} B/object over start-up"
           if n and empty is not None else "start-up")
    text = (f"    {label:<22} {run.wall_s:6.2f} s (CPU {run.cpu_s:5.2f} s)  peak RSS "
            f"{run.peak_rss / 1e6:7,.0f} MB ({per})")
    if base is not None:
        same = "same report" if base.report == run.report else "REPORT DIFFERS"
        text += (f"   baseline {base.wall_s:6.2f} s (CPU {base.cpu_s:5.2f} s) "
                 f"{base.peak_rss / 1e6:6,.0f} MB: {run.wall_s / base.wall_s:.2f}x time, "
                 f"{run.cpu_s / base.cpu_s:.2f}x CPU, {run.peak_rss / base.peak_rss:.2f}x "
                 f"RSS, {same}")
    return text


def objects(n: int) -> int:
    """The objects of a dump of ``n`` dependents: they and their owners."""
    return n + (n + 999) // 1000


def extrapolate(runs: dict[int, Run]) -> None:
    """1M from the fixed cost and the two largest sizes, when they grow linearly."""
    sizes = sorted(n for n in runs if n)
    if sizes and objects(sizes[-1]) >= AT - 1:  # measured at 1M (999,000 dependents: 999,999)
        at_1m = runs[sizes[-1]]
        for name, measured, target, shown in (
                ("time", at_1m.wall_s, TARGET_S, f"{at_1m.wall_s:.1f} s"),
                ("CPU time", at_1m.cpu_s, TARGET_S, f"{at_1m.cpu_s:.1f} s"),
                ("peak RSS", float(at_1m.peak_rss), TARGET_BYTES,
                 f"{at_1m.peak_rss / 1e9:.2f} GB")):
            print(f"      {name}: at 1M measured {shown}, target <= "
                  f"{target if target < 1e3 else target / 1e9:.0f} "
                  f"{'s' if target < 1e3 else 'GB'} [{verdict(measured, target, at_most=True)}]")
        return
    if len(sizes) < 2 or 0 not in runs:
        return
    small, big, empty = runs[sizes[-2]], runs[sizes[-1]], runs[0]
    n1, n2 = sizes[-2], sizes[-1]
    for name, value, target, unit, scale in (
            ("time", lambda r: r.wall_s, TARGET_S, "us", 1e6),
            ("CPU time", lambda r: r.cpu_s, TARGET_S, "us", 1e6),
            ("peak RSS", lambda r: float(r.peak_rss), TARGET_BYTES, "B", 1.0)):
        per1 = (value(small) - value(empty)) / n1 * scale
        per2 = (value(big) - value(empty)) / n2 * scale
        marginal = (value(big) - value(small)) / (n2 - n1) * scale
        figures = (f"{per1:,.1f} and {per2:,.1f} {unit} per object at {n1:,} and {n2:,} "
                   f"(marginal {marginal:,.1f})")
        if per1 <= 0 or max(per1, per2, marginal) > LINEAR * min(per1, per2, marginal):
            print(f"      {name}: {figures}: not linear, 1M not extrapolated")
            continue
        at = value(empty) + marginal / scale * AT
        shown, limit = ((f"{at:.1f} s", f"{target:.0f} s") if unit == "us"
                        else (f"{at / 1e9:.2f} GB", f"{target / 1e9:.0f} GB"))
        print(f"      {name}: {figures}, linear: at 1M ~{shown}, target <= {limit} "
              f"[{verdict(at, target, at_most=True)}]")


def _best(this: Path, old: Path | None, dump: Path, rounds: int, timeout: float
          ) -> tuple[Run, Run | None]:
    """The fastest of ``rounds`` runs of each version (and the least CPU), the two
    alternating (the machine's load drifts: both see the same)."""
    new: list[Run] = []
    base: list[Run] = []
    for _ in range(rounds):
        new.append(doctor(this, dump, timeout))
        if old is not None:
            base.append(doctor(old, dump, timeout))
    return _fastest(new), _fastest(base) if base else None


def _fastest(runs: list[Run]) -> Run:
    """The fastest run, with the least CPU time of them all (either may be another's)."""
    fastest = min(runs, key=lambda r: r.wall_s)
    return Run(fastest.wall_s, fastest.peak_rss, fastest.report, min(r.cpu_s for r in runs))


def run(sizes: list[int], baseline: str | None, timeout: float, rounds: int = 2) -> None:
    if max(sizes) > AT:  # the dumps are written as made; the doctor holds ~1 KB per object
        raise SystemExit(f"at most {AT:,} objects")
    print(f"kubegc doctor --from DUMP -o json (issue 27), dependents {sizes}, best of "
          f"{rounds}" + (f", baseline {baseline}" if baseline else ""))
    with tempfile.TemporaryDirectory(prefix="bench-doctor-dump-") as tmp:
        this = ROOT / "src"
        old = checkout(baseline, Path(tmp) / "baseline") if baseline else None
        try:
            results: dict[str, dict[int, Run]] = {}
            warm = write_dumps(0, Path(tmp))["compact"]  # each tree's bytecode, untimed
            for src in (this, old):
                if src is not None:
                    doctor(src, warm, timeout)
            for n in [0, *sizes]:
                dumps = write_dumps(n, Path(tmp))
                print(f"  {n:,} dependents ({objects(n):,} objects)")
                for form, path in dumps.items():
                    new, base = _best(this, old, path, rounds, timeout)
                    results.setdefault(form, {})[n] = new
                    print(_line(form, new, objects(n), base,
                                results[form].get(0) if n else None))
                    os.unlink(path)
            how = "measured" if objects(max(sizes)) >= AT - 1 else "extrapolated"
            print(f"  issue 27 targets (the doctor on a 1M-object dump, {how})")
            for form, runs in results.items():
                print(f"    {form}")
                extrapolate(runs)
        finally:
            if baseline:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(Path(tmp) / "baseline")], check=False)
