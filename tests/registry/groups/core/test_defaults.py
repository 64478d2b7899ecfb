"""Defaulting of volumes: claims and volumes read back with the phase and modes a real
API server gives them (kubegc runs no PersistentVolume controller: nothing binds)."""

from __future__ import annotations

from kubegc.registry import Registry

CLAIM = {"metadata": {"name": "data"},
         "spec": {"accessModes": ["ReadWriteOnce"],
                  "resources": {"requests": {"storage": "1Gi"}}}}
VOLUME = {"metadata": {"name": "pv1"},
          "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                   "hostPath": {"path": "/tmp/pv1"}}}


async def test_claim_is_pending_until_bound(registry: Registry) -> None:
    t = registry.target("", "v1", "persistentvolumeclaims", "default")
    created = await registry.create(t, CLAIM)
    assert created["status"] == {"phase": "Pending"}
    assert created["spec"]["volumeMode"] == "Filesystem"
    read = await registry.get(t, "data")
    assert read["status"]["phase"] == "Pending"


async def test_claim_keeps_the_phase_it_was_given(registry: Registry) -> None:
    t = registry.target("", "v1", "persistentvolumeclaims", "default")
    block = {**CLAIM, "spec": {**CLAIM["spec"], "volumeMode": "Block"}}
    created = await registry.create(t, block)
    assert created["spec"]["volumeMode"] == "Block"
    created["status"] = {"phase": "Bound"}
    updated, _ = await registry.update(t, "data", created, subresource="status")
    assert updated["status"]["phase"] == "Bound"


async def test_volume_defaults(registry: Registry) -> None:
    created = await registry.create(registry.target("", "v1", "persistentvolumes", ""), VOLUME)
    assert created["status"] == {"phase": "Pending"}
    assert created["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    assert created["spec"]["volumeMode"] == "Filesystem"


async def test_probes_and_http_hooks_read_back_defaulted(registry: Registry) -> None:
    """``SetDefaults_Probe`` and ``SetDefaults_HTTPGetAction``: what a real API server gives
    back (a zero field is an unset one); what was set stays."""
    t = registry.target("", "v1", "pods", "default")
    container = {"name": "c", "image": "busybox",
                 "livenessProbe": {"httpGet": {"port": 8080}, "periodSeconds": 5},
                 "startupProbe": {"exec": {"command": ["true"]}, "failureThreshold": 0},
                 "lifecycle": {"preStop": {"httpGet": {"port": "http", "path": "/quit"}}}}
    created = await registry.create(t, {"metadata": {"name": "probed"},
                                        "spec": {"containers": [container]}})
    got = created["spec"]["containers"][0]
    assert got["livenessProbe"] == {
        "httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "periodSeconds": 5,
        "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3}
    assert got["startupProbe"] == {"exec": {"command": ["true"]}, "timeoutSeconds": 1,
                                   "periodSeconds": 10, "successThreshold": 1,
                                   "failureThreshold": 3}
    assert got["lifecycle"]["preStop"]["httpGet"] == {"port": "http", "path": "/quit",
                                                     "scheme": "HTTP"}
