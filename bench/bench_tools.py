"""The tools at scale: ``kubegc plan`` and the doctor on 10k and 100k objects, as a ratio of
the real cascade measured on ``kubegc serve`` in the same run.

Usage: ``python bench/bench_tools.py [--quick] [--sizes 10000,100000] [--policy Background]``

For each size N, a fresh ``kubegc serve`` (SQLite, every controller, plain HTTP) gets one
owner ConfigMap and N dependent ConfigMaps (~0.3 KB) in one namespace, then:

* ``plan, live``: ``kubegc plan delete configmap/owner -n bench -o json`` against it, as
  a separate process (what a user runs: start-up, reading the cluster over HTTP, the
  simulation, the report); wall time and the process's peak RSS (``wait4``);
* ``plan, dump``: the same from a dump of the cluster (``--from dump.json``);
* ``doctor, dump`` / ``doctor, live``: in a child process, ``read_inventory`` of the dump
  (``DumpClient``) or of the live kubegc (``RestClient``), then
  ``kubegc.tools.doctor.diagnose`` over it; read and diagnose times and the child's peak
  RSS;
* ``real cascade``: the owner's DELETE with the same policy, to the last dependent's
  DELETED watch event.

Printed per size: each time with its ratio to the real cascade, and peak memory; then the
issue 11 targets (plan <= 3x the real cascade at 10k dependents; the doctor on 100,000
objects from a dump <= 2 s).

``--dumps 100000,200000 [--baseline REV]``: first ``kubegc doctor --from`` on dumps of that
many objects, against issue 27's targets (``doctor_dump.py``); ``--sizes ''`` skips the rest.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import doctor_dump
from _common import Serve, child_env, configmap, header, real_cascade, timed, verdict

from kubegc.api.clock import RealClock
from kubegc.api.resources import GroupVersionResource
from kubegc.client.kubeconfig import load_kubeconfig
from kubegc.client.rest import RestClient

HERE = Path(__file__).resolve()
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
NAMESPACES = GroupVersionResource("", "v1", "namespaces")
NS = "bench"
PLAN_TARGET = 3.0  # plan <= 3x the real cascade (10k dependents)
DOCTOR_TARGET = 2.0  # seconds to diagnose 100,000 objects from a dump


def run_child(argv: list[str], timeout: float) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (bytes) and stdout of ``argv`` run as a child process."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=child_env())
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                raise TimeoutError(f"{argv[3:6]} did not finish within {timeout} s")
            time.sleep(0.01)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read() if proc.stderr is not None else b""
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(argv[2:6])} failed: {err.decode()[-2000:]}")
        out.seek(0)
        return wall, usage.ru_maxrss * 1024, out.read()


async def populate(serve: Serve, n: int, timeout: float) -> None:
    client = RestClient(load_kubeconfig(str(serve.kubeconfig)))
    try:
        await client.create(NAMESPACES, {"metadata": {"name": NS}})
        owner = await client.create(CONFIGMAPS, configmap("owner", NS, size=200), namespace=NS)
        ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
               "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
        await timed(n, 64, lambda i: client.create(
            CONFIGMAPS, configmap(f"dep-{i:07d}", NS, owner=ref, size=200), namespace=NS))
    finally:
        await client.close()
    await serve.settle(timeout)


async def write_dump(serve: Serve, path: Path) -> int:
    from kubegc.tools.inventory import read_inventory

    client = RestClient(load_kubeconfig(str(serve.kubeconfig)))
    try:
        inv = await read_inventory(client, clock=RealClock())
    finally:
        await client.close()
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": inv.objects}))
    return len(inv.objects)


def doctor_child(source: str) -> dict[str, float]:
    """In a child process: read the inventory, then diagnose it, with Python's cyclic
    collector set up as ``kubegc doctor`` sets it up in its own process (off for a dump)."""
    from kubegc.cli import tune_tool_cyclic_gc
    from kubegc.client.dump import DumpClient
    from kubegc.tools.doctor import diagnose
    from kubegc.tools.inventory import read_inventory

    async def main() -> dict[str, float]:
        start = time.perf_counter()
        client: Any = (DumpClient.from_file(source) if not source.endswith("kubeconfig")
                       else RestClient(load_kubeconfig(source)))
        try:
            inv = await read_inventory(client, clock=RealClock())
        finally:
            if isinstance(client, RestClient):
                await client.close()
        read = time.perf_counter() - start
        start = time.perf_counter()
        report = diagnose(inv)
        return {"read_s": read, "diagnose_s": time.perf_counter() - start,
                "objects": len(inv.objects), "findings": len(report.findings)}

    dump = not source.endswith("kubeconfig")
    tune_tool_cyclic_gc(argparse.Namespace(command="doctor", from_file=source if dump else None))
    out = asyncio.run(main())
    out["peak_rss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return out


def doctor(source: str, timeout: float) -> dict[str, float]:
    wall, _rss, out = run_child([sys.executable, str(HERE), "--doctor-child", source], timeout)
    result: dict[str, float] = json.loads(out.decode().strip().splitlines()[-1])
    result["wall_s"] = wall
    return result


def plan(args: list[str], timeout: float) -> dict[str, float]:
    wall, rss, out = run_child([sys.executable, "-m", "kubegc.cli", "plan", "delete",
                                "configmap/owner", "-n", NS, "-o", "json", *args], timeout)
    report = json.loads(out)
    return {"wall_s": wall, "peak_rss": rss, "deleted": len(report["deleted"]),
            "simulated": report.get("objectsSimulated", 0)}


def one_size(n: int, policy: str, timeout: float) -> dict[str, Any]:
    serve = Serve(prefix="bench-tools-")
    try:
        asyncio.run(serve.ready())
        started = time.perf_counter()
        asyncio.run(populate(serve, n, timeout))
        setup = time.perf_counter() - started
        dump = serve.root / "dump.json"
        objects = asyncio.run(write_dump(serve, dump))
        cascade = policy.lower()
        results: dict[str, Any] = {"n": n, "objects": objects, "setup_s": setup}
        results["plan_live"] = plan(["--cascade", cascade, "--kubeconfig",
                                     str(serve.kubeconfig)], timeout)
        results["plan_dump"] = plan(["--cascade", cascade, "--from", str(dump)], timeout)
        results["doctor_dump"] = doctor(str(dump), timeout)
        results["doctor_live"] = doctor(str(serve.kubeconfig), timeout)
        results["real_s"] = asyncio.run(real_cascade(serve, n, policy, timeout, namespace=NS))
        return results
    finally:
        serve.stop()


def _mb(value: float) -> str:
    return f"{value / 1e6:,.0f} MB"


def report(r: dict[str, Any]) -> None:
    real = r["real_s"]
    print(f"  n={r['n']:,} dependents ({r['objects']:,} objects read; setup {r['setup_s']:.1f} s)")
    print(f"    real cascade on kubegc serve (sqlite)  {real:7.2f} s  = 1.00x")
    for key, label in (("plan_live", "kubegc plan, live (HTTP)"),
                       ("plan_dump", "kubegc plan --from dump")):
        p = r[key]
        print(f"    {label:<38} {p['wall_s']:7.2f} s  = {p['wall_s'] / real:.2f}x   peak RSS "
              f"{_mb(p['peak_rss'])}  ({p['deleted']:,} deleted, {p['simulated']:,} "
              "simulated)")
    for key, label in (("doctor_dump", "doctor, dump"), ("doctor_live", "doctor, live")):
        d = r[key]
        print(f"    {label:<38} {d['diagnose_s']:7.2f} s  = {d['diagnose_s'] / real:.2f}x   "
              f"diagnose (+ read {d['read_s']:.2f} s; process {d['wall_s']:.2f} s), peak RSS "
              f"{_mb(d['peak_rss'])}, {d['findings']:,.0f} findings")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 and 10,000 dependents")
    parser.add_argument("--sizes", default="10000,100000", help="dependents of the owner")
    parser.add_argument("--policy", default="Background",
                        choices=("Background", "Foreground", "Orphan"))
    parser.add_argument("--timeout", type=float, default=900.0, help="per step")
    parser.add_argument("--doctor-child", help=argparse.SUPPRESS)
    parser.add_argument("--dumps", default="", metavar="SIZES",
                        help="also the doctor on dumps of these many dependents (issue 27; "
                             "bench/doctor_dump.py), e.g. 100000,200000")
    parser.add_argument("--baseline", metavar="REV",
                        help="with --dumps: also that commit's doctor on the same dumps")
    parser.add_argument("--rounds", type=int, default=2,
                        help="with --dumps: runs of each, the fastest counts")
    args = parser.parse_args()
    if args.doctor_child:
        print(json.dumps(doctor_child(args.doctor_child)))
        return
    if args.dumps:
        doctor_dump.run([int(s) for s in args.dumps.split(",") if s], args.baseline,
                        args.timeout, args.rounds)
    sizes = [1000, 10000] if args.quick else [int(s) for s in args.sizes.split(",") if s]
    if not sizes:
        return
    header("bench_tools", f"dependents {sizes}, policy {args.policy}")
    started = time.perf_counter()
    rows = []
    for n in sizes:
        r = one_size(n, args.policy, args.timeout)
        rows.append(r)
        report(r)
    print("Issue 11 targets")
    for r in rows:
        if r["n"] == 10_000:
            ratio = r["plan_live"]["wall_s"] / r["real_s"]
            print(f"  plan of an owner of 10,000 dependents (live): {ratio:.2f}x the real "
                  f"cascade, target <= {PLAN_TARGET:.0f}x "
                  f"[{verdict(ratio, PLAN_TARGET, at_most=True)}]")
        if r["objects"] >= 100_000:
            took = r["doctor_dump"]["diagnose_s"]
            print(f"  doctor on {r['objects']:,} objects from a dump: diagnose {took:.2f} s, "
                  f"target <= {DOCTOR_TARGET:.0f} s [{verdict(took, DOCTOR_TARGET, at_most=True)}]")
    print(f"done in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
