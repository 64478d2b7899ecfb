"""Issue 21's claim release timing: N PersistentVolumeClaims (default 2,000) in a namespace
that also holds N pods, all deleted at once (as a namespace deletion does), on an
in-process kubegc running the pvc-protection controller: time until every claim is gone
(each waits for the controller to find that no pod uses it — the informer, then a live LIST
of the namespace's pods, which a burst of claims shares, as upstream's LazyLivePodList).

Baseline in the same run: the same number of ConfigMap DELETEs (nothing holds them), so the
ratio shows what the protection adds on top of the raw deletes. Without the shared list,
releasing 2,000 claims next to 2,000 pods LISTs 2,000 pods 2,000 times.

Usage: python bench/bench_pvc_protection.py [--claims N] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from _common import header

from kubegc.api.pod import PODS
from kubegc.api.resources import GroupVersionResource
from kubegc.api.volumes import PVCS
from kubegc.testing import Cluster

CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")
NS = "default"


def claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}}


def pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}


async def _gone(cluster: Cluster, gvr: GroupVersionResource) -> None:
    while (await cluster.client.list(gvr, namespace=NS))["items"]:
        await asyncio.sleep(0.01)


async def run(n: int) -> tuple[float, float]:
    async with Cluster(controllers=["persistentvolumeclaim-protection-controller"]) as cluster:
        client = cluster.client
        for i in range(n):
            await client.create(PODS, pod(f"p{i}"), namespace=NS)
            await client.create(PVCS, claim(f"c{i}"), namespace=NS)
            await client.create(CONFIGMAPS, {"metadata": {"name": f"m{i}"}}, namespace=NS)
        await cluster.asettle()
        start = time.monotonic()
        for i in range(n):
            await client.delete(CONFIGMAPS, f"m{i}", namespace=NS)
        await _gone(cluster, CONFIGMAPS)
        baseline = time.monotonic() - start
        start = time.monotonic()
        for i in range(n):
            await client.delete(PVCS, f"c{i}", namespace=NS)
        await _gone(cluster, PVCS)
        return time.monotonic() - start, baseline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--claims", type=int, default=2000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    n = 300 if args.quick else args.claims
    header(f"bench_pvc_protection: {n:,} claims next to {n:,} pods, deleted at once")
    released, baseline = asyncio.run(run(n))
    print(f"claims released: {released:6.2f} s   configmaps deleted (baseline): "
          f"{baseline:6.2f} s   ratio {released / baseline:4.1f}x")


if __name__ == "__main__":
    main()
