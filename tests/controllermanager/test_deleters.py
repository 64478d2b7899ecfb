"""Every controller the manager runs with a DeletionRecord sink can write its records (its
role allows it) and has its rule said for an audit log's DELETE (``DELETER_RULES``)."""

from __future__ import annotations

import pytest

from kubegc.api.auth import KUBE_CONTROLLER_MANAGER
from kubegc.authz.rules import PolicyRule
from kubegc.component.deletions import DELETER_RULES
from kubegc.controllermanager import CONTROLLERS
from kubegc.controllermanager.deleters import _Recorded
from kubegc.registry.groups.rbac.bootstrappolicy import CLUSTER_ROLES
from kubegc.registry.groups.rbac.controller_policy import CONTROLLER_ROLES

RECORDING = sorted(name for name, d in CONTROLLERS.items()
                   if isinstance(d.constructor, type) and issubclass(d.constructor, _Recorded))


def test_the_recording_controllers_are_the_deleting_ones() -> None:
    assert {"podgc", "taint-eviction-controller", "namespace", "replicaset", "job",
            "cronjob", "ttl-after-finished-controller", "statefulset", "daemonset",
            "deployment", "endpoints", "serviceaccount-token"} <= set(RECORDING)


@pytest.mark.parametrize("name", RECORDING)
def test_a_recording_controller_may_create_deletion_records(name: str) -> None:
    account = CONTROLLERS[name].service_account
    if account:
        rules = CONTROLLER_ROLES[account]
    else:  # the controller manager's own user
        [role] = [r for r in CLUSTER_ROLES if r["metadata"]["name"] == KUBE_CONTROLLER_MANAGER]
        rules = tuple(PolicyRule.from_obj(r) for r in role["rules"])
    assert any("create" in r.verbs and "kubegc.io" in r.api_groups
               and "deletionrecords" in r.resources for r in rules), name


@pytest.mark.parametrize("name", RECORDING)
def test_a_recording_controllers_rule_is_said_for_an_audit_log(name: str) -> None:
    assert DELETER_RULES[CONTROLLERS[name].service_account or KUBE_CONTROLLER_MANAGER]
