"""The fault object of ``POST /debug/kubegc/faults``, parsed once at the edge.

    {"match": {"user", "userAgent", "verb", "group", "resource", "subresource",
               "namespace", "name"},
     "action": {"type": "error" | "delay" | "hang" | "closeWatch" | "expireWatch"
                       | "staleReads", ...},
     "probability": 0..1, "count": N, "afterRequests": N}

Every match field is optional (absent: any); ``userAgent`` is a regular expression
searched in the User-Agent header, the others compare exactly; kubegc adds ``verbs``, a
list of verbs any of which matches. The answer adds ``id`` and
``fired``. Bad input is a 400 ``BadRequest`` naming the field (docs/faults.md).
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass, field
from typing import Any

from kubegc.api import errors
from kubegc.api.auth import Attributes

#: the error codes an ``error`` action may answer, as kube-apiserver writes them (actions.py)
ERROR_CODES = (409, 429, 500, 503, 504)
#: action types that act on a watch stream rather than on one answer
WATCH_ACTIONS = frozenset({"closeWatch", "expireWatch"})
ACTION_TYPES = frozenset({"error", "delay", "hang", "staleReads"}) | WATCH_ACTIONS
_MATCH_FIELDS = {"user": "user", "userAgent": "user_agent", "verb": "verb", "group": "group",
                 "resource": "resource", "subresource": "subresource",
                 "namespace": "namespace", "name": "name"}


@dataclass(frozen=True)
class Match:
    """Which requests a fault applies to (None: any)."""

    user: str | None = None
    user_agent: re.Pattern[str] | None = None
    verb: str | None = None
    group: str | None = None
    resource: str | None = None
    subresource: str | None = None
    namespace: str | None = None
    name: str | None = None
    #: kubegc's extension: any of these verbs (``kubegc.testing``'s ``conflicts``: writes)
    verbs: frozenset[str] | None = None

    def matches(self, attrs: Attributes, user_agent: str) -> bool:
        return ((self.verb is None or self.verb == attrs.verb)
                and (self.verbs is None or attrs.verb in self.verbs)
                and (self.resource is None or self.resource == attrs.resource)
                and (self.group is None or self.group == attrs.api_group)
                and (self.subresource is None or self.subresource == attrs.subresource)
                and (self.namespace is None or self.namespace == attrs.namespace)
                and (self.name is None or self.name == attrs.name)
                and (self.user is None or self.user == attrs.user.name)
                and (self.user_agent is None or self.user_agent.search(user_agent) is not None))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for wire, attr in _MATCH_FIELDS.items():
            value = getattr(self, attr)
            if value is not None:
                out[wire] = value.pattern if isinstance(value, re.Pattern) else value
        if self.verbs is not None:
            out["verbs"] = sorted(self.verbs)
        return out


@dataclass(frozen=True)
class Action:
    type: str
    code: int = 0
    retry_after_seconds: int = 0
    seconds: float = 0.0
    after_events: int = 0
    revisions_behind: int = 0

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        if self.type == "error":
            out["code"] = self.code
            if self.retry_after_seconds:
                out["retryAfterSeconds"] = self.retry_after_seconds
        elif self.type == "delay" or (self.type == "staleReads" and self.seconds):
            out["seconds"] = self.seconds
        elif self.type == "closeWatch":
            out["afterEvents"] = self.after_events
        if self.type == "staleReads" and self.revisions_behind:
            out["revisionsBehind"] = self.revisions_behind
        return out


@dataclass(eq=False)
class Fault:
    """One active fault. Its counters are the registry's to change (one event loop)."""

    id: str
    match: Match
    action: Action
    probability: float = 1.0
    count: int = 0  # 0: until cleared
    after_requests: int = 0
    seed: int | None = None
    #: the storage revision when the fault was set (``expireWatch``: what is older expired)
    revision: int = 0
    fired: int = 0
    seen: int = 0
    #: set when the fault is cleared or used up: hung requests and watches go on
    cleared: asyncio.Event = field(default_factory=asyncio.Event)
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        if self.seed is not None:
            self.rng.seed(self.seed)

    @property
    def exhausted(self) -> bool:
        return bool(self.count) and self.fired >= self.count

    def admits(self) -> bool:
        """Whether the fault answers this matching request: the first ``afterRequests``
        pass, then it fires with ``probability``."""
        self.seen += 1
        if self.seen <= self.after_requests:
            return False
        return self.probability >= 1.0 or self.rng.random() < self.probability

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "match": self.match.to_dict(),
                               "action": self.action.to_dict(),
                               "probability": self.probability}
        if self.count:
            out["count"] = self.count
        if self.after_requests:
            out["afterRequests"] = self.after_requests
        if self.seed is not None:
            out["seed"] = self.seed
        out["fired"] = self.fired
        return out


def parse_fault(doc: object, fault_id: str, revision: int) -> Fault:
    """The fault ``doc`` describes; raises a 400 ``StatusError`` for bad input."""
    if not isinstance(doc, dict):
        raise errors.bad_request("a fault is a JSON object")
    unknown = set(doc) - {"match", "action", "probability", "count", "afterRequests", "seed",
                          "id", "fired"}
    if unknown:
        raise errors.bad_request(f"unknown field {sorted(unknown)[0]!r} in fault")
    probability = doc.get("probability", 1.0)
    if (not isinstance(probability, int | float) or isinstance(probability, bool)
            or not 0.0 <= probability <= 1.0):
        raise errors.bad_request("probability: must be a number from 0 to 1")
    seed = doc.get("seed")
    if seed is not None and not _is_int(seed):
        raise errors.bad_request("seed: must be an integer")
    return Fault(id=fault_id, match=_parse_match(doc.get("match", {})),
                 action=_parse_action(doc.get("action")), probability=float(probability),
                 count=_count(doc, "count"), after_requests=_count(doc, "afterRequests"),
                 seed=seed, revision=revision)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _count(doc: dict[str, Any], key: str) -> int:
    value = doc.get(key, 0)
    if not _is_int(value) or value < 0:
        raise errors.bad_request(f"{key}: must be a non-negative integer")
    return int(value)


def _parse_match(doc: object) -> Match:
    if not isinstance(doc, dict):
        raise errors.bad_request("match: must be an object")
    values: dict[str, Any] = {}
    for key, value in doc.items():
        if key == "verbs":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise errors.bad_request("match.verbs: must be a list of strings")
            values["verbs"] = frozenset(value)
            continue
        attr = _MATCH_FIELDS.get(key)
        if attr is None:
            raise errors.bad_request(f"match: unknown field {key!r}")
        if not isinstance(value, str):
            raise errors.bad_request(f"match.{key}: must be a string")
        if attr == "user_agent":
            try:
                values[attr] = re.compile(value)
            except re.error as e:
                raise errors.bad_request(f"match.userAgent: invalid regular expression: {e}"
                                         ) from None
        else:
            values[attr] = value
    return Match(**values)


def _number(doc: dict[str, Any], key: str, *, required: bool) -> float:
    value = doc.get(key)
    if value is None and not required:
        return 0.0
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        raise errors.bad_request(f"action.{key}: must be a non-negative number")
    return float(value)


def _parse_action(doc: object) -> Action:
    if not isinstance(doc, dict):
        raise errors.bad_request("action: must be an object with a type")
    kind = doc.get("type")
    if kind not in ACTION_TYPES:
        raise errors.bad_request(f"action.type: must be one of {sorted(ACTION_TYPES)}")
    if kind == "error":
        code = doc.get("code")
        if code not in ERROR_CODES:
            raise errors.bad_request(f"action.code: must be one of {list(ERROR_CODES)}")
        retry = _number(doc, "retryAfterSeconds", required=False)
        return Action("error", code=int(code), retry_after_seconds=int(retry))
    if kind == "delay":
        return Action("delay", seconds=_number(doc, "seconds", required=True))
    if kind == "closeWatch":
        return Action("closeWatch", after_events=int(_number(doc, "afterEvents",
                                                             required=False)))
    if kind == "staleReads":
        behind = int(_number(doc, "revisionsBehind", required=False))
        seconds = _number(doc, "seconds", required=False)
        if (behind > 0) == (seconds > 0):
            raise errors.bad_request(
                "action: staleReads needs one of revisionsBehind or seconds")
        return Action("staleReads", revisions_behind=behind, seconds=seconds)
    return Action(str(kind))
