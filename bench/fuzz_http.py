"""A long fuzzing run against a fresh ``kubegc serve``: hostile requests
(``tests/fuzz_requests.py``) until ``--examples`` or ``--seconds`` run out; prints the
answers by status code and every request that got a 5xx or an error that is not a
``Status``, grouped by message, and the tracebacks in the server's log. Exits 1 if there
was any, or if the server died.

    python bench/fuzz_http.py                      # 20,000 requests or 10 minutes
    python bench/fuzz_http.py --examples 2000 --seconds 60

The bounded run in CI is ``tests/e2e/test_fuzz.py``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tests.e2e.conftest import start_server, stop_server  # noqa: E402
from tests.fuzz_requests import (  # noqa: E402
    TEMPLATES,
    Connection,
    FuzzRequest,
    check_answer,
    requests,
)


class Deadline(Exception):
    """The run's time is up."""


def _seed(conn: Connection, namespace: str) -> None:
    conn.send(FuzzRequest("POST", "/api/v1/namespaces", {"Content-Type": "application/json"},
                          json.dumps({"metadata": {"name": namespace}}).encode()))
    for path, api_version, kind, body in TEMPLATES:
        seed = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "seed"}, **body}
        conn.send(FuzzRequest("POST", "/" + path.format(ns=namespace),
                              {"Content-Type": "application/json"}, json.dumps(seed).encode()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=600)
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="kubegc-fuzz-"))
    server = start_server(data_dir)
    conn = Connection(server.url, server.token, str(server.ca_file))
    namespace = f"fuzz-{uuid.uuid4().hex[:6]}"
    _seed(conn, namespace)
    codes: collections.Counter[int] = collections.Counter()
    failures: dict[str, list[str]] = collections.defaultdict(list)
    deadline = time.monotonic() + args.seconds

    # generation only: every answer is checked here, nothing is raised to shrink
    @settings(max_examples=args.examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        request = data.draw(requests(namespace))
        if time.monotonic() > deadline:  # after the draw: each example draws the same way
            raise Deadline
        try:
            status, body, content_type = conn.send(request)
        except Exception as e:  # an answer no HTTP client can read
            failures[f"client error {type(e).__name__}"].append(f"{e} for {request}")
            return
        codes[status] += 1
        try:
            check_answer(request, status, body, content_type)
        except AssertionError as e:
            key = re.sub(r"\d+", "N", str(json.loads(body).get("message", ""))[:80]
                         if body.startswith(b"{") else body[:80].decode(errors="replace"))
            failures[f"{status} {key}"].append(str(e))

    started = time.monotonic()
    with contextlib.suppress(Deadline):
        run()
    elapsed = time.monotonic() - started
    alive = server.process.poll() is None
    stop_server(server)
    log = server.log.read_text(errors="replace")
    tracebacks = log.count("Traceback (most recent call last)")
    if tracebacks:  # bad input is answered, never a crash: the last error of each
        errors = collections.Counter(re.findall(r"\n(\w+(?:Error|Exception)[^\n]{0,120})", log))
        failures["traceback in the server log"] += [f"{n} × {e}" for e, n in errors.items()]
    total = sum(codes.values())
    print(f"{total} requests in {elapsed:.0f} s ({total / max(elapsed, 1e-9):.0f}/s); "
          f"by status: {dict(sorted(codes.items()))}")
    for key, found in sorted(failures.items(), key=lambda kv: -len(kv[1])):
        print(f"\n{len(found)} × {key}\n  e.g. {found[0][:600]}")
    print(f"\nserver {'alive' if alive else 'DIED'}; {sum(map(len, failures.values()))} "
          f"failures in {len(failures)} kinds")
    return 0 if alive and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
