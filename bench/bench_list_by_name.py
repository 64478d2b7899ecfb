"""A LIST by ``metadata.name`` in every namespace (the root CA publisher's, at every
start) on a SQLite store of N ConfigMaps: the keys ending with ``/<name>`` selected by the
storage (``KV.range(key_suffix=...)``), against reading every row and keeping those keys,
as the listing did before, in the same run.

Usage: ``python bench/bench_list_by_name.py [--objects 200000] [--namespaces 500] [--quick]``
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common  # noqa: F401  (its tree's src/ first on sys.path)

from kubegc.storage import BatchWrite, SqliteKV, WriteKind

PREFIX = "/registry/configmaps/"
NAME = "kube-root-ca.crt"
VALUE = b'{"apiVersion":"v1","kind":"ConfigMap","data":{"k":"' + b"v" * 1300 + b'"}}'


async def run(n: int, namespaces: int, rounds: int) -> None:
    directory = tempfile.mkdtemp(prefix="bench-list-by-name-")
    kv = SqliteKV(Path(directory) / "kv.db", synchronous="NORMAL")
    try:
        keys = [f"{PREFIX}ns-{i % namespaces:05d}/cm-{i:07d}" for i in range(n)]
        keys += [f"{PREFIX}ns-{j:05d}/{NAME}" for j in range(namespaces)]
        for i in range(0, len(keys), 5000):
            await kv.write_batch([BatchWrite(WriteKind.CREATE, k, VALUE) for k in keys[i:i + 5000]])
        for _ in range(rounds):
            start = time.perf_counter()
            every = (await kv.range(PREFIX, prefix=True)).kvs
            old = [kv_ for kv_ in every if kv_.key.endswith("/" + NAME)]
            del every
            t_old = time.perf_counter() - start
            start = time.perf_counter()
            new = (await kv.range(PREFIX, prefix=True, key_suffix="/" + NAME)).kvs
            t_new = time.perf_counter() - start
            assert new == old and len(new) == namespaces
            print(f"  {n:,} ConfigMaps, {namespaces} named {NAME}: every row read "
                  f"{t_old:.3f} s ({t_old / n * 1e6:.2f} us/object), by key suffix "
                  f"{t_new:.3f} s = {t_new / t_old:.3f}x", flush=True)
    finally:
        await kv.close()
        shutil.rmtree(directory)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--objects", type=int, default=200_000)
    parser.add_argument("--namespaces", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20,000 objects, one round")
    args = parser.parse_args()
    if args.quick:
        args.objects, args.rounds = 20_000, 1
    asyncio.run(run(args.objects, args.namespaces, args.rounds))


if __name__ == "__main__":
    main()
