"""A long fuzzing run against a fresh ``kubegc serve``: every object of the invalid corpus
(``tests/invalid_corpus.py``), then hostile requests (``tests/fuzz_requests.py``) until
``--examples`` or ``--seconds`` run out; prints the answers by status code, how many
invalid objects were sent and accepted, every request that got a 5xx kube-apiserver would
not give or an error that is not a ``Status``, grouped by message, and the tracebacks in
the server's log. Exits 1 if there was any, or if the server died.

    python bench/fuzz_http.py                      # 20,000 examples or 10 minutes
    python bench/fuzz_http.py --examples 2000 --seconds 60 --seed 26

An example is one drawn request and the same body through the other write paths (about
three requests on average). The bounded run in CI is ``tests/e2e/test_fuzz.py``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tests.e2e.conftest import start_server, stop_server  # noqa: E402
from tests.fuzz_requests import Connection, invalid_requests, requests  # noqa: E402
from tests.fuzz_run import FuzzRun  # noqa: E402


class Deadline(Exception):
    """The run's time is up."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=600)
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (random)")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="kubegc-fuzz-"))
    server = start_server(data_dir)
    run = FuzzRun(Connection(server.url, server.token, str(server.ca_file)))
    namespace = f"fuzz-{uuid.uuid4().hex[:6]}"
    run.seed(namespace)
    deadline = time.monotonic() + args.seconds

    # generation only: every answer is checked here, nothing is raised to shrink
    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        request = data.draw(requests(namespace))
        if time.monotonic() > deadline:  # after the draw: each example draws the same way
            raise Deadline
        run.send(request)

    started = time.monotonic()
    for request in invalid_requests(namespace):
        run.send(request)
    if args.seed is not None:
        fuzz = seed(args.seed)(fuzz)
    with contextlib.suppress(Deadline):
        fuzz()
    elapsed = time.monotonic() - started
    alive = server.process.poll() is None
    stop_server(server)
    log = server.log.read_text(errors="replace")
    if "Traceback (most recent call last)" in log:  # bad input is answered, never a crash
        errors = collections.Counter(re.findall(r"\n(\w+(?:Error|Exception)[^\n]{0,120})", log))
        run.failures["traceback in the server log"] += [f"{n} × {e}" for e, n in errors.items()]
    print(f"{run.total} requests in {elapsed:.0f} s ({run.total / max(elapsed, 1e-9):.0f}/s)")
    print(run.summary() + run.report())
    print(f"\nserver {'alive' if alive else 'DIED'}")
    return 0 if alive and not run.failures else 1


if __name__ == "__main__":
    sys.exit(main())
