"""Issue 20's node loss: a node with 1,000 running pods gets a ``NoExecute`` taint none of
them tolerates (``kubectl taint node N maint=now:NoExecute``); timed until every pod is gone
— the taint-eviction controller's GET, DisruptionTarget patch and DELETE of each pod, the
simulated kubelet's termination and final DELETE, and a DeletionRecord each.

Baseline in the same run: 1,000 plain DELETEs of the same pods on another node (default
grace period, the kubelet finishing each), timed until every pod is gone; the ratio is what
taint eviction adds on top.

Usage: python bench/bench_node_loss.py [--quick] [--storage sqlite|memory]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import ListOptions, PatchType
from kubegc.storage import parse_storage
from kubegc.testing import Cluster

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
PODS = GroupVersionResource("", "v1", "pods")
NODES = GroupVersionResource("", "v1", "nodes")
CONCURRENCY = 64


def pod(name: str, node: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx"}]}}


async def gather_limited(coros: list[Any]) -> None:
    sem = asyncio.Semaphore(CONCURRENCY)

    async def run(c: Any) -> None:
        async with sem:
            await c

    await asyncio.gather(*(run(c) for c in coros))


async def until(predicate: Any, timeout: float = 600.0) -> float:
    start = time.perf_counter()
    while not await predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.05)
    return time.perf_counter() - start


async def pods_left(c: Any, ns: str) -> int:
    return len((await c.list(PODS, namespace=ns, options=ListOptions()))["items"])


async def running(c: Any, ns: str) -> int:
    pods = (await c.list(PODS, namespace=ns))["items"]
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")


async def populate(cluster: Cluster, ns: str, node: str, n: int) -> None:
    c = cluster.client
    await c.create(NAMESPACES, {"metadata": {"name": ns}})
    await gather_limited([c.create(PODS, pod(f"p{i}", node), namespace=ns) for i in range(n)])

    async def all_running() -> bool:
        return await running(c, ns) == n
    await until(all_running)
    await cluster.asettle(300)


async def taint_case(cluster: Cluster, n: int) -> float:
    c, ns, node = cluster.client, "lost", "kubegc-node-1"
    await populate(cluster, ns, node, n)
    start = time.perf_counter()
    await c.patch(NODES, node, {"spec": {"taints": [
        {"key": "maint", "value": "now", "effect": "NoExecute"}]}}, patch_type=PatchType.MERGE)

    async def gone() -> bool:
        return await pods_left(c, ns) == 0
    await until(gone)
    return time.perf_counter() - start


async def delete_case(cluster: Cluster, n: int) -> float:
    c, ns, node = cluster.client, "baseline", "kubegc-node-2"
    await populate(cluster, ns, node, n)
    start = time.perf_counter()
    await gather_limited([c.delete(PODS, f"p{i}", namespace=ns) for i in range(n)])

    async def gone() -> bool:
        return await pods_left(c, ns) == 0
    await until(gone)
    return time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 pods")
    parser.add_argument("--storage", default="sqlite", choices=["sqlite", "memory"])
    args = parser.parse_args()
    n = 200 if args.quick else 1000
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) if parse_storage(args.storage).durable else None
        cluster = Cluster(storage=args.storage, data_dir=data_dir, nodes=2)
        cluster.config.controller_manager.kubelet.node_max_pods = n + 10
        async with cluster:
            print(f"bench_node_loss  [{args.storage}, 2 simulated nodes, all controllers]")
            baseline = await delete_case(cluster, n)
            took = await taint_case(cluster, n)
            print(f"  {n} pods of a node tainted NoExecute: all gone in {took:.2f} s "
                  f"(raw: {n} pod DELETEs, gone in {baseline:.2f} s; "
                  f"ratio {took / baseline:.1f}x)")


if __name__ == "__main__":
    asyncio.run(main())
