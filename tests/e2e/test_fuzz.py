"""Fuzzing a real ``kubegc serve`` over HTTPS (``tests/fuzz_requests.py``,
``tests/fuzz_run.py``): every object of the invalid corpus (``tests/invalid_corpus.py``)
refused on each way to create it (JSON, YAML, dry run, server-side apply), then hostile
requests with a fixed seed — at least 10,000 requests in all, none
answered with a 5xx kube-apiserver would not give, every error a ``Status``, no invalid
object accepted, no traceback in the server's log, and the server alive and ready after.
``bench/fuzz_http.py`` runs longer."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from tests.e2e.conftest import Server, start_server, stop_server
from tests.fuzz_requests import Connection, invalid_requests, requests
from tests.fuzz_run import FuzzRun

NAMESPACE = f"fuzz-{uuid.uuid4().hex[:6]}"
#: a fixed seed: the same requests in every CI run (``bench/fuzz_http.py`` explores)
SEED = 26
#: drawn examples; each is sent through several write paths (~3.7 requests on average)
EXAMPLES = 1_700
MIN_REQUESTS = 10_000


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of its own: what the fuzzing leaves (odd nodes, CRDs...) stays away from the
    other tests' shared server."""
    server = start_server(tmp_path_factory.mktemp("fuzzed"))
    yield server
    stop_server(server)


@pytest.fixture(scope="module")
def run(fuzzed: Server) -> Iterator[FuzzRun]:
    # a watch's status and headers are checked, its stream dropped: CI need not wait out
    # each watch's timeout (bench/fuzz_http.py reads them whole)
    conn = Connection(fuzzed.url, fuzzed.token, str(fuzzed.ca_file), read_watches=False)
    result = FuzzRun(conn)
    result.seed(NAMESPACE)  # objects for patches and updates
    yield result
    conn.close()


def test_fuzzed_requests_get_no_5xx(run: FuzzRun, fuzzed: Server) -> None:
    for request in invalid_requests(NAMESPACE):
        run.send(request)
    corpus_sent = run.invalid_sent

    # generation only, with the answers tallied (nothing raised to shrink): one run of
    # EXAMPLES draws, the same ones every time
    @seed(SEED)
    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(data=st.data())
    def fuzz(data: st.DataObject) -> None:
        run.send(data.draw(requests(NAMESPACE)))

    fuzz()
    print(run.summary())  # pytest -s shows it: "N requests ...; M invalid sent, 0 accepted"
    assert not run.failures, run.report()
    assert run.invalid_accepted == 0 and run.invalid_sent > corpus_sent
    assert run.total >= MIN_REQUESTS, run.summary()
    assert fuzzed.process.poll() is None, fuzzed.log_tail()
    status, _ = fuzzed.http("GET", "/readyz")
    assert status == 200
    # bad input is answered, never a crash: nothing in the log but access lines
    log = fuzzed.log.read_text(errors="replace")
    assert "Traceback" not in log, log[log.index("Traceback") - 2000:][:6000]
