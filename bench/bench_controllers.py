"""Issue 5's end-to-end deletion timings on an in-process kubegc with every controller:

* 100 namespaces holding 10 running pods each, all deleted at once: time until every
  namespace is gone (target <= 10 s; upstream's conformance budget is 90 of 100 in 150 s);
* a Deployment with 1,000 running pods deleted with each propagation policy: time until
  the cascade is complete (target <= 2 s each) — Background/Foreground: Deployment,
  ReplicaSet and pods gone; Orphan: Deployment gone and the ReplicaSet released.

Pods exit at once on TERM (the kubelet simulator's default). Baseline in the same run: the
time to delete the same number of pods directly through the API (one DELETE each, grace 0),
so the ratio shows what the controllers add on top of the raw deletes.

Usage: python bench/bench_controllers.py [--quick] [--storage sqlite|memory]
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

from kubegc.api.meta import DeletionPropagation
from kubegc.api.resources import GroupVersionResource
from kubegc.client.interface import DeleteOptions, ListOptions
from kubegc.storage import parse_storage
from kubegc.testing import Cluster

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
PODS = GroupVersionResource("", "v1", "pods")
DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")
REPLICASETS = GroupVersionResource("apps", "v1", "replicasets")
CONCURRENCY = 64


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}


async def gather_limited(coros: list[Any]) -> None:
    sem = asyncio.Semaphore(CONCURRENCY)

    async def run(c: Any) -> None:
        async with sem:
            await c

    await asyncio.gather(*(run(c) for c in coros))


async def count(c: Any, gvr: GroupVersionResource, ns: str = "") -> int:
    return len((await c.list(gvr, namespace=ns))["items"])


async def running(c: Any, ns: str = "") -> int:
    pods = (await c.list(PODS, namespace=ns))["items"]
    return sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Running")


async def until(predicate: Any, timeout: float = 300.0) -> float:
    start = time.perf_counter()
    while not await predicate():
        if time.perf_counter() - start > timeout:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.02)
    return time.perf_counter() - start


async def namespaces_case(cluster: Cluster, n_ns: int, per_ns: int) -> tuple[float, float]:
    c = cluster.client
    names = [f"nslifetest-{i}" for i in range(n_ns)]
    await gather_limited([c.create(NAMESPACES, {"metadata": {"name": n}}) for n in names])
    await gather_limited([c.create(PODS, pod(f"p{k}"), namespace=n)
                          for n in names for k in range(per_ns)])
    await until(lambda: _eq(running(c), n_ns * per_ns))
    await cluster.asettle(120)
    start = time.perf_counter()
    await gather_limited([c.delete(NAMESPACES, n) for n in names])
    await until(lambda: _none_left(c, names))
    elapsed = time.perf_counter() - start
    # baseline: the same number of pods deleted directly, grace 0
    base_ns = "baseline"
    await c.create(NAMESPACES, {"metadata": {"name": base_ns}})
    await gather_limited([c.create(PODS, pod(f"b{k}"), namespace=base_ns)
                          for k in range(n_ns * per_ns)])
    await cluster.asettle(120)
    start = time.perf_counter()
    await gather_limited([c.delete(PODS, f"b{k}", namespace=base_ns,
                                   options=DeleteOptions(grace_period_seconds=0))
                          for k in range(n_ns * per_ns)])
    baseline = time.perf_counter() - start
    await c.delete(NAMESPACES, base_ns)
    await cluster.asettle(120)
    return elapsed, baseline


async def _eq(value: Any, expected: int) -> bool:
    return bool(await value == expected)


async def _none_left(c: Any, names: list[str]) -> bool:
    listed = await c.list(NAMESPACES)
    left = {i["metadata"]["name"] for i in listed["items"]}
    return not left.intersection(names)


async def deployment_case(cluster: Cluster, replicas: int, policy: str, run: int = 0) -> float:
    c = cluster.client
    ns = f"deploy-{policy.lower()}-{run}"
    await c.create(NAMESPACES, {"metadata": {"name": ns}})
    labels = {"app": "web"}
    await c.create(DEPLOYMENTS, {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}},
        namespace=ns)
    await until(lambda: _eq(running(c, ns), replicas))
    await cluster.asettle(120)
    start = time.perf_counter()
    await c.delete(DEPLOYMENTS, "web", namespace=ns,
                   options=DeleteOptions(propagation_policy=DeletionPropagation(policy)))
    if policy == "Orphan":
        await until(lambda: _released(c, ns))
    else:
        await until(lambda: _cascaded(c, ns))
    return time.perf_counter() - start


async def _any(c: Any, gvr: GroupVersionResource, ns: str) -> bool:
    """Whether any object is left (a LIST with limit 1: polling must not steal the CPU
    the controllers being measured need)."""
    listed = await c.list(gvr, namespace=ns, options=ListOptions(limit=1))
    return bool(listed["items"])


async def _cascaded(c: Any, ns: str) -> bool:
    return not (await _any(c, DEPLOYMENTS, ns) or await _any(c, REPLICASETS, ns)
                or await _any(c, PODS, ns))


async def _released(c: Any, ns: str) -> bool:
    if await _any(c, DEPLOYMENTS, ns):
        return False
    rss = (await c.list(REPLICASETS, namespace=ns, options=ListOptions()))["items"]
    return bool(rss) and all(not r["metadata"].get("ownerReferences") for r in rss)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 namespaces, 200 pods")
    parser.add_argument("--storage", default="sqlite", choices=["sqlite", "memory"])
    args = parser.parse_args()
    n_ns, per_ns, replicas = (20, 10, 200) if args.quick else (100, 10, 1000)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) if parse_storage(args.storage).durable else None
        cluster = Cluster(storage=args.storage, data_dir=data_dir, nodes=12)
        async with cluster:
            print(f"bench_controllers  [{args.storage}, 12 simulated nodes, all controllers]")
            elapsed, baseline = await namespaces_case(cluster, n_ns, per_ns)
            print(f"  {n_ns} namespaces x {per_ns} pods deleted: all gone in {elapsed:.2f} s "
                  f"(raw: {n_ns * per_ns} pod DELETEs took {baseline:.2f} s; "
                  f"ratio {elapsed / baseline:.1f}x)  target <= 10 s "
                  f"[{'MET' if elapsed <= 10 else 'MISSED'}]")
            for policy in ("Background", "Foreground", "Orphan"):
                took = await deployment_case(cluster, replicas, policy)
                print(f"  Deployment with {replicas} pods, {policy:<10} cascade complete in "
                      f"{took:.2f} s  target <= 2 s [{'MET' if took <= 2 else 'MISSED'}]")


if __name__ == "__main__":
    asyncio.run(main())
