"""A plain official-client controller that survives every fault of docs/faults.md, and a
naive one that does not.

For every ConfigMap labelled ``copy=yes`` in a namespace, the controller keeps a ConfigMap
``<name>-copy`` with the same data, owned by it (an ownerReference with the owner's uid, so
the garbage collector deletes the copy with its owner).

What makes ``Copier`` survive (each line is a fault it was tested against,
``test_copier.py``):

* every request has a client timeout (``hang``: a stalled request or watch is abandoned);
* a watch ends after ``timeoutSeconds`` and the loop re-watches from the last
  resourceVersion (``closeWatch``), and relists on 410 (``expireWatch``);
* 409 Conflict on update: re-read and retry; AlreadyExists on create: the copy is there
  (``staleReads``: a lagging read said it was not); 429/5xx: back off (``Retry-After``) and
  retry (``error``);
* the copy's ownerReference carries the uid the owner has now, and a copy owned by another
  uid (the owner was deleted and recreated) is left to the garbage collector and written
  again for the new owner (``delete_and_recreate``);
* a level-triggered loop: every relist reconciles everything, so a lost event costs a
  resync period, not correctness.

``NaiveCopier`` is the same controller as often written first: one watch, no timeout, no
retry, a create whenever a read says 404. ``test_naive.py`` shows the bug each fault finds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client, watch
from kubernetes.client.rest import ApiException
from urllib3.exceptions import HTTPError

LABEL = "copy=yes"
RETRYABLE = frozenset({409, 429, 500, 503, 504})
#: client-side timeouts: no request waits longer (a hung server is abandoned)
REQUEST_TIMEOUT = 3.0
WATCH_SECONDS = 5


def copy_of(owner: Any) -> dict[str, Any]:
    meta = owner.metadata
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": f"{meta.name}-copy", "namespace": meta.namespace,
                         "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                                              "name": meta.name, "uid": meta.uid,
                                              "controller": True,
                                              "blockOwnerDeletion": True}]},
            "data": dict(owner.data or {})}


def owned_by(obj: Any, uid: str) -> bool:
    return any(ref.uid == uid for ref in obj.metadata.owner_references or [])


class Copier:
    """The robust controller; ``run`` until ``stop`` is set (in a thread)."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.core = client.CoreV1Api(api)
        self.namespace = namespace
        self.errors: list[str] = []  # what it survived, for the tests to see

    def run(self, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                self._list_and_watch(stop)
            except ApiException as e:
                self.errors.append(f"{e.status} {e.reason}")
                stop.wait(_retry_after(e))
            except HTTPError as e:  # timeouts, dropped connections
                self.errors.append(type(e).__name__)
                stop.wait(0.2)

    def _list_and_watch(self, stop: threading.Event) -> None:
        listed = self.core.list_namespaced_config_map(
            self.namespace, label_selector=LABEL, _request_timeout=REQUEST_TIMEOUT)
        for owner in listed.items:
            self.reconcile(owner)
        rv = listed.metadata.resource_version
        while not stop.is_set():
            w = watch.Watch()
            for event in w.stream(self.core.list_namespaced_config_map, self.namespace,
                                  label_selector=LABEL, resource_version=rv,
                                  timeout_seconds=WATCH_SECONDS,
                                  _request_timeout=WATCH_SECONDS + REQUEST_TIMEOUT):
                if stop.is_set():
                    w.stop()
                    return
                rv = event["object"].metadata.resource_version
                if event["type"] != "DELETED":
                    self.reconcile(event["object"])
            return  # the watch ended: relist (level-triggered)

    def reconcile(self, owner: Any) -> None:
        """Make ``owner``'s copy, retrying what the server may answer."""
        _retrying(lambda: self._reconcile(owner), self.errors)

    def _reconcile(self, owner: Any) -> None:
        want = copy_of(owner)
        name = want["metadata"]["name"]
        try:
            current = self.core.read_namespaced_config_map(
                name, self.namespace, _request_timeout=REQUEST_TIMEOUT)
        except ApiException as e:
            if e.status != 404:
                raise
            current = None
        if current is not None and not owned_by(current, owner.metadata.uid):
            return  # a copy of an owner gone by now: the GC deletes it; then we write ours
        if current is None:
            try:
                self.core.create_namespaced_config_map(self.namespace, want,
                                                       _request_timeout=REQUEST_TIMEOUT)
            except ApiException as e:
                if e.status != 409:  # AlreadyExists: a stale read missed it
                    raise
                raise _Again() from e  # read it again, then update it
            return
        if (current.data or {}) != want["data"]:
            want["metadata"]["resourceVersion"] = current.metadata.resource_version
            self.core.replace_namespaced_config_map(name, self.namespace, want,
                                                    _request_timeout=REQUEST_TIMEOUT)


class _Again(Exception):
    """Retry the reconcile at once (a read went stale)."""


def _retry_after(e: ApiException) -> float:
    header = (e.headers or {}).get("Retry-After") if e.headers else None
    try:
        return min(float(header), 5.0) if header else 0.2
    except ValueError:
        return 0.2


def _retrying(step: Callable[[], None], errors: list[str], attempts: int = 20) -> None:
    for _ in range(attempts):
        try:
            step()
            return
        except _Again:
            errors.append("again")
        except ApiException as e:
            if e.status not in RETRYABLE:
                raise
            errors.append(f"{e.status} {e.reason}")
            time.sleep(_retry_after(e))
        except HTTPError as e:
            errors.append(type(e).__name__)
            time.sleep(0.2)
    raise RuntimeError(f"gave up after {attempts} attempts: {errors[-3:]}")


class NaiveCopier:
    """The same controller, naively: it works on a healthy cluster only."""

    def __init__(self, api: client.ApiClient, namespace: str) -> None:
        self.core = client.CoreV1Api(api)
        self.namespace = namespace

    def reconcile(self, owner: Any) -> None:
        want = copy_of(owner)
        try:
            self.core.read_namespaced_config_map(want["metadata"]["name"], self.namespace)
        except ApiException as e:
            if e.status != 404:
                raise
            self.core.create_namespaced_config_map(self.namespace, want)

    def run(self, stop: threading.Event) -> None:
        """List once, then watch forever: no timeout, no relist."""
        listed = self.core.list_namespaced_config_map(self.namespace, label_selector=LABEL)
        for owner in listed.items:
            self.reconcile(owner)
        for event in watch.Watch().stream(self.core.list_namespaced_config_map,
                                          self.namespace, label_selector=LABEL,
                                          resource_version=listed.metadata.resource_version):
            if stop.is_set():
                return
            if event["type"] != "DELETED":
                self.reconcile(event["object"])
