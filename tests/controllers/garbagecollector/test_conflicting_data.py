"""Port of upstream ``TestConflictingData``: references that disagree with what exists
(wrong namespace, wrong kind/version, cluster-scoped child of a namespaced kind, ...)."""

from __future__ import annotations

import pytest

from kubegc.controllers.garbagecollector import DecisionReason

from .steps import (
    Step,
    add_event,
    assert_state,
    create_in_client,
    delete_event,
    delete_from_client,
    insert_event,
    make_id,
    make_obj,
    node,
    process_attempt_to_delete,
    process_event,
    process_pending_graph_changes,
    run_steps,
    virtual_delete_event,
)

pod1ns1 = make_id("v1", "Pod", "ns1", "podname1", "poduid1")
pod2ns1 = make_id("v1", "Pod", "ns1", "podname2", "poduid2")
pod2ns2 = make_id("v1", "Pod", "ns2", "podname2", "poduid2")
node1 = make_id("v1", "Node", "", "nodename", "nodeuid1")
role1v1beta1 = make_id("rbac.authorization.k8s.io/v1beta1", "Role", "ns1", "role1", "roleuid1")
role1v1 = make_id("rbac.authorization.k8s.io/v1", "Role", "ns1", "role1", "roleuid1")
deployment1apps = make_id("apps/v1", "Deployment", "ns1", "deployment1", "deploymentuid1")
# not served, still referenced
deployment1extensions = make_id("extensions/v1beta1", "Deployment", "ns1", "deployment1",
                                "deploymentuid1")
# a reference to node1 from a namespaced object makes a virtual node with a namespace
node1_with_namespace = make_id("v1", "Node", "ns1", "nodename", "nodeuid1")
# a reference to pod1 from a cluster-scoped object makes a virtual node without one
pod1nonamespace = make_id("v1", "Pod", "", "podname1", "poduid1")
bad_secret_ref_with_deployment_uid = make_id("v1", "Secret", "ns1", "secretname", "deploymentuid1")
bad_child_pod = make_id("v1", "Pod", "ns1", "badpod", "badpoduid")
good_child_pod = make_id("v1", "Pod", "ns1", "goodpod", "goodpoduid")

INVALID_NS_POD2 = ('Warning OwnerRefInvalidNamespace ownerRef [v1/Pod, namespace: ns1, name: '
                   'podname2, uid: poduid2] does not exist in namespace "ns1" '
                   'involvedObject{kind=Pod,apiVersion=v1}')
INVALID_NS_NODE = ('Warning OwnerRefInvalidNamespace ownerRef [v1/Pod, namespace: , name: '
                   'podname1, uid: poduid1] does not exist in namespace "" '
                   'involvedObject{kind=Node,apiVersion=v1}')

GET_POD1 = "get /v1, Resource=pods ns=ns1 name=podname1"
GET_POD2 = "get /v1, Resource=pods ns=ns1 name=podname2"
DELETE_POD1 = "delete /v1, Resource=pods ns=ns1 name=podname1"
DELETE_POD2 = "delete /v1, Resource=pods ns=ns1 name=podname2"
GET_NODE = "get /v1, Resource=nodes name=nodename"
GET_ROLE_V1BETA1 = "get rbac.authorization.k8s.io/v1beta1, Resource=roles ns=ns1 name=role1"
GET_DEPLOYMENT = "get apps/v1, Resource=deployments ns=ns1 name=deployment1"


def pods(ns_obj: dict[str, object]) -> Step:
    return create_in_client("", "v1", "pods", ns_obj)


good_child_cluster_owner = [
    create_in_client("", "v1", "nodes", make_obj(node1)),
    pods(make_obj(pod1ns1, node1)),
    # observe namespaced child with not-yet-observed cluster-scoped parent
    process_event(add_event(pod1ns1, node1)),
    assert_state(
        graph_nodes=[node(pod1ns1, node1), node(node1_with_namespace, virtual=True)],
        pending_attempt_to_delete=[node(node1_with_namespace, virtual=True)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_NODE],
        graph_nodes=[node(pod1ns1, node1), node(node1_with_namespace, virtual=True)],
        pending_attempt_to_delete=[node(node1_with_namespace, virtual=True)],  # requeued
    ),
    # observe the cluster-scoped parent: observed, namespace coordinate fixed
    process_event(add_event(node1)),
    assert_state(
        graph_nodes=[node(pod1ns1, node1), node(node1)],
        pending_attempt_to_delete=[node(node1_with_namespace, virtual=True)],
    ),
    process_attempt_to_delete(1),  # stale virtual item dropped without API calls
    assert_state(graph_nodes=[node(pod1ns1, node1), node(node1)]),
]

bad_child_other_namespace_child_first = [
    pods(make_obj(pod1ns1, pod2ns1)),
    create_in_client("", "v1", "pods", make_obj(pod2ns2)),
    process_event(add_event(pod1ns1, pod2ns2)),
    assert_state(
        graph_nodes=[node(pod1ns1, pod2ns2), node(pod2ns1, virtual=True)],
        pending_attempt_to_delete=[node(pod2ns1, virtual=True)],
    ),
    process_event(add_event(pod2ns2)),
    assert_state(
        graph_nodes=[node(pod1ns1, pod2ns2), node(pod2ns2)],
        pending_attempt_to_delete=[node(pod2ns1, virtual=True), node(pod1ns1)],
        events=[INVALID_NS_POD2],
    ),
    process_attempt_to_delete(1),
    assert_state(
        graph_nodes=[node(pod1ns1, pod2ns2), node(pod2ns2)],
        pending_attempt_to_delete=[node(pod1ns1)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD1, GET_POD2, DELETE_POD1],
        graph_nodes=[node(pod1ns1, pod2ns2), node(pod2ns2)],
        absent_owner_cache=[pod2ns1],
    ),
    process_event(delete_event(pod1ns1)),
    assert_state(graph_nodes=[node(pod2ns2)], absent_owner_cache=[pod2ns1]),
]

bad_child_other_namespace_owner_first = [
    pods(make_obj(pod1ns1, pod2ns1)),
    create_in_client("", "v1", "pods", make_obj(pod2ns2)),
    process_event(add_event(pod2ns2)),
    assert_state(graph_nodes=[node(pod2ns2)]),
    process_event(add_event(pod1ns1, pod2ns1)),
    assert_state(
        graph_nodes=[node(pod1ns1, pod2ns1), node(pod2ns2)],
        pending_attempt_to_delete=[node(pod1ns1)],
        events=[INVALID_NS_POD2],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD1, GET_POD2, DELETE_POD1],
        graph_nodes=[node(pod1ns1, pod2ns1), node(pod2ns2)],
        absent_owner_cache=[pod2ns1],
    ),
    process_event(delete_event(pod1ns1)),
    assert_state(graph_nodes=[node(pod2ns2)], absent_owner_cache=[pod2ns1]),
]

bad_cluster_child_child_first = [
    create_in_client("", "v1", "nodes", make_obj(node1, pod1ns1)),
    pods(make_obj(pod1ns1)),
    process_event(add_event(node1, pod1ns1)),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod1nonamespace, virtual=True)],
        pending_attempt_to_delete=[node(pod1nonamespace, virtual=True)],
    ),
    process_attempt_to_delete(1),  # namespaced kind without namespace: not requeued
    assert_state(graph_nodes=[node(node1, pod1nonamespace), node(pod1nonamespace, virtual=True)]),
    process_event(add_event(pod1ns1)),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod1ns1)],
        events=[INVALID_NS_NODE],
        pending_attempt_to_delete=[node(node1, pod1ns1)],
    ),
    # never deleted, never retried (namespacedOwnerOfClusterScopedObjectErr)
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_NODE],
        graph_nodes=[node(node1, pod1nonamespace), node(pod1ns1)],
    ),
]

bad_cluster_child_owner_first = [
    create_in_client("", "v1", "nodes", make_obj(node1, pod1ns1)),
    pods(make_obj(pod1ns1)),
    process_event(add_event(pod1ns1)),
    assert_state(graph_nodes=[node(pod1ns1)]),
    process_event(add_event(node1, pod1ns1)),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod1ns1)],
        events=[INVALID_NS_NODE],
        pending_attempt_to_delete=[node(node1, pod1ns1)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_NODE],
        graph_nodes=[node(node1, pod1nonamespace), node(pod1ns1)],
    ),
]

good_child_non_preferred_version = [
    create_in_client("rbac.authorization.k8s.io", "v1", "roles", make_obj(role1v1)),
    create_in_client("rbac.authorization.k8s.io", "v1beta1", "roles", make_obj(role1v1beta1)),
    pods(make_obj(pod1ns1, role1v1beta1)),
    process_event(add_event(pod1ns1, role1v1beta1)),
    assert_state(
        graph_nodes=[node(pod1ns1, role1v1beta1), node(role1v1beta1, virtual=True)],
        pending_attempt_to_delete=[node(role1v1beta1, virtual=True)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_ROLE_V1BETA1],
        graph_nodes=[node(pod1ns1, role1v1beta1), node(role1v1beta1, virtual=True)],
        pending_attempt_to_delete=[node(role1v1beta1, virtual=True)],
    ),
    process_event(add_event(role1v1)),
    assert_state(
        graph_nodes=[node(pod1ns1, role1v1beta1), node(role1v1)],
        pending_attempt_to_delete=[node(role1v1beta1, virtual=True), node(pod1ns1, role1v1beta1)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        graph_nodes=[node(pod1ns1, role1v1beta1), node(role1v1)],
        pending_attempt_to_delete=[node(pod1ns1, role1v1beta1)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD1, GET_ROLE_V1BETA1],
        graph_nodes=[node(pod1ns1, role1v1beta1), node(role1v1)],
    ),
    delete_from_client("rbac.authorization.k8s.io", "v1", "roles", "ns1", "role1"),
    delete_from_client("rbac.authorization.k8s.io", "v1beta1", "roles", "ns1", "role1"),
    process_event(delete_event(role1v1)),
    assert_state(
        graph_nodes=[node(pod1ns1, role1v1beta1)],
        absent_owner_cache=[role1v1],
        pending_attempt_to_delete=[node(pod1ns1, role1v1beta1)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD1, GET_ROLE_V1BETA1, DELETE_POD1],
        absent_owner_cache=[role1v1, role1v1beta1],
        graph_nodes=[node(pod1ns1, role1v1beta1)],
    ),
    process_event(delete_event(pod1ns1)),
    assert_state(absent_owner_cache=[role1v1, role1v1beta1]),
]

child_inaccessible_version_child_first = [
    create_in_client("apps", "v1", "deployments", make_obj(deployment1apps)),
    pods(make_obj(pod1ns1, deployment1extensions)),
    process_event(add_event(pod1ns1, deployment1extensions)),
    assert_state(
        graph_nodes=[node(pod1ns1, deployment1extensions),
                     node(deployment1extensions, virtual=True)],
        pending_attempt_to_delete=[node(deployment1extensions, virtual=True)],
    ),
    process_attempt_to_delete(1),  # REST mapping error: requeued
    assert_state(
        graph_nodes=[node(pod1ns1, deployment1extensions),
                     node(deployment1extensions, virtual=True)],
        pending_attempt_to_delete=[node(deployment1extensions, virtual=True)],
    ),
    process_event(add_event(deployment1apps)),
    assert_state(
        graph_nodes=[node(pod1ns1, deployment1extensions), node(deployment1apps)],
        pending_attempt_to_delete=[node(deployment1extensions, virtual=True),
                                   node(pod1ns1, deployment1extensions)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        graph_nodes=[node(pod1ns1, deployment1extensions), node(deployment1apps)],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD1],
        graph_nodes=[node(pod1ns1, deployment1extensions), node(deployment1apps)],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions)],
    ),
    delete_from_client("apps", "v1", "deployments", "ns1", "deployment1"),
    process_event(delete_event(deployment1apps)),
    assert_state(
        graph_nodes=[node(pod1ns1, deployment1extensions)],
        absent_owner_cache=[deployment1apps],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions)],
    ),
    process_attempt_to_delete(1),  # never deleted: the reference cannot be resolved
    assert_state(
        client_actions=[GET_POD1],
        graph_nodes=[node(pod1ns1, deployment1extensions)],
        absent_owner_cache=[deployment1apps],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions)],
    ),
]

non_existent_owner_accessible_version_first = [
    pods(make_obj(pod1ns1, deployment1extensions)),
    pods(make_obj(pod2ns1, deployment1apps)),
    process_event(add_event(pod2ns1, deployment1apps)),
    assert_state(
        graph_nodes=[node(pod2ns1, deployment1apps), node(deployment1apps, virtual=True)],
        pending_attempt_to_delete=[node(deployment1apps, virtual=True)],
    ),
    process_event(add_event(pod1ns1, deployment1extensions)),
    assert_state(
        graph_nodes=[node(pod2ns1, deployment1apps), node(deployment1apps, virtual=True),
                     node(pod1ns1, deployment1extensions)],
        pending_attempt_to_delete=[node(deployment1apps, virtual=True),
                                   node(pod1ns1, deployment1extensions)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_DEPLOYMENT],
        pending_graph_changes=[virtual_delete_event(deployment1apps)],
        graph_nodes=[node(pod2ns1, deployment1apps), node(deployment1apps, virtual=True),
                     node(pod1ns1, deployment1extensions)],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD1],
        pending_graph_changes=[virtual_delete_event(deployment1apps)],
        graph_nodes=[node(pod2ns1, deployment1apps), node(deployment1apps, virtual=True),
                     node(pod1ns1, deployment1extensions)],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions)],
    ),
    process_pending_graph_changes(1),
    assert_state(
        graph_nodes=[node(pod2ns1, deployment1apps), node(deployment1extensions, virtual=True),
                     node(pod1ns1, deployment1extensions)],
        absent_owner_cache=[deployment1apps],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions),
                                   node(pod2ns1, deployment1apps),
                                   node(deployment1extensions, virtual=True)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD1],
        graph_nodes=[node(pod2ns1, deployment1apps), node(deployment1extensions, virtual=True),
                     node(pod1ns1, deployment1extensions)],
        absent_owner_cache=[deployment1apps],
        pending_attempt_to_delete=[node(pod2ns1, deployment1apps),
                                   node(deployment1extensions, virtual=True),
                                   node(pod1ns1, deployment1extensions)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD2, DELETE_POD2],
        graph_nodes=[node(pod2ns1, deployment1apps), node(deployment1extensions, virtual=True),
                     node(pod1ns1, deployment1extensions)],
        absent_owner_cache=[deployment1apps],
        pending_attempt_to_delete=[node(deployment1extensions, virtual=True),
                                   node(pod1ns1, deployment1extensions)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        graph_nodes=[node(pod2ns1, deployment1apps), node(deployment1extensions, virtual=True),
                     node(pod1ns1, deployment1extensions)],
        absent_owner_cache=[deployment1apps],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions),
                                   node(deployment1extensions, virtual=True)],
    ),
    process_event(delete_event(pod2ns1)),
    assert_state(
        graph_nodes=[node(deployment1extensions, virtual=True),
                     node(pod1ns1, deployment1extensions)],
        absent_owner_cache=[deployment1apps],
        pending_attempt_to_delete=[node(pod1ns1, deployment1extensions),
                                   node(deployment1extensions, virtual=True)],
    ),
]

BAD = bad_secret_ref_with_deployment_uid
GET_BADPOD = "get /v1, Resource=pods ns=ns1 name=badpod"
DELETE_BADPOD = "delete /v1, Resource=pods ns=ns1 name=badpod"
GET_GOODPOD = "get /v1, Resource=pods ns=ns1 name=goodpod"
GET_SECRET = "get /v1, Resource=secrets ns=ns1 name=secretname"

_incorrect_version_setup = [
    create_in_client("apps", "v1", "deployments", make_obj(deployment1apps)),
    pods(make_obj(bad_child_pod, BAD)),
    pods(make_obj(good_child_pod, deployment1apps)),
    process_event(add_event(bad_child_pod, BAD)),
    assert_state(
        graph_nodes=[node(bad_child_pod, BAD), node(BAD, virtual=True)],
        pending_attempt_to_delete=[node(BAD, virtual=True)],
    ),
    process_event(add_event(good_child_pod, deployment1apps)),
    assert_state(
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(BAD, virtual=True)],
        pending_attempt_to_delete=[node(BAD, virtual=True), node(good_child_pod, deployment1apps)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_SECRET],
        pending_graph_changes=[virtual_delete_event(BAD)],
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(BAD, virtual=True)],
        pending_attempt_to_delete=[node(good_child_pod, deployment1apps)],
    ),
    process_attempt_to_delete(1),  # good child: its owner exists (200), stays
    assert_state(
        client_actions=[GET_GOODPOD, GET_DEPLOYMENT],
        pending_graph_changes=[virtual_delete_event(BAD)],
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(BAD, virtual=True)],
    ),
]

incorrect_version_bad_parent_delete_then_good_parent = [
    *_incorrect_version_setup,
    process_pending_graph_changes(1),
    assert_state(
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(deployment1apps, virtual=True)],  # switched to the alternate identity
        absent_owner_cache=[BAD],
        pending_attempt_to_delete=[node(bad_child_pod, BAD), node(deployment1apps, virtual=True)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_BADPOD, DELETE_BADPOD],  # absence of the bad parent is cached
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(deployment1apps, virtual=True)],
        absent_owner_cache=[BAD],
        pending_attempt_to_delete=[node(deployment1apps, virtual=True)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_DEPLOYMENT],
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(deployment1apps, virtual=True)],
        absent_owner_cache=[BAD],
        pending_attempt_to_delete=[node(deployment1apps, virtual=True)],  # not yet observed
    ),
    process_event(add_event(deployment1apps)),
    assert_state(
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(deployment1apps)],
        absent_owner_cache=[BAD],
        pending_attempt_to_delete=[node(deployment1apps)],  # still queued, no longer virtual
    ),
    process_event(delete_event(bad_child_pod, BAD)),
    assert_state(
        graph_nodes=[node(good_child_pod, deployment1apps), node(deployment1apps)],
        absent_owner_cache=[BAD],
        pending_attempt_to_delete=[node(deployment1apps)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_DEPLOYMENT],
        graph_nodes=[node(good_child_pod, deployment1apps), node(deployment1apps)],
        absent_owner_cache=[BAD],
    ),
]

incorrect_version_good_parent_then_bad_parent_delete = [
    *_incorrect_version_setup,
    insert_event(add_event(deployment1apps)),
    assert_state(
        pending_graph_changes=[add_event(deployment1apps), virtual_delete_event(BAD)],
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(BAD, virtual=True)],
    ),
    process_pending_graph_changes(1),
    assert_state(
        pending_graph_changes=[virtual_delete_event(BAD)],
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(deployment1apps)],
        pending_attempt_to_delete=[node(bad_child_pod, BAD)],
    ),
    process_pending_graph_changes(1),
    assert_state(
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(deployment1apps)],
        absent_owner_cache=[BAD],
        pending_attempt_to_delete=[node(bad_child_pod, BAD)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_BADPOD, DELETE_BADPOD],
        graph_nodes=[node(good_child_pod, deployment1apps), node(bad_child_pod, BAD),
                     node(deployment1apps)],
        absent_owner_cache=[BAD],
    ),
    process_event(delete_event(bad_child_pod, BAD)),
    assert_state(
        graph_nodes=[node(good_child_pod, deployment1apps), node(deployment1apps)],
        absent_owner_cache=[BAD],
    ),
]

cluster_bad_child_namespaced_good_child_missing_parent = [
    pods(make_obj(pod2ns1, pod1ns1)),
    create_in_client("", "v1", "nodes", make_obj(node1, pod1nonamespace)),
    process_event(add_event(node1, pod1nonamespace)),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod1nonamespace, virtual=True)],
        pending_attempt_to_delete=[node(pod1nonamespace, virtual=True)],
    ),
    process_event(add_event(pod2ns1, pod1ns1)),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod2ns1, pod1ns1),
                     node(pod1nonamespace, virtual=True)],
        pending_attempt_to_delete=[node(pod1nonamespace, virtual=True), node(pod2ns1, pod1ns1)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod2ns1, pod1ns1),
                     node(pod1nonamespace, virtual=True)],
        pending_attempt_to_delete=[node(pod2ns1, pod1ns1)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD2, GET_POD1, DELETE_POD2],
        graph_nodes=[node(node1, pod1nonamespace), node(pod2ns1, pod1ns1),
                     node(pod1nonamespace, virtual=True)],
        absent_owner_cache=[pod1ns1],
    ),
    process_event(delete_event(pod2ns1, pod1ns1)),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod1nonamespace, virtual=True)],
        absent_owner_cache=[pod1ns1],
    ),
]

namespaced_good_child_cluster_bad_child_missing_parent = [
    pods(make_obj(pod2ns1, pod1ns1)),
    create_in_client("", "v1", "nodes", make_obj(node1, pod1nonamespace)),
    process_event(add_event(pod2ns1, pod1ns1)),
    assert_state(
        graph_nodes=[node(pod2ns1, pod1ns1), node(pod1ns1, virtual=True)],
        pending_attempt_to_delete=[node(pod1ns1, virtual=True)],
    ),
    process_event(add_event(node1, pod1nonamespace)),
    assert_state(
        graph_nodes=[node(pod2ns1, pod1ns1), node(node1, pod1nonamespace),
                     node(pod1ns1, virtual=True)],
        pending_attempt_to_delete=[node(pod1ns1, virtual=True), node(node1, pod1nonamespace)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD1],
        graph_nodes=[node(node1, pod1nonamespace), node(pod2ns1, pod1ns1),
                     node(pod1ns1, virtual=True)],
        pending_graph_changes=[virtual_delete_event(pod1ns1)],
        pending_attempt_to_delete=[node(node1, pod1nonamespace)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_NODE],
        graph_nodes=[node(node1, pod1nonamespace), node(pod2ns1, pod1ns1),
                     node(pod1ns1, virtual=True)],
        pending_graph_changes=[virtual_delete_event(pod1ns1)],
    ),
    process_pending_graph_changes(1),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod2ns1, pod1ns1),
                     node(pod1nonamespace, virtual=True)],
        absent_owner_cache=[pod1ns1],
        pending_attempt_to_delete=[node(pod2ns1, pod1ns1), node(pod1nonamespace, virtual=True)],
    ),
    process_attempt_to_delete(1),
    assert_state(
        client_actions=[GET_POD2, DELETE_POD2],
        graph_nodes=[node(node1, pod1nonamespace), node(pod2ns1, pod1ns1),
                     node(pod1nonamespace, virtual=True)],
        absent_owner_cache=[pod1ns1],
        pending_attempt_to_delete=[node(pod1nonamespace, virtual=True)],
    ),
    process_event(delete_event(pod2ns1, pod1ns1)),
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod1nonamespace, virtual=True)],
        absent_owner_cache=[pod1ns1],
        pending_attempt_to_delete=[node(pod1nonamespace, virtual=True)],
    ),
    process_attempt_to_delete(1),  # steady state: no retries
    assert_state(
        graph_nodes=[node(node1, pod1nonamespace), node(pod1nonamespace, virtual=True)],
        absent_owner_cache=[pod1ns1],
    ),
]


@pytest.mark.parametrize("steps", [
    pytest.param(good_child_cluster_owner, id="good-child-in-ns1-cluster-scoped-owner"),
    pytest.param(bad_child_other_namespace_child_first, id="bad-child-owner-in-ns2-child-first"),
    pytest.param(bad_child_other_namespace_owner_first, id="bad-child-owner-in-ns2-owner-first"),
    pytest.param(bad_cluster_child_child_first, id="bad-cluster-child-ns-owner-child-first"),
    pytest.param(bad_cluster_child_owner_first, id="bad-cluster-child-ns-owner-owner-first"),
    pytest.param(good_child_non_preferred_version, id="owner-with-non-preferred-served-version"),
    pytest.param(child_inaccessible_version_child_first, id="owner-with-unserved-version"),
    pytest.param(non_existent_owner_accessible_version_first,
                 id="missing-owner-served-version-first"),
    pytest.param(incorrect_version_bad_parent_delete_then_good_parent,
                 id="wrong-kind-same-uid-bad-parent-delete-first"),
    pytest.param(incorrect_version_good_parent_then_bad_parent_delete,
                 id="wrong-kind-same-uid-good-parent-first"),
    pytest.param(cluster_bad_child_namespaced_good_child_missing_parent,
                 id="cluster-bad-child-namespaced-good-child-missing-parent"),
    pytest.param(namespaced_good_child_cluster_bad_child_missing_parent,
                 id="namespaced-good-child-cluster-bad-child-missing-parent"),
])
async def test_conflicting_data(steps: list[Step]) -> None:
    await run_steps(steps)


async def test_deletion_for_owner_in_other_namespace_is_recorded_with_that_reason() -> None:
    h = await run_steps(bad_child_other_namespace_owner_first)
    [record] = h.decisions.records
    assert (record.object, record.reason, record.propagation_policy) == (
        pod1ns1, DecisionReason.OWNER_IN_OTHER_NAMESPACE, "Background")
    assert [(o.uid, o.detail) for o in record.owners] == [("poduid2", "OtherNamespace")]


async def test_virtual_identity_switch_records_cached_reason() -> None:
    """The bad child is deleted on a cache hit; the record still says how the owner was
    found absent (the virtual delete after a 404)."""
    h = await run_steps(incorrect_version_bad_parent_delete_then_good_parent)
    [record] = h.decisions.records
    assert record.object == bad_child_pod and record.reason is DecisionReason.OWNER_ABSENT
    assert [o.detail for o in record.owners] == ["NotFound"]
