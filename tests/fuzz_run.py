"""One fuzzing run against a running kubegc (``tests/fuzz_requests.py``'s requests):
seeds the objects the patches and updates aim at, sends requests over one keep-alive
connection with the bodies they carry for the other write paths, and tallies the answers —
by status, the invalid objects sent and accepted, and every answer that fails
``check_answer``, grouped by message. Used by ``bench/fuzz_http.py`` (long runs) and
``tests/e2e/test_fuzz.py`` (CI)."""

from __future__ import annotations

import collections
import json
import re

from tests.fuzz_requests import TEMPLATES, Connection, FuzzRequest, check_answer

JSON = {"Content-Type": "application/json"}


class FuzzRun:
    """The tallies of one run. ``failures``: a key (status and message, digits folded) →
    the requests that got that answer."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.codes: collections.Counter[int] = collections.Counter()
        self.failures: dict[str, list[str]] = collections.defaultdict(list)
        self.invalid_sent = 0
        self.invalid_accepted = 0

    @property
    def total(self) -> int:
        return sum(self.codes.values())

    def seed(self, namespace: str) -> None:
        """The namespace and one object of each kind, named ``seed``."""
        self.conn.send(FuzzRequest("POST", "/api/v1/namespaces", JSON,
                                   json.dumps({"metadata": {"name": namespace}}).encode()))
        for path, api_version, kind, body in TEMPLATES:
            seed = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "seed"},
                    **body}
            self.conn.send(FuzzRequest("POST", "/" + path.format(ns=namespace), JSON,
                                       json.dumps(seed).encode()))

    def send(self, request: FuzzRequest) -> None:
        """``request``, then its ``also``; every answer checked and tallied."""
        for one in (request, *request.also):
            try:
                status, body, content_type = self.conn.send(one)
            except Exception as e:  # an answer no HTTP client can read
                self.failures[f"client error {type(e).__name__}"].append(f"{e} for {one}")
                continue
            self.codes[status] += 1
            if one.invalid is not None:
                self.invalid_sent += 1
                self.invalid_accepted += status < 400
            try:
                check_answer(one, status, body, content_type)
            except AssertionError as e:
                self.failures[_failure_key(status, body)].append(str(e))

    def summary(self) -> str:
        return (f"{self.total} requests; by status: {dict(sorted(self.codes.items()))}; "
                f"{self.invalid_sent} invalid sent, {self.invalid_accepted} accepted; "
                f"{sum(map(len, self.failures.values()))} failures in "
                f"{len(self.failures)} kinds")

    def report(self) -> str:
        """Each kind of failure, most frequent first, with one example."""
        return "".join(f"\n{len(found)} × {key}\n  e.g. {found[0][:600]}"
                       for key, found in sorted(self.failures.items(),
                                                key=lambda kv: -len(kv[1])))


def _failure_key(status: int, body: bytes) -> str:
    if body.startswith(b"{"):
        try:
            message = str(json.loads(body).get("message", ""))[:80]
        except (ValueError, AttributeError):
            message = body[:80].decode(errors="replace")
    else:
        message = body[:80].decode(errors="replace")
    return f"{status} {re.sub(r'[0-9]+', 'N', message)}"
