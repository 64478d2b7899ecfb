"""Issue 20's drain timing: ``kubectl drain`` of a node running N pods (default 100) of a
Deployment under a PodDisruptionBudget with ``maxUnavailable`` M (default 10), on a
``kubegc serve`` with two simulated nodes (the evicted pods' replacements run on the other
one, so the budget recovers and the drain progresses M pods at a time), next to the
baseline measured in the same run: ``kubectl delete pods`` of N other running pods (one
DELETE each, waiting until they are gone).

The drain's time is mostly kubectl's: an eviction refused with 429 is retried after 5 s
(as on a real cluster), and how many retries it takes depends on how fast the replacements
become Ready (at once with the simulated kubelet); the ratio shows the whole cost of a
drain under a budget against deleting the same pods.

Usage: python bench/bench_drain.py [--pods N] [--max-unavailable M]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _common import child_env, free_port, header, stop_processes

from kubegc.storage import DataDir

NODES = ("kubegc-node-1", "kubegc-node-2")


def kubectl(kubeconfig: Path, *args: str, timeout: float = 600) -> str:
    proc = subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), *args],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise SystemExit(f"kubectl {' '.join(args)} failed:\n{proc.stderr}")
    return proc.stdout


def start(directory: Path) -> tuple[subprocess.Popen[bytes], Path]:
    log = directory / "serve.log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubegc.cli", "serve", "--port", str(free_port()),
         "--data-dir", str(directory), "--nodes", "2"],
        stdout=log.open("wb"), stderr=subprocess.STDOUT, env=child_env())
    files = DataDir(directory)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"kubegc serve exited:\n{log.read_text()[-3000:]}")
        if files.kubeconfig.exists():
            try:
                kubectl(files.kubeconfig, "get", "--raw", "/readyz", timeout=5)
                return proc, files.kubeconfig
            except (SystemExit, subprocess.TimeoutExpired):
                pass
        time.sleep(0.1)
    raise SystemExit("kubegc serve did not become ready")


def ready_pods(kc: Path, ns: str, node: str) -> int:
    pods = json.loads(kubectl(kc, "get", "pods", "-n", ns, "-o", "json",
                              "--field-selector", f"spec.nodeName={node}"))["items"]
    return sum(1 for p in pods if any(c.get("type") == "Ready" and c.get("status") == "True"
                                      for c in (p.get("status") or {}).get("conditions") or []))


def deploy_on_first_node(kc: Path, ns: str, pods: int) -> None:
    """``pods`` running pods of Deployment ``web`` in ``ns``, all on the first node (the
    second is cordoned meanwhile)."""
    kubectl(kc, "create", "namespace", ns)
    kubectl(kc, "cordon", NODES[1])
    kubectl(kc, "create", "deployment", "web", "-n", ns, "--image=nginx",
            f"--replicas={pods}")
    deadline = time.monotonic() + 300
    while ready_pods(kc, ns, NODES[0]) < pods:
        if time.monotonic() > deadline:
            raise SystemExit(f"{ns}: {pods} pods did not become ready")
        time.sleep(0.5)
    kubectl(kc, "uncordon", NODES[1])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=100)
    parser.add_argument("--max-unavailable", type=int, default=10)
    args = parser.parse_args()
    header("bench_drain", f"{args.pods} pods, PDB maxUnavailable {args.max_unavailable}")
    with tempfile.TemporaryDirectory() as tmp:
        proc, kc = start(Path(tmp))
        try:
            deploy_on_first_node(kc, "base", args.pods)
            kubectl(kc, "scale", "deployment", "web", "-n", "base", "--replicas=0")
            t0 = time.monotonic()
            kubectl(kc, "delete", "pods", "-n", "base", "-l", "app=web", "--wait=true")
            baseline = time.monotonic() - t0

            deploy_on_first_node(kc, "drained", args.pods)
            kubectl(kc, "create", "pdb", "web", "-n", "drained", "--selector=app=web",
                    f"--max-unavailable={args.max_unavailable}")
            t0 = time.monotonic()
            kubectl(kc, "drain", NODES[0], "--ignore-daemonsets", "--timeout=600s")
            drained = time.monotonic() - t0
            left = ready_pods(kc, "drained", NODES[0])
        finally:
            stop_processes([proc])
    print(f"{args.pods} plain DELETEs (kubectl delete pods, waited): {baseline:8.2f} s")
    print(f"kubectl drain, {args.pods} pods, maxUnavailable {args.max_unavailable}: "
          f"{drained:8.2f} s  ({drained / baseline:.1f}x the DELETEs; kubectl retries a 429 "
          "after 5 s)")
    print(f"pods left on {NODES[0]}: {left}")


if __name__ == "__main__":
    main()
