"""Start-up to ready of ``kubegc serve`` (issue 3: "well under one second").

Starts ``kubegc serve`` N times (fresh data directory each time: CA, token and store are
created, the worst case; then once more on the same directory, the restart case) and times
process start → first ``/readyz`` 200. Baseline in the same run: the time to start a bare
``python -c 'import aiohttp'`` process, which no Python server can beat.

Usage: python bench/bench_startup.py [--runs 5]
"""

from __future__ import annotations

import argparse
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from kubegc.storage import DataDir


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def time_to_ready(data_dir: Path) -> float:
    port = free_port()
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "kubegc.cli", "serve", "--port", str(port),
                             "--data-dir", str(data_dir)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        ca = DataDir(data_dir).ca_cert
        while True:
            if proc.poll() is not None:
                raise RuntimeError("kubegc serve exited")
            if ca.exists():
                try:
                    ctx = ssl.create_default_context(cafile=str(ca))
                    with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=ctx,
                                                timeout=1) as resp:
                        if resp.status == 200:
                            return time.perf_counter() - start
                except (OSError, ssl.SSLError):
                    pass
            time.sleep(0.005)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def baseline() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import aiohttp"], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    fresh, restart, base = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            fresh.append(time_to_ready(Path(tmp)))
            restart.append(time_to_ready(Path(tmp)))
        base.append(baseline())
    b = statistics.median(base)
    print("bench_startup  kubegc serve (all controllers, TLS, SQLite): process start -> /readyz")
    for label, values in (("fresh data dir", fresh), ("restart", restart)):
        m = statistics.median(values)
        print(f"  {label:<15} median {m:.2f} s, best {min(values):.2f} s "
              f"= {m / b:.1f}x a bare 'import aiohttp' process ({b:.2f} s)  "
              f"target < 1 s [{'MET' if m < 1 else 'MISSED'}]")


if __name__ == "__main__":
    main()
