"""In-process admission webhooks for a test (``Cluster.admission_webhook``): a Python
callable gets each AdmissionReview the cluster sends (a dict, ``admission.k8s.io/v1``) and
answers it, with no HTTPS server, certificate or port. The cluster calls it exactly where it
calls a real webhook, so matching, failurePolicy, timeoutSeconds, patches and warnings are
the same; only the transport is skipped.

The handler answers with a whole AdmissionReview, or with just its ``response`` (``uid``
and the review's ``apiVersion``/``kind`` are filled in): ``{"allowed": True}``. It may be a
coroutine function; it runs on the cluster's loop, so it must not block.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

#: what a test registers
Handler = Callable[[dict[str, Any]], "dict[str, Any] | Awaitable[dict[str, Any]]"]

#: in-process webhooks' URLs live under a name that resolves nowhere (``.invalid``)
HOST = "kubegc-in-process.invalid"


def url_of(name: str) -> str:
    return f"https://{HOST}/{name}"


def wrapped(handler: Handler) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    """``handler`` answering a whole AdmissionReview."""

    async def call(review: dict[str, Any]) -> dict[str, Any]:
        answer = handler(review)
        if asyncio.iscoroutine(answer) or isinstance(answer, Awaitable):
            answer = await answer
        if not isinstance(answer, dict):
            raise TypeError(f"an admission webhook answers a dict, not {type(answer).__name__}")
        if "response" in answer:
            return answer
        response = {**answer, "uid": review["request"]["uid"]}
        return {"apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
                "kind": "AdmissionReview", "response": response}

    return call


__all__ = ["HOST", "Handler", "url_of", "wrapped"]
