"""The corpus of invalid objects (``tests/invalid_corpus.py``, issue 26) against a real
``kubegc serve``: every case is refused with upstream's code, a cause naming upstream's
field path and a message holding upstream's text, and nothing is written.

All cases go over one keep-alive connection first (a module fixture); each test then reads
its answer, so a failure names the case and the rule."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server
from tests.fuzz_requests import Connection, FuzzRequest
from tests.invalid_corpus import BASES, CLUSTER_SCOPED, CORPUS, Invalid

JSON = {"Content-Type": "application/json"}
RUN = uuid.uuid4().hex[:6]


class Sent:
    """The answers to the corpus, by case id, and the names sent, by collection."""

    def __init__(self, namespace: str) -> None:
        self.namespace = namespace
        self.answers: dict[str, tuple[int, bytes]] = {}
        self.names: dict[str, set[str]] = {}

    def collection(self, case: Invalid) -> str:
        return "/" + BASES[case.resource].path.format(ns=self.namespace)


@pytest.fixture(scope="module")
def sent(server: Server) -> Iterator[Sent]:
    conn = Connection(server.url, server.token, str(server.ca_file))
    result = Sent(f"corpus-{RUN}")
    status, answer, _ = conn.send(FuzzRequest(
        "POST", "/api/v1/namespaces", JSON,
        json.dumps({"metadata": {"name": result.namespace}}).encode()))
    assert status == 201, answer
    for i, case in enumerate(CORPUS):
        body = case.body(f"{RUN}-c{i}")
        collection = result.collection(case)
        result.names.setdefault(collection, set()).add(body["metadata"]["name"])
        status, answer, _ = conn.send(FuzzRequest("POST", collection, JSON,
                                                  json.dumps(body).encode()))
        result.answers[case.id] = (status, answer)
    yield result
    conn.send(FuzzRequest("DELETE", f"/api/v1/namespaces/{result.namespace}"))
    conn.close()


def test_the_corpus_holds_every_upstream_reject_asked_for() -> None:
    """Issue 26 counts ~530 upstream rejects; each kind kubegc validates is in the corpus."""
    assert len(CORPUS) >= 530
    assert {case.resource for case in CORPUS} == set(BASES)


@pytest.mark.parametrize("case", CORPUS, ids=lambda case: case.id)
def test_invalid_object_refused(sent: Sent, case: Invalid) -> None:
    status, answer = sent.answers[case.id]
    assert status == case.code, f"{case.upstream}: {answer[:600]!r}"
    body: dict[str, Any] = json.loads(answer)
    assert body["kind"] == "Status" and body["reason"] == "Invalid", body
    for part in case.expected:
        assert part in body["message"], (case.upstream, body["message"])
    fields = [cause.get("field") for cause in body["details"].get("causes", [])]
    assert case.field in fields, (case.upstream, fields)


def test_nothing_of_the_corpus_was_written(server: Server, sent: Sent) -> None:
    conn = Connection(server.url, server.token, str(server.ca_file))
    try:
        for collection, names in sent.names.items():
            status, answer, _ = conn.send(FuzzRequest("GET", collection))
            assert status == 200, answer
            stored = {item["metadata"]["name"] for item in json.loads(answer)["items"]}
            assert not stored & names, (collection, sorted(stored & names)[:5])
    finally:
        conn.close()
    assert {c for c in sent.names if any(c.endswith(BASES[k].path) for k in CLUSTER_SCOPED)}
