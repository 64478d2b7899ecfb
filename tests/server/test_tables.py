"""``metav1.Table`` rendering for ``kubectl get`` (upstream
pkg/printers/internalversion/printers.go)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from kubegc.api.clock import ManualClock
from kubegc.api.errors import StatusError
from kubegc.registry import Registry, printers
from kubegc.registry.printers import TableHandler, human_duration, short_human_duration
from kubegc.registry.printers.custom import custom_handler
from kubegc.registry.printers.jsonpath import evaluate_jsonpath
from kubegc.server.tables import table_accepted, table_version, to_table
from kubegc.storage.memory import MemoryKV

#: the built-in storages, for their tables
REGISTRY = Registry(MemoryKV(), clock=ManualClock())

NOW = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
KUBECTL_GET_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


def ago(**delta: float) -> str:
    return (NOW - timedelta(**delta)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, *, age: float = 26, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "default", "uid": f"uid-{name}",
            "resourceVersion": "7", "creationTimestamp": ago(seconds=age), **extra}


def handler(group: str, resource: str) -> TableHandler:
    """How the storage of ``group``/``resource`` prints (its ``TableConvertor``); Name and
    Age for a resource kubegc does not have."""
    info = REGISTRY.catalog.get(group, resource)
    if info is None:
        return printers.DEFAULT
    return REGISTRY.table(REGISTRY.target(group, info.storage_version, resource))


def cells(group: str, resource: str, obj: dict[str, Any]) -> list[Any]:
    table = to_table(handler(group, resource), [obj], now=NOW)
    assert len(table["rows"]) == 1
    row_cells: list[Any] = table["rows"][0]["cells"]
    assert len(row_cells) == len(table["columnDefinitions"])
    return row_cells


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        pytest.param(-3, "<invalid>", id="future-beyond-tolerance"),
        pytest.param(-1.5, "0s", id="tolerated-skew"),
        pytest.param(1, "1s", id="1s"),
        pytest.param(70, "70s", id="under-two-minutes-in-seconds"),
        pytest.param(190, "3m10s", id="3m10s"),
        pytest.param(300, "5m", id="whole-minutes"),
        pytest.param(70 * 60, "70m", id="70m"),
        pytest.param(3 * 3600 + 12 * 60, "3h12m", id="3h12m"),
        pytest.param(47 * 3600, "47h", id="47h"),
        pytest.param(49 * 3600, "2d1h", id="2d1h"),
        pytest.param((8 * 24 + 2) * 3600, "8d", id="8d"),
        pytest.param(367 * 86400, "367d", id="367d"),
        pytest.param((365 * 2 * 24 + 25) * 3600, "2y1d", id="2y1d"),
        pytest.param((365 * 8 * 24 + 2) * 3600, "8y", id="8y"),
    ],
)
def test_human_duration_matches_upstream(seconds: float, text: str) -> None:
    assert human_duration(seconds) == text


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(59, "59s"), (61, "1m"), (3599, "59m"), (3600, "1h"), (86400 * 3, "3d"),
     (86400 * 366, "1y")],
)
def test_short_human_duration(seconds: float, text: str) -> None:
    assert short_human_duration(seconds) == text


@pytest.mark.parametrize(
    ("accept", "version"),
    [
        pytest.param(KUBECTL_GET_ACCEPT, "v1", id="kubectl-get"),
        pytest.param("application/json;as=Table;v=v1beta1;g=meta.k8s.io", "v1beta1",
                     id="v1beta1"),
        pytest.param("application/json", None, id="plain-json"),
        pytest.param("", None, id="no-accept"),
        pytest.param("application/vnd.kubernetes.protobuf,application/json", None,
                     id="typed-client"),
        pytest.param("application/json, application/json;as=Table;v=v1;g=meta.k8s.io", None,
                     id="plain-json-listed-first"),
        pytest.param("application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io",
                     "v1", id="table-preferred-by-q"),
        pytest.param("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,"
                     "application/json", None, id="unsupported-as-falls-through"),
        pytest.param("text/html,application/json;as=Table;v=v1;g=meta.k8s.io", "v1",
                     id="unservable-type-skipped"),
    ],
)
def test_table_negotiation(accept: str, version: str | None) -> None:
    assert table_version(accept) == version
    assert table_accepted(accept) is (version is not None)


def container_status(name: str = "c", *, ready: bool = True, restarts: int = 0,
                     state: dict[str, Any] | None = None,
                     last_finished: str | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"name": name, "ready": ready, "restartCount": restarts,
                              "state": state if state is not None else {"running": {}}}
    if last_finished:
        status["lastState"] = {"terminated": {"exitCode": 1, "finishedAt": last_finished}}
    return status


def pod(phase: str = "Running", *, statuses: list[dict[str, Any]] | None = None,
        **spec_extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": meta("nginx", labels={"app": "nginx"}),
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec_extra},
        "status": {"phase": phase, "podIP": "10.0.0.5",
                   "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": statuses if statuses is not None else [
                       container_status()]},
    }


@pytest.mark.parametrize(
    ("obj", "ready", "status", "restarts"),
    [
        pytest.param(pod(), "1/1", "Running", "0", id="running"),
        pytest.param(pod(statuses=[container_status(restarts=2,
                                                    last_finished=ago(minutes=5))]),
                     "1/1", "Running", "2 (5m ago)", id="restarts-with-last-restart"),
        pytest.param(pod("Pending", statuses=[container_status(
            ready=False, state={"waiting": {"reason": "ContainerCreating"}})]),
            "0/1", "ContainerCreating", "0", id="container-creating"),
        pytest.param(pod("Succeeded", statuses=[container_status(
            ready=False, state={"terminated": {"exitCode": 0, "reason": "Completed"}})]),
            "0/1", "Completed", "0", id="completed"),
        pytest.param(pod("Failed", statuses=[container_status(
            ready=False, state={"terminated": {"exitCode": 137}})]),
            "0/1", "ExitCode:137", "0", id="exit-code-without-reason"),
        pytest.param(pod("Pending", statuses=[]), "0/1", "Pending", "0", id="no-statuses"),
    ],
)
def test_pod_rows(obj: dict[str, Any], ready: str, status: str, restarts: str) -> None:
    name, got_ready, got_status, got_restarts, age, ip, node, nominated, gates = cells(
        "", "pods", obj)
    assert (name, got_ready, got_status, got_restarts, age) == (
        "nginx", ready, status, restarts, "26s")
    assert (ip, node, nominated, gates) == ("10.0.0.5", "<none>", "<none>", "<none>")


def test_terminating_pod_and_completed_row_conditions() -> None:
    terminating = pod()
    terminating["metadata"]["deletionTimestamp"] = ago(seconds=1)
    assert cells("", "pods", terminating)[2] == "Terminating"
    done = pod("Succeeded", statuses=[container_status(
        ready=False, state={"terminated": {"exitCode": 0, "reason": "Completed"}})])
    done["metadata"]["deletionTimestamp"] = ago(seconds=1)
    table = to_table(handler("", "pods"), [done], now=NOW)
    assert table["rows"][0]["cells"][2] == "Completed"  # terminal phases stay as they are
    assert table["rows"][0]["conditions"] == [{
        "type": "Completed", "status": "True", "reason": "Succeeded",
        "message": "The pod has completed successfully."}]


def test_pod_init_containers_and_wide_cells() -> None:
    obj = pod("Pending", statuses=[container_status(ready=False, state={
        "waiting": {"reason": "PodInitializing"}})], initContainers=[
        {"name": "init1", "image": "busybox"}, {"name": "init2", "image": "busybox"}],
        nodeName="node1", readinessGates=[{"conditionType": "Ready"},
                                          {"conditionType": "example.com/lb"}])
    obj["status"]["initContainerStatuses"] = [
        {"name": "init1", "ready": False, "restartCount": 0,
         "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
        {"name": "init2", "ready": False, "restartCount": 3,
         "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
    ]
    row = cells("", "pods", obj)
    assert row[1:4] == ["0/1", "Init:CrashLoopBackOff", "3"]
    assert row[6:] == ["node1", "<none>", "1/2"]
    obj["status"]["initContainerStatuses"][1]["state"] = {"running": {}}
    assert cells("", "pods", obj)[2] == "Init:1/2"


def test_sidecar_init_container_counts_towards_ready() -> None:
    obj = pod(initContainers=[{"name": "proxy", "image": "envoy", "restartPolicy": "Always"}])
    obj["status"]["initContainerStatuses"] = [
        {"name": "proxy", "ready": True, "started": True, "restartCount": 1,
         "state": {"running": {}}}]
    obj["status"]["conditions"].append({"type": "Initialized", "status": "True"})
    assert cells("", "pods", obj)[1:4] == ["2/2", "Running", "1"]


def template(*images: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": i.split(":")[0], "image": i} for i in images]}}


@pytest.mark.parametrize(
    ("group", "resource", "obj", "expected"),
    [
        pytest.param("apps", "deployments", {
            "metadata": meta("web"), "spec": {"replicas": 3, "template": template("nginx:1.27"),
                                              "selector": {"matchLabels": {"app": "web"}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}},
            ["web", "2/3", 3, 2, "26s", "nginx", "nginx:1.27", "app=web"], id="deployment"),
        pytest.param("apps", "replicasets", {
            "metadata": meta("web-5d"), "spec": {"replicas": 2, "template": template("a", "b"),
                                                 "selector": {"matchLabels": {"app": "web"}}},
            "status": {"replicas": 2, "readyReplicas": 1}},
            ["web-5d", 2, 2, 1, "26s", "a,b", "a,b", "app=web"], id="replicaset"),
        pytest.param("", "replicationcontrollers", {
            "metadata": meta("rc"), "spec": {"replicas": 1, "selector": {"app": "web"},
                                             "template": template("nginx")},
            "status": {"replicas": 1}}, ["rc", 1, 1, 0, "26s", "nginx", "nginx", "app=web"],
            id="replicationcontroller"),
        pytest.param("apps", "statefulsets", {
            "metadata": meta("db"), "spec": {"replicas": 3, "template": template("pg")},
            "status": {"readyReplicas": 3}}, ["db", "3/3", "26s", "pg", "pg"], id="statefulset"),
        pytest.param("apps", "daemonsets", {
            "metadata": meta("ds"), "spec": {"template": template("agent"),
                                             "selector": {"matchLabels": {"app": "ds"}}},
            "status": {"desiredNumberScheduled": 2, "currentNumberScheduled": 2,
                       "numberReady": 1, "updatedNumberScheduled": 2, "numberAvailable": 1}},
            ["ds", 2, 2, 1, 2, 1, "<none>", "26s", "agent", "agent", "app=ds"], id="daemonset"),
        pytest.param("batch", "jobs", {
            "metadata": meta("pi", age=600), "spec": {"completions": 1, "template": template("pi"),
                                                      "selector": {"matchLabels": {"j": "1"}}},
            "status": {"succeeded": 1, "startTime": ago(seconds=590),
                       "completionTime": ago(seconds=580),
                       "conditions": [{"type": "Complete", "status": "True"}]}},
            ["pi", "Complete", "1/1", "10s", "10m", "pi", "pi", "j=1"], id="job-complete"),
        pytest.param("batch", "jobs", {
            "metadata": meta("q"), "spec": {"parallelism": 2, "template": template("w")},
            "status": {"startTime": ago(seconds=20)}},
            ["q", "Running", "0/1 of 2", "20s", "26s", "w", "w", "<none>"], id="job-running"),
        pytest.param("batch", "cronjobs", {
            "metadata": meta("cj"), "spec": {"schedule": "*/1 * * * *", "suspend": False,
                                             "jobTemplate": {"spec": {"template": template("b")}}},
            "status": {"active": [{"name": "cj-1"}], "lastScheduleTime": ago(seconds=30)}},
            ["cj", "*/1 * * * *", "<none>", "False", 1, "30s", "26s", "b", "b", "<none>"],
            id="cronjob"),
        pytest.param("", "services", {
            "metadata": meta("svc"), "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10",
                                              "ports": [{"port": 80, "protocol": "TCP"}],
                                              "selector": {"app": "web"}}},
            ["svc", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "26s", "app=web"],
            id="service"),
        pytest.param("", "services", {
            "metadata": meta("lb"), "spec": {"type": "LoadBalancer", "clusterIPs": ["10.0.0.1"],
                                             "ports": [{"port": 443, "nodePort": 30443}]}},
            ["lb", "LoadBalancer", "10.0.0.1", "<pending>", "443:30443/TCP", "26s", "<none>"],
            id="service-load-balancer-pending"),
        pytest.param("", "namespaces", {"metadata": meta("ns1"), "status": {"phase": "Active"}},
                     ["ns1", "Active", "26s"], id="namespace"),
        pytest.param("", "configmaps", {"metadata": meta("cm"), "data": {"a": "1"},
                                        "binaryData": {"b": "AA=="}}, ["cm", 2, "26s"],
                     id="configmap"),
        pytest.param("", "secrets", {"metadata": meta("s"), "type": "Opaque",
                                     "data": {"k": "dg=="}}, ["s", "Opaque", 1, "26s"],
                     id="secret"),
        pytest.param("", "serviceaccounts", {"metadata": meta("default")},
                     ["default", 0, "26s"], id="serviceaccount"),
        pytest.param("coordination.k8s.io", "leases", {
            "metadata": meta("kube-controller-manager"),
            "spec": {"holderIdentity": "host_1"}}, ["kube-controller-manager", "host_1", "26s"],
            id="lease"),
        pytest.param("", "endpoints", {"metadata": meta("svc"), "subsets": [
            {"addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 6)],
             "ports": [{"port": 80}]}]},
            ["svc", "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 2 more...", "26s"], id="endpoints"),
        pytest.param("", "nodes", {
            "metadata": meta("node1", labels={"node-role.kubernetes.io/control-plane": ""}),
            "spec": {"unschedulable": True},
            "status": {"conditions": [{"type": "Ready", "status": "False"}],
                       "nodeInfo": {"kubeletVersion": "v1.32.0"},
                       "addresses": [{"type": "InternalIP", "address": "192.168.0.2"}]}},
            ["node1", "NotReady,SchedulingDisabled", "control-plane", "26s", "v1.32.0",
             "192.168.0.2", "<none>", "<unknown>", "<unknown>", "<unknown>"], id="node"),
        pytest.param("", "persistentvolumeclaims", {
            "metadata": meta("data"), "spec": {"volumeName": "pv1", "storageClassName": "std"},
            "status": {"phase": "Bound", "capacity": {"storage": "1Gi"},
                       "accessModes": ["ReadWriteOnce"]}},
            ["data", "Bound", "pv1", "1Gi", "RWO", "std", "<unset>", "26s", "<unset>"],
            id="pvc"),
        pytest.param("apiextensions.k8s.io", "customresourcedefinitions", {
            "metadata": {"name": "widgets.example.com",
                         "creationTimestamp": "2026-02-01T10:00:00Z"}},
            ["widgets.example.com", "2026-02-01T10:00:00Z"], id="crd-created-at"),
        pytest.param("example.com", "gadgets", {"metadata": meta("g", age=3 * 86400)},
                     ["g", "3d"], id="default-name-age"),
    ],
)
def test_builtin_rows(group: str, resource: str, obj: dict[str, Any],
                      expected: list[Any]) -> None:
    assert cells(group, resource, obj) == expected


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        pytest.param({
            "metadata": meta("nginx.17f"), "involvedObject": {"kind": "Pod", "name": "nginx",
                                                              "fieldPath": "spec.containers{c}"},
            "type": "Normal", "reason": "Pulled", "message": " Image pulled \n",
            "source": {"component": "kubelet", "host": "node1"},
            "firstTimestamp": ago(minutes=5), "lastTimestamp": ago(seconds=40), "count": 3},
            ["40s", "Normal", "Pulled", "pod/nginx", "spec.containers{c}", "kubelet, node1",
             "Image pulled", "5m", 3, "nginx.17f"], id="classic-event"),
        pytest.param({
            "metadata": meta("e2"), "involvedObject": {"kind": "Node"},
            "type": "Warning", "reason": "Rebooted", "eventTime": "2026-03-01T11:59:00.000000Z",
            "reportingComponent": "kubelet", "reportingInstance": "n1"},
            ["60s", "Warning", "Rebooted", "node", "", "kubelet, n1", "", "60s", 1, "e2"],
            id="new-api-singleton"),
    ],
)
def test_event_rows(event: dict[str, Any], expected: list[Any]) -> None:
    assert cells("", "events", event) == expected


def test_events_k8s_io_events_share_the_core_printer() -> None:
    event = {"metadata": meta("e"), "regarding": {"kind": "Pod", "name": "p"}, "note": "hi",
             "reason": "R", "type": "Normal", "reportingController": "ctrl",
             "deprecatedCount": 2, "deprecatedLastTimestamp": ago(seconds=5),
             "deprecatedFirstTimestamp": ago(seconds=9)}
    assert cells("events.k8s.io", "events", event) == [
        "5s", "Normal", "R", "pod/p", "", "ctrl", "hi", "9s", 2, "e"]


def test_table_shape_columns_and_row_objects() -> None:
    obj = pod()
    table = to_table(handler("", "pods"), [obj], now=NOW,
                     list_metadata={"resourceVersion": "111", "continue": ""})
    assert (table["kind"], table["apiVersion"], table["metadata"]) == (
        "Table", "meta.k8s.io/v1", {"resourceVersion": "111"})
    columns = [(c["name"], c["type"], c["format"], c["priority"])
               for c in table["columnDefinitions"]]
    assert columns == [
        ("Name", "string", "name", 0), ("Ready", "string", "", 0), ("Status", "string", "", 0),
        ("Restarts", "string", "", 0), ("Age", "string", "", 0), ("IP", "string", "", 1),
        ("Node", "string", "", 1), ("Nominated Node", "string", "", 1),
        ("Readiness Gates", "string", "", 1)]
    assert all(c["description"] for c in table["columnDefinitions"])
    assert table["rows"][0]["object"] == {
        "kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
        "metadata": obj["metadata"]}
    full = to_table(handler("", "pods"), [obj], now=NOW, include_object="Object")
    assert full["rows"][0]["object"] is obj
    bare = to_table(handler("", "pods"), [obj], now=NOW, include_object="None",
                    with_column_definitions=False, version="v1beta1")
    assert bare["rows"][0]["object"] is None
    assert bare["columnDefinitions"] == []
    assert bare["apiVersion"] == "meta.k8s.io/v1beta1"
    with pytest.raises(StatusError, match="unrecognized includeObject value"):
        to_table(handler("", "pods"), [obj], now=NOW, include_object="Everything")


def test_empty_list_still_has_columns() -> None:
    table = to_table(handler("apps", "deployments"), [], now=NOW,
                     list_metadata={"resourceVersion": "9"})
    assert table["rows"] == []
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]


WIDGET: dict[str, Any] = {
    "apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta("w1"),
    "spec": {"replicas": 3, "labels": {"a": "b"}, "ratio": 1.0, "on": True},
    "status": {"conditions": [{"type": "Synced", "status": "False"},
                              {"type": "Ready", "status": "True"}],
               "lastSync": ago(minutes=3)},
}


def test_custom_resource_printer_columns() -> None:
    columns: list[dict[str, Any]] = [
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Ready", "type": "string",
         "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Synced", "type": "date", "jsonPath": ".status.lastSync", "priority": 1,
         "description": "When it last synced."},
        {"name": "Labels", "type": "string", "jsonPath": ".spec.labels"},
        {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
        {"name": "On", "type": "boolean", "jsonPath": ".spec.on"},
        {"name": "Missing", "type": "string", "jsonPath": ".spec.nothing"},
        {"name": "WrongType", "type": "integer", "jsonPath": ".metadata.name"},
    ]
    table = to_table(custom_handler(columns), [WIDGET], now=NOW)
    assert table["rows"][0]["cells"] == ["w1", 3, "True", "3m", "map[a:b]", 1.0, True, None,
                                         None]
    defs = table["columnDefinitions"]
    assert [(d["name"], d["type"], d["priority"]) for d in defs][:4] == [
        ("Name", "string", 0), ("Replicas", "integer", 0), ("Ready", "string", 0),
        ("Synced", "date", 1)]
    assert defs[1]["description"] == (
        "Custom resource definition column (in JSONPath format): .spec.replicas")
    assert defs[3]["description"] == "When it last synced."


def test_custom_resource_without_columns_gets_name_and_age() -> None:
    table = to_table(custom_handler([]), [WIDGET], now=NOW)
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"), ("Age", "date")]
    assert table["rows"][0]["cells"] == ["w1", "26s"]


@pytest.mark.parametrize(
    ("path", "results"),
    [
        pytest.param(".spec.replicas", [3], id="field"),
        pytest.param("{.spec.replicas}", [3], id="braces"),
        pytest.param(".status.conditions[0].type", ["Synced"], id="index"),
        pytest.param(".status.conditions[-1].type", ["Ready"], id="negative-index"),
        pytest.param(".status.conditions[*].type", ["Synced", "Ready"], id="wildcard"),
        pytest.param('.status.conditions[?(@.status!="True")].type', ["Synced"], id="filter-ne"),
        pytest.param(".metadata['name']", ["w1"], id="bracket-key"),
        pytest.param(".spec.missing.deeper", [], id="missing"),
    ],
)
def test_jsonpath_subset(path: str, results: list[Any]) -> None:
    assert evaluate_jsonpath(path, WIDGET) == results


def test_unsupported_jsonpath_gives_an_empty_cell() -> None:
    columns: list[dict[str, Any]] = [{"name": "X", "type": "string", "jsonPath": "..recursive"}]
    table = to_table(custom_handler(columns), [WIDGET], now=NOW)
    assert table["rows"][0]["cells"] == ["w1", None]
    with pytest.raises(ValueError, match="unsupported JSONPath"):
        evaluate_jsonpath("..recursive", WIDGET)


def test_missing_creation_timestamp_is_unknown_age() -> None:
    assert cells("", "configmaps", {"metadata": {"name": "x"}}) == ["x", 0, "<unknown>"]


def test_deletion_record_columns() -> None:
    record = {"apiVersion": "kubegc.io/v1", "kind": "DeletionRecord",
              "metadata": {"name": "u.delete.1", "creationTimestamp": "2026-01-01T00:00:00Z"},
              "action": "delete", "reason": "OwnerAbsent", "propagationPolicy": "Background",
              "message": "all owners are absent",
              "object": {"kind": "Pod", "namespace": "ns", "name": "p1"}}
    table = to_table(handler("kubegc.io", "deletionrecords"), [record],
                     now=datetime(2026, 1, 1, 0, 1, tzinfo=UTC))
    assert [c["name"] for c in table["columnDefinitions"]] == [
        "Name", "Action", "Object", "Reason", "Deleter", "Policy", "Message", "Age"]
    assert table["rows"][0]["cells"] == ["u.delete.1", "delete", "ns/pod/p1", "OwnerAbsent",
                                         "garbage-collector-controller", "Background",
                                         "all owners are absent", "60s"]


def test_deletion_record_names_its_deleter() -> None:
    record = {"apiVersion": "kubegc.io/v1", "kind": "DeletionRecord",
              "metadata": {"name": "u.delete.2", "creationTimestamp": "2026-01-01T00:00:00Z"},
              "action": "delete", "reason": "NodeDeleted", "deleter": "pod-garbage-collector",
              "message": "PodGC: node no longer exists", "node": "kubegc-node-2",
              "object": {"kind": "Pod", "namespace": "ns", "name": "p1"}}
    table = to_table(handler("kubegc.io", "deletionrecords"), [record],
                     now=datetime(2026, 1, 1, 0, 1, tzinfo=UTC))
    assert table["rows"][0]["cells"][3:6] == ["NodeDeleted", "pod-garbage-collector", "<none>"]
