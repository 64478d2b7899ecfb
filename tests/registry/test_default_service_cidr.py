"""The default ServiceCIDR (cf. pkg/controlplane/controller/defaultservicecidr's
``TestControllerSync``): created Ready at start from the Service range, created again by
the next sync once deleted, its status left alone when it has a Ready condition or other
CIDRs; none below 1.33, where ServiceCIDRs are not served."""

from __future__ import annotations

from kubegc.api.clock import ManualClock
from kubegc.api.version import MajorMinor
from kubegc.registry import Registry
from kubegc.registry.default_service_cidr import DefaultServiceCIDRController
from kubegc.storage.memory import MemoryKV

V1_33 = MajorMinor(1, 33)


async def _registry(version: MajorMinor = V1_33) -> Registry:
    reg = Registry(MemoryKV(), clock=ManualClock(), version=version)
    await reg.start()
    return reg


async def test_created_ready_and_created_again_once_deleted() -> None:
    reg = await _registry()
    try:
        t = reg.target("networking.k8s.io", "v1", "servicecidrs")
        first = await reg.get(t, "kubernetes")
        assert first["spec"]["cidrs"] == ["10.96.0.0/16"]
        assert [(c["type"], c["status"], c["reason"], c["message"])
                for c in first["status"]["conditions"]] == [
            ("Ready", "True", "", "Kubernetes default Service CIDR is ready")]
        await reg.delete(t, "kubernetes")  # no controller manager: no finalizer holds it
        keeper = DefaultServiceCIDRController(reg, reg.clock, ["10.96.0.0/16"])
        await keeper.sync()
        again = await reg.get(t, "kubernetes")
        assert again["metadata"]["uid"] != first["metadata"]["uid"]
        assert again["status"]["conditions"][0]["status"] == "True"
    finally:
        await reg.stop()


async def test_a_ready_false_condition_and_other_cidrs_are_left_alone() -> None:
    reg = await _registry()
    try:
        t = reg.target("networking.k8s.io", "v1", "servicecidrs")
        current = await reg.get(t, "kubernetes")
        current["status"]["conditions"][0].update(status="False", reason="Broken")
        await reg.update(t, "kubernetes", current, subresource="status")
        await DefaultServiceCIDRController(reg, reg.clock, ["10.96.0.0/16"]).sync()
        assert (await reg.get(t, "kubernetes"))["status"]["conditions"][0]["reason"] == "Broken"
        other = DefaultServiceCIDRController(reg, reg.clock, ["10.0.0.0/24"])
        current = await reg.get(t, "kubernetes")
        current["status"] = {}
        await reg.update(t, "kubernetes", current, subresource="status")
        await other.sync()
        assert (await reg.get(t, "kubernetes"))["status"] == {}
    finally:
        await reg.stop()


async def test_not_below_1_33() -> None:
    reg = await _registry(MajorMinor(1, 32))
    try:
        assert reg.resource("networking.k8s.io", "servicecidrs") is None
    finally:
        await reg.stop()
