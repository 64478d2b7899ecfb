"""Probes and lifecycle hooks (``validation_probes``) and volume mount sub-paths
(``validation_podspec``); the answers a server gives are in ``tests/invalid_corpus.py``."""

from __future__ import annotations

from typing import Any

from kubegc.registry.groups.core.validation_pods import validate_pod_spec
from kubegc.registry.groups.core.validation_podspec import validate_volume_mounts
from kubegc.registry.groups.core.validation_probes import validate_container_hooks


def _causes(container: dict[str, Any], grace: Any = 30, *, init: bool = False) -> list[
        tuple[str, str]]:
    return [(c.field, c.message)
            for c in validate_container_hooks(container, grace, "c", init=init)]


def test_valid_probes_and_hooks_as_the_suite_writes_them() -> None:
    """What kubectl and the tests send (zero values are upstream's defaults)."""
    container = {
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"},
                          "successThreshold": 0, "periodSeconds": 0},
        "readinessProbe": {"httpGet": {"port": 8080, "scheme": "HTTPS",
                                       "httpHeaders": [{"name": "X-Ok", "value": "v"}]}},
        "startupProbe": {"grpc": {"port": 9090}, "failureThreshold": 30,
                         "terminationGracePeriodSeconds": 5},
        "lifecycle": {"preStop": {"sleep": {"seconds": 0}},
                      "postStart": {"exec": {"command": ["true"]}}}}
    assert _causes(container) == []
    assert _causes({"lifecycle": {"preStop": {"sleep": {"seconds": 30}}}}) == []
    spec = {"containers": [{"name": "c", "image": "i", **container}],
            "initContainers": [{"name": "s", "image": "i", "restartPolicy": "Always",
                                "readinessProbe": {"tcpSocket": {"port": 1}}}]}
    assert validate_pod_spec(spec, "spec") == []


def test_one_handler_and_its_rules() -> None:
    assert _causes({"livenessProbe": {"exec": {"command": []}, "httpGet": {"port": 1},
                                      "grpc": {"port": 1}}}) == [
        ("c.livenessProbe.httpGet", "Forbidden: may not specify more than 1 handler type"),
        ("c.livenessProbe.grpc", "Forbidden: may not specify more than 1 handler type"),
        ("c.livenessProbe.exec.command", "Required value")]
    assert _causes({"readinessProbe": {"timeoutSeconds": -1, "successThreshold": 3}}) == [
        ("c.readinessProbe", "Required value: must specify a handler type"),
        ("c.readinessProbe.timeoutSeconds",
         "Invalid value: -1: must be greater than or equal to 0")]


def test_liveness_and_startup_need_one_success() -> None:
    assert _causes({"startupProbe": {"tcpSocket": {"port": 1}, "successThreshold": -1}}) == [
        ("c.startupProbe.successThreshold",
         "Invalid value: -1: must be greater than or equal to 0"),
        ("c.startupProbe.successThreshold", "Invalid value: -1: must be 1")]


def test_sleep_is_bounded_by_the_pods_grace_period() -> None:
    hook = {"lifecycle": {"preStop": {"sleep": {"seconds": 31}}}}
    assert _causes(hook) == [("c.lifecycle.preStop.sleep", "Invalid value: 31: must be "
                              "non-negative and less than terminationGracePeriodSeconds (30)")]
    assert _causes(hook, grace=60) == []


def test_init_containers_without_restart_always_may_not_have_them() -> None:
    container = {"lifecycle": {}, "startupProbe": {"exec": {}}}
    forbidden = "Forbidden: may not be set for init containers without restartPolicy=Always"
    assert _causes(container, init=True) == [("c.lifecycle", forbidden),
                                             ("c.startupProbe", forbidden)]
    assert _causes({**container, "restartPolicy": "Always"}, init=True) == [
        ("c.startupProbe.exec.command", "Required value")]


def test_sub_paths_are_local_and_descending() -> None:
    mounts = [{"name": "v", "mountPath": "/a", "subPath": "/x/.."},
              {"name": "v", "mountPath": "/b", "subPath": "x/..y", "subPathExpr": "$(A)/.."},
              {"name": "v", "mountPath": "/c", "subPath": "a/b", "subPathExpr": ""}]
    assert [(c.field, c.message) for c in validate_volume_mounts(mounts, {"v"}, "m")] == [
        ("m.subPath", 'Invalid value: "/x/..": must be a relative path'),
        ("m.subPath", """Invalid value: "/x/..": must not contain '..'"""),
        ("m[1].subPathExpr",
         'Invalid value: "$(A)/..": subPathExpr and subPath are mutually exclusive'),
        ("m.subPathExpr", """Invalid value: "$(A)/..": must not contain '..'""")]
