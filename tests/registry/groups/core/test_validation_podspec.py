"""A pod spec's references and small lists (``validation_podspec``); the answers a server
gives are in ``tests/invalid_corpus.py``."""

from __future__ import annotations

from kubegc.registry.groups.core.validation_podspec import (
    valid_volume_names,
    validate_pod_references,
    validate_volume_mounts,
)


def test_a_mount_names_a_volume_that_validates() -> None:
    """``ValidateVolumes`` keeps only the volumes without errors: a mount of a bad one is
    ``Not found`` too."""
    volumes = valid_volume_names([{"name": "ok", "emptyDir": {}}, {"name": "Bad", "emptyDir": {}},
                                  {"name": "none"}, {"name": "ok", "emptyDir": {}}])
    assert volumes == {"ok"}
    mounts = [{"name": "ok", "mountPath": "/a"}, {"name": "Bad", "mountPath": "/b"},
              {"name": "ok", "mountPath": "/a"}, {"name": "", "mountPath": ""}]
    assert [(c.field, c.message) for c in validate_volume_mounts(mounts, volumes, "m")] == [
        ("m[1].name", 'Not found: "Bad"'),
        ("m[2].mountPath", 'Invalid value: "/a": must be unique'),
        ("m[3].name", "Required value"), ("m[3].name", 'Not found: ""'),
        ("m[3].mountPath", "Required value")]


def test_dns_config_and_gates() -> None:
    spec = {"dnsPolicy": "None", "dnsConfig": {"searches": ["a"]},
            "schedulingGates": [{"name": "g"}, {"name": "g"}]}
    assert [(c.field, c.message) for c in validate_pod_references(spec, "spec")] == [
        ("spec.schedulingGates[1]", 'Duplicate value: "g"'),
        ("spec.dnsConfig.nameservers", "Required value: must provide at least one DNS "
                                       "nameserver when `dnsPolicy` is None")]
    assert validate_pod_references({"dnsConfig": {"nameservers": ["::1", "10.0.0.10"]},
                                    "priorityClassName": "high"}, "spec") == []
