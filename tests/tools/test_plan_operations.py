"""The pieces of ``kubegc plan evict|drain|taint|stop-kubelet`` that need no cluster: the
taint argument as ``kubectl taint`` reads it, and which simulated node runs each source
node."""

from __future__ import annotations

import pytest

from kubegc.kubelet.nodes import node_names
from kubegc.tools.plan.operations import parse_taint
from kubegc.tools.plan.snapshot import simulated_nodes


@pytest.mark.parametrize(("spec", "taint"), [
    ("maint=now:NoExecute", {"key": "maint", "value": "now", "effect": "NoExecute"}),
    ("maint:NoSchedule", {"key": "maint", "effect": "NoSchedule"}),
    ("example.com/gpu=a:b:PreferNoSchedule",
     {"key": "example.com/gpu", "value": "a:b", "effect": "PreferNoSchedule"}),
])
def test_parse_taint(spec: str, taint: dict[str, str]) -> None:
    assert parse_taint(spec) == taint


@pytest.mark.parametrize(("spec", "message"), [
    ("maint", "invalid taint spec: maint, a taint is key[=value]:effect"),
    (":NoExecute", "invalid taint spec: :NoExecute, a taint is key[=value]:effect"),
    ("maint=now:Sometimes", "invalid taint effect: Sometimes, unsupported taint effect"),
])
def test_parse_taint_refuses(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("[", r"\[").replace(
            "]", r"\]") + "$"):
        parse_taint(spec)


def test_kubegc_nodes_keep_their_names_others_take_the_free_ones() -> None:
    assert simulated_nodes(["kubegc-node-1", "kubegc-node-2", "kubegc-node-3"], node_names) == {
        "kubegc-node-1": "kubegc-node-1", "kubegc-node-2": "kubegc-node-2",
        "kubegc-node-3": "kubegc-node-3"}
    assert simulated_nodes(["ip-10-0-0-1", "kubegc-node-2"], node_names) == {
        "ip-10-0-0-1": "kubegc-node-1", "kubegc-node-2": "kubegc-node-2"}


def test_the_deleted_nodes_name_is_never_given_to_another_node() -> None:
    assert simulated_nodes(["worker-a", "worker-b"], node_names,
                           deleted_node="kubegc-node-1") == {
        "worker-a": "kubegc-node-2", "worker-b": "kubegc-node-3"}
