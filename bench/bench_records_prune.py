"""The DeletionRecord pruner's peak memory (issue 27: after a million-object run there are
over a million records, and the pruner runs at start and every 5 minutes).

Usage: ``python bench/bench_records_prune.py [--records 200000]``

An in-process ``testing.Cluster`` on SQLite gets N DeletionRecords (created 1,000 per write
batch, as the sink writes them); then one ``DeletionRecordSink.prune`` with the default
TTL (none expired: the common case, a listing for nothing) runs while a thread samples the
process's anonymous RSS every 10 ms. It prints the peak's growth over the RSS before, and
the prune's time. Baseline: the same run of an older tree (``git worktree add --detach``),
whose own script reads its own ``src``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PeakSampler, rss_anon_bytes

from kubegc.api.clock import ManualClock
from kubegc.api.meta import ObjectReference
from kubegc.controllers.deletionrecords.sink import (
    DELETION_RECORDS,
    DeletionRecordSink,
    to_object,
)
from kubegc.controllers.garbagecollector.records import (
    DecisionReason,
    DeletionRecord,
    RecordAction,
)
from kubegc.storage.compactor import trim_heap
from kubegc.testing import Cluster

MB = 1 << 20


def _record(clock: ManualClock, i: int) -> DeletionRecord:
    return DeletionRecord(
        time=clock.now(), action=RecordAction.DELETE,
        object=ObjectReference("v1", "ConfigMap", f"cm-{i:07d}", f"uid-{i:07d}", "big"),
        reason=DecisionReason.OWNER_ABSENT, message="all owners are absent",
        propagation_policy="Background", owners=())


async def run(n: int) -> None:
    clock = ManualClock()
    directory = Path(tempfile.mkdtemp(prefix="bench-records-prune-"))
    async with Cluster(controllers=[], clock=clock, storage="sqlite",
                       data_dir=directory) as cluster:
        client = cluster.client
        for start in range(0, n, 1000):
            await client.create_batch(DELETION_RECORDS, [
                to_object(_record(clock, i), i) for i in range(start, min(n, start + 1000))])
        gc.collect()
        trim_heap()
        before = rss_anon_bytes()
        sink = DeletionRecordSink(client, clock=clock)
        began = time.perf_counter()
        with PeakSampler(os.getpid(), period=0.01) as peak:
            deleted = await sink.prune()
        took = time.perf_counter() - began
    print(f"  {n:,} records: prune deleted {deleted} in {took:.2f} s; anonymous RSS before "
          f"{before / MB:.0f} MB, peak while pruning {peak.peak / MB:.0f} MB "
          f"({(peak.peak - before) / MB:+.0f} MB)", flush=True)
    shutil.rmtree(directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--records", type=int, default=200_000)
    args = parser.parse_args()
    asyncio.run(run(args.records))


if __name__ == "__main__":
    main()
