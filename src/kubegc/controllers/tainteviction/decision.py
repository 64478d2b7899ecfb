"""What the taint-eviction controller does with one pod on a node with NoExecute taints
(cf. ``processPodOnNode`` in pkg/controller/tainteviction/taint_eviction.go): a pure
function of the pod's tolerations and the node's NoExecute taints, called by the controller
and by ``kubegc plan`` (one rule, one place).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kubegc.api.taints import (
    Taint,
    Toleration,
    get_matching_tolerations,
    min_toleration_seconds,
    taint_string,
    tolerates_taint,
    toleration_string,
)

#: the DisruptionTarget condition stamped on the pod before its DELETE
#: (``addConditionAndDeletePod``)
DISRUPTION_TARGET_REASON = "DeletionByTaintManager"
DISRUPTION_TARGET_MESSAGE = "Taint manager: deleting due to NoExecute taint"


@dataclass(frozen=True, slots=True)
class TaintEviction:
    """The pod is to be deleted ``after`` seconds (0: now) because of ``taint``; ``toleration``
    is the toleration whose ``tolerationSeconds`` decides when (None: no toleration matches
    ``taint``, the pod goes at once)."""

    after: float
    taint: Taint
    toleration: Toleration | None = None

    @property
    def reason(self) -> str:
        """The DeletionRecord reason (``kubegc.component.deletions.DELETION_REASONS``)."""
        return "UntoleratedTaint" if self.toleration is None else "TolerationExpired"

    def describe(self, node: str) -> str:
        taint = taint_string(self.taint)
        if self.toleration is None:
            return (f"{DISRUPTION_TARGET_MESSAGE} {taint} of node {node}: the pod has no "
                    "toleration for it")
        return (f"{DISRUPTION_TARGET_MESSAGE} {taint} of node {node}: its toleration "
                f"{toleration_string(self.toleration)} ran out")


def process_pod_on_node(tolerations: Sequence[Toleration], taints: Sequence[Taint]
                        ) -> TaintEviction | None:
    """None: keep the pod (no NoExecute taint, or every one tolerated forever); else when
    and why it is deleted: at once if some taint is not tolerated, else after the smallest
    ``tolerationSeconds`` of the tolerations used (``getMinTolerationTime``)."""
    if not taints:
        return None
    all_tolerated, used = get_matching_tolerations(taints, tolerations)
    if not all_tolerated:
        untolerated = next(t for t in taints
                           if not any(tolerates_taint(tol, t) for tol in tolerations))
        return TaintEviction(0.0, untolerated)
    seconds = min_toleration_seconds(used)
    if seconds is None:
        return None
    index = next((i for i, tol in enumerate(used)
                  if tol.get("tolerationSeconds") is not None
                  and max(int(tol["tolerationSeconds"]), 0) == int(seconds)), 0)
    return TaintEviction(seconds, taints[index], used[index])
