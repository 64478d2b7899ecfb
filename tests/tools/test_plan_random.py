"""kubegc plan against reality, on generated scenarios (hypothesis, ``scenarios.py``).

Each scenario is built on one running kubegc (all controllers, in its own namespaces),
planned read-only through a RestClient as the CLI does, then the same delete is run for
real (``plan_reality.py``); the objects the plan says are deleted, orphaned or kept by
another owner (survivors) and left deleting (hanging) must be exactly those kubegc then
deletes, keeps and leaves deleting, the plan's order constraints must hold in the real
order, and a pod must go no later than the plan's bound ("up to" its grace period,
``Step.latest``). What the plan says depends on the order the garbage collector takes
dependents in (``PlanReport.order_dependent``) is not compared.

The budget is fixed and the draws deterministic: ``BATCHES`` tests of
``KUBEGC_PLAN_GRAPHS`` scenarios each (default 5 x 40 = 200), batch ``b`` drawn from
hypothesis seed ``b`` (``@seed``), no example database, no shrinking. A failure prints
the scenario (``Graph.describe``) and hypothesis' ``@reproduce_failure`` blob; then

- ``KUBEGC_PLAN_REPRODUCE=<blob>`` replays exactly that scenario (the blob is the base64
  text in ``@reproduce_failure('<version>', b'<blob>')``, same hypothesis version);
- ``KUBEGC_PLAN_SEED=S`` runs ``KUBEGC_PLAN_GRAPHS`` scenarios drawn from seed S (one
  batch: the CI's batch b is seed b);
- ``KUBEGC_PLAN_SHRINK=1`` lets hypothesis shrink a failing scenario to a smaller one
  (each shrink step is a real run: minutes).

Then add the scenario as a named regression test (``test_plan_scenarios.py``).
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import Callable, Iterator

import hypothesis
import pytest
from hypothesis import HealthCheck, Phase, given, reproduce_failure, seed, settings

from kubegc.testing import Cluster

from .plan_reality import run_graph, scenario_cluster
from .scenarios import Graph, scenarios

BATCHES = 5
GRAPHS = int(os.environ.get("KUBEGC_PLAN_GRAPHS", "40"))


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    with scenario_cluster() as c:
        yield c


def _idents() -> Iterator[int]:
    n = 0
    while True:
        yield n
        n += 1


IDENTS = _idents()  # each run its own names, across batches and replays


def scenario_test(cluster: Cluster, batch: int) -> Callable[[], None]:
    """The hypothesis test of one batch (see the module docstring for the settings)."""
    phases = [Phase.explicit, Phase.generate]
    if os.environ.get("KUBEGC_PLAN_SHRINK"):
        phases.append(Phase.shrink)

    @settings(max_examples=GRAPHS, deadline=None, database=None, phases=phases,
              print_blob=True, suppress_health_check=list(HealthCheck))
    @given(graph=scenarios())
    def check(graph: Graph) -> None:
        graph.ident = next(IDENTS)
        asyncio.run(run_graph(cluster, graph))

    test: Callable[[], None] = check
    blob = os.environ.get("KUBEGC_PLAN_REPRODUCE")
    if blob:
        base64.b64decode(blob)  # a typo fails here, not as an odd hypothesis error
        test = reproduce_failure(hypothesis.__version__, blob.encode())(test)
    return seed(int(os.environ.get("KUBEGC_PLAN_SEED", batch)))(test)


def _batches() -> range:
    one = os.environ.get("KUBEGC_PLAN_SEED") or os.environ.get("KUBEGC_PLAN_REPRODUCE")
    return range(1) if one else range(BATCHES)


@pytest.mark.parametrize("batch", _batches())
def test_plan_matches_reality_on_generated_scenarios(cluster: Cluster, batch: int) -> None:
    scenario_test(cluster, batch)()
