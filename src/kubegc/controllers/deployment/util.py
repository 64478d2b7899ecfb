"""Pure helpers of the Deployment controller (cf. pkg/controller/deployment/util/
deployment_util.go): revisions and annotations, maxSurge/maxUnavailable, finding the new
and old ReplicaSets, replica counts, proportional scaling (conditions: see
``deployment_conditions``).

Nothing here talks to the API; functions that say ``set_`` mutate the dict they are given
(always a private copy made by the controller), the others only read.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Sequence
from typing import Any

from kubegc.api.meta import uid_of
from kubegc.api.pod import (
    creation_key as creation_key,
)
from kubegc.api.types import Obj

DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
REVISION_HISTORY_ANNOTATION = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"
DEPRECATED_ROLLBACK_TO = "deprecated.deployment.rollback.to"
LAST_APPLIED_CONFIG_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration"
MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000

ANNOTATIONS_TO_SKIP = frozenset({
    LAST_APPLIED_CONFIG_ANNOTATION, REVISION_ANNOTATION, REVISION_HISTORY_ANNOTATION,
    DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, DEPRECATED_ROLLBACK_TO,
})


_MAX_INT32 = 2**31 - 1


def _spec(obj: Obj) -> dict[str, Any]:
    return obj.get("spec") or {}


def _annotations(obj: Obj) -> dict[str, str]:
    meta = obj.setdefault("metadata", {})
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
        meta["annotations"] = annotations
    return annotations


def replicas(obj: Obj | None) -> int:
    """``spec.replicas`` (1 when unset, as defaulting does)."""
    if obj is None:
        return 0
    value = _spec(obj).get("replicas")
    return 1 if value is None else int(value)


def status_int(obj: Obj | None, key: str) -> int:
    return int(((obj or {}).get("status") or {}).get(key) or 0)


def strategy_type(d: Obj) -> str:
    return str((_spec(d).get("strategy") or {}).get("type") or "RollingUpdate")


def is_rolling_update(d: Obj) -> bool:
    return strategy_type(d) == "RollingUpdate"


# --- maxSurge / maxUnavailable ----------------------------------------------------------


def scaled_value(value: Any, total: int, *, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    text = str(value)
    if not text.endswith("%"):
        raise ValueError("invalid value for IntOrString: invalid type: string is not a "
                         "percentage")
    try:
        percent = int(text[:-1])
    except ValueError:
        raise ValueError(f'invalid value "{text}": strconv.Atoi: parsing "{text[:-1]}": '
                         "invalid syntax") from None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def resolve_fenceposts(max_surge: Any, max_unavailable: Any, desired: int) -> tuple[int, int]:
    """``ResolveFenceposts``: surge rounds up, unavailable down; never both zero."""
    surge = scaled_value(0 if max_surge is None else max_surge, desired, round_up=True)
    unavailable = scaled_value(0 if max_unavailable is None else max_unavailable, desired,
                               round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def _rolling(d: Obj) -> dict[str, Any]:
    return (_spec(d).get("strategy") or {}).get("rollingUpdate") or {}


def max_surge(d: Obj) -> int:
    if not is_rolling_update(d):
        return 0
    rolling = _rolling(d)
    return resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"),
                              replicas(d))[0]


def max_unavailable(d: Obj) -> int:
    if not is_rolling_update(d) or replicas(d) == 0:
        return 0
    rolling = _rolling(d)
    _, unavailable = resolve_fenceposts(rolling.get("maxSurge"), rolling.get("maxUnavailable"),
                                        replicas(d))
    return min(unavailable, replicas(d))


# --- revisions and annotations -----------------------------------------------------------


def revision(obj: Obj) -> int | None:
    text = ((obj.get("metadata") or {}).get("annotations") or {}).get(REVISION_ANNOTATION)
    if text is None:
        return 0
    try:
        return int(text)
    except ValueError:
        return None


def max_revision(rss: Iterable[Obj]) -> int:
    return max((r for r in (revision(rs) for rs in rss) if r is not None), default=0)


def copy_deployment_annotations_to_replica_set(d: Obj, rs: Obj) -> bool:
    changed = False
    rs_annotations = _annotations(rs)
    for key, value in ((d.get("metadata") or {}).get("annotations") or {}).items():
        if key in ANNOTATIONS_TO_SKIP or rs_annotations.get(key) == value:
            continue
        rs_annotations[key] = value
        changed = True
    return changed


def set_replicas_annotations(rs: Obj, desired: int, maximum: int) -> bool:
    annotations = _annotations(rs)
    changed = False
    for key, value in ((DESIRED_REPLICAS_ANNOTATION, str(desired)),
                       (MAX_REPLICAS_ANNOTATION, str(maximum))):
        if annotations.get(key) != value:
            annotations[key] = value
            changed = True
    return changed


def replicas_annotations_need_update(rs: Obj, desired: int, maximum: int) -> bool:
    annotations = (rs.get("metadata") or {}).get("annotations") or {}
    return (annotations.get(DESIRED_REPLICAS_ANNOTATION) != str(desired)
            or annotations.get(MAX_REPLICAS_ANNOTATION) != str(maximum))


def _append_revision_history(annotations: dict[str, str], old_revision: str) -> None:
    history = annotations.get(REVISION_HISTORY_ANNOTATION, "")
    if not history:
        annotations[REVISION_HISTORY_ANNOTATION] = old_revision
        return
    old = history.split(",")
    total, start = len(history) + len(old_revision) + 1, 0
    while total > MAX_REV_HISTORY_LENGTH_IN_CHARS and start < len(old):
        total -= len(old[start]) + 1
        start += 1
    if total <= MAX_REV_HISTORY_LENGTH_IN_CHARS:
        annotations[REVISION_HISTORY_ANNOTATION] = ",".join([*old[start:], old_revision])


def set_new_replica_set_annotations(d: Obj, rs: Obj, new_revision: str, *, exists: bool,
                                    ) -> bool:
    """Copy the deployment's annotations, raise the revision, record the history of a
    rolled-back-to ReplicaSet, and (for a new one) the replicas annotations."""
    changed = copy_deployment_annotations_to_replica_set(d, rs)
    annotations = _annotations(rs)
    old_revision = annotations.get(REVISION_ANNOTATION)
    try:
        old_int = int(old_revision) if old_revision else 0
    except ValueError:
        return False
    new_int = int(new_revision)
    if old_int < new_int:
        annotations[REVISION_ANNOTATION] = new_revision
        changed = True
        if old_revision is not None:
            _append_revision_history(annotations, old_revision)
    if not exists and set_replicas_annotations(rs, replicas(d), replicas(d) + max_surge(d)):
        changed = True
    return changed


def set_deployment_revision(d: Obj, rev: str) -> bool:
    annotations = _annotations(d)
    if annotations.get(REVISION_ANNOTATION) == rev:
        return False
    annotations[REVISION_ANNOTATION] = rev
    return True


def desired_replicas_annotation(rs: Obj) -> int | None:
    text = ((rs.get("metadata") or {}).get("annotations") or {}).get(DESIRED_REPLICAS_ANNOTATION)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _max_replicas_annotation(rs: Obj) -> int | None:
    text = ((rs.get("metadata") or {}).get("annotations") or {}).get(MAX_REPLICAS_ANNOTATION)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


# --- finding ReplicaSets ------------------------------------------------------------------


def _strip_empty(value: Any) -> Any:
    """Semantic equality treats nil and empty maps/lists alike: drop empty ones."""
    if isinstance(value, dict):
        out = {k: _strip_empty(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v not in ({}, [], None)}
    if isinstance(value, list):
        return [_strip_empty(v) for v in value]
    return value


def equal_ignore_hash(template1: Obj, template2: Obj) -> bool:
    """Templates equal except for the pod-template-hash label (cf. ``EqualIgnoreHash``)."""
    t1, t2 = copy.deepcopy(template1), copy.deepcopy(template2)
    for t in (t1, t2):
        labels = (t.get("metadata") or {}).get("labels")
        if isinstance(labels, dict):
            labels.pop(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, None)
    return bool(_strip_empty(t1) == _strip_empty(t2))


def find_new_replica_set(d: Obj, rs_list: Sequence[Obj]) -> Obj | None:
    """The oldest ReplicaSet whose template equals the deployment's (ignoring the hash)."""
    template = _spec(d).get("template") or {}
    for rs in sorted(rs_list, key=creation_key):
        if equal_ignore_hash(_spec(rs).get("template") or {}, template):
            return rs
    return None


def find_old_replica_sets(d: Obj, rs_list: Sequence[Obj]) -> tuple[list[Obj], list[Obj]]:
    """(old ReplicaSets with replicas, all old ReplicaSets)."""
    new_rs = find_new_replica_set(d, rs_list)
    all_old = [rs for rs in rs_list if new_rs is None or uid_of(rs) != uid_of(new_rs)]
    return [rs for rs in all_old if replicas(rs) != 0], all_old


def filter_active_replica_sets(rss: Iterable[Obj | None]) -> list[Obj]:
    return [rs for rs in rss if rs is not None and replicas(rs) > 0]


def find_active_or_latest(new_rs: Obj | None, old_rss: Sequence[Obj]) -> Obj | None:
    if new_rs is None and not old_rss:
        return None
    newest_first = sorted(old_rss, key=creation_key, reverse=True)
    active = filter_active_replica_sets([*newest_first, new_rs])
    if not active:
        return new_rs if new_rs is not None else newest_first[0]
    return active[0] if len(active) == 1 else None


def replica_count(rss: Iterable[Obj | None]) -> int:
    return sum(replicas(rs) for rs in rss if rs is not None)


def actual_replica_count(rss: Iterable[Obj | None]) -> int:
    return sum(status_int(rs, "replicas") for rs in rss if rs is not None)


def ready_replica_count(rss: Iterable[Obj | None]) -> int:
    return sum(status_int(rs, "readyReplicas") for rs in rss if rs is not None)


def available_replica_count(rss: Iterable[Obj | None]) -> int:
    return sum(status_int(rs, "availableReplicas") for rs in rss if rs is not None)


def new_rs_new_replicas(d: Obj, all_rss: Sequence[Obj | None], new_rs: Obj) -> int:
    """How many replicas the new ReplicaSet may have now (cf. ``NewRSNewReplicas``)."""
    if strategy_type(d) == "Recreate":
        return replicas(d)
    if not is_rolling_update(d):
        raise ValueError(f"deployment type {strategy_type(d)} isn't supported")
    surge = scaled_value(_rolling(d).get("maxSurge"), replicas(d), round_up=True)
    current = replica_count(all_rss)
    max_total = replicas(d) + surge
    if current >= max_total:
        return replicas(new_rs)
    scale_up = min(max_total - current, replicas(d) - replicas(new_rs))
    return replicas(new_rs) + scale_up


def is_saturated(d: Obj, rs: Obj | None) -> bool:
    if rs is None:
        return False
    desired = desired_replicas_annotation(rs)
    return (desired is not None and replicas(rs) == replicas(d) and desired == replicas(d)
            and status_int(rs, "availableReplicas") == replicas(d))


def get_proportion(rs: Obj | None, d: Obj, to_add: int, added: int) -> int:
    """The share of a proportional scale for one ReplicaSet (cf. ``GetProportion``)."""
    if rs is None or replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    fraction = _replica_set_fraction(rs, d)
    allowed = to_add - added
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _replica_set_fraction(rs: Obj, d: Obj) -> int:
    if replicas(d) == 0:
        return -replicas(rs)
    deployment_max = replicas(d) + max_surge(d)
    before = _max_replicas_annotation(rs)
    if not before:
        before = status_int(d, "replicas")
        if before == 0:
            return 0
    size = replicas(rs) * deployment_max / before
    return math.floor(size + 0.5) - replicas(rs)


def has_revision_history_limit(d: Obj) -> bool:
    limit = _spec(d).get("revisionHistoryLimit")
    return limit is not None and int(limit) != _MAX_INT32


def observed_generation(status: dict[str, Any]) -> int:
    return int(status.get("observedGeneration") or 0)


def generation(obj: Obj) -> int:
    return int((obj.get("metadata") or {}).get("generation") or 0)
