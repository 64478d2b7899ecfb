"""Small values shared by the tools: object references for reports, durations, times.

``ObjRef`` is how reports name an object (``Kind/name`` plus namespace and uid); it is a
frozen value, sortable, and renders like kubectl (``ConfigMap/app-config -n lab``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from kubegc.api.clock import parse_time_or_none
from kubegc.api.resources import split_api_version
from kubegc.api.types import Obj


@dataclass(frozen=True, slots=True, order=True)
class ObjRef:
    """An object as reports name it."""

    kind: str
    namespace: str
    name: str
    api_version: str = ""
    uid: str = ""

    @classmethod
    def of(cls, obj: Obj) -> ObjRef:
        meta = obj.get("metadata") or {}
        return cls(kind=str(obj.get("kind") or ""), namespace=str(meta.get("namespace") or ""),
                   name=str(meta.get("name") or ""), api_version=str(obj.get("apiVersion") or ""),
                   uid=str(meta.get("uid") or ""))

    @classmethod
    def from_owner_ref(cls, ref: dict[str, Any], namespace: str) -> ObjRef:
        return cls(kind=str(ref.get("kind") or ""), namespace=namespace,
                   name=str(ref.get("name") or ""), api_version=str(ref.get("apiVersion") or ""),
                   uid=str(ref.get("uid") or ""))

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]

    @property
    def short(self) -> str:
        """``Kind/name`` (what kubectl accepts as an argument)."""
        return f"{self.kind}/{self.name}"

    def __str__(self) -> str:
        return f"{self.short} -n {self.namespace}" if self.namespace else self.short

    def to_dict(self) -> dict[str, str]:
        return {"apiVersion": self.api_version, "kind": self.kind, "namespace": self.namespace,
                "name": self.name, "uid": self.uid}


def group_of(obj: Obj) -> str:
    return split_api_version(str(obj.get("apiVersion") or ""))[0]


def human_duration(seconds: float) -> str:
    """kubectl's short duration form: ``45s``, ``3m12s``, ``2h5m``, ``3d4h``."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        m, rest = divmod(s, 60)
        return f"{m}m{rest}s" if rest and m < 10 else f"{m}m"
    if s < 86400:
        h, rest = divmod(s, 3600)
        return f"{h}h{rest // 60}m" if rest // 60 and h < 10 else f"{h}h"
    d, rest = divmod(s, 86400)
    return f"{d}d{rest // 3600}h" if rest // 3600 and d < 10 else f"{d}d"


timestamp = parse_time_or_none


def age(value: Any, now: datetime) -> float | None:
    """Seconds from a wire timestamp to ``now`` (None when absent)."""
    t = timestamp(value)
    return None if t is None else (now - t).total_seconds()
