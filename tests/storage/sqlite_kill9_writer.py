"""Helper process for ``test_sqlite``'s kill -9 test (not a test module).

Usage: ``python sqlite_kill9_writer.py DB_PATH WRITERS``. Creates keys in a SqliteKV
(synchronous=FULL) from WRITERS concurrent coroutines until killed, printing one line
``<key> <revision>`` per acknowledged write, flushed at once. Every printed write must
survive the kill.
"""

from __future__ import annotations

import asyncio
import itertools
import sys

from kubegc.storage import SqliteKV


async def main(path: str, writers: int) -> None:
    kv = SqliteKV(path)
    numbers = itertools.count()

    async def writer() -> None:
        for i in numbers:
            key = f"/registry/kill9/{i:08d}"
            revision = await kv.create(key, key.encode() * 8)
            sys.stdout.write(f"{key} {revision}\n")
            sys.stdout.flush()

    await asyncio.gather(*(writer() for _ in range(writers)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
