"""The Kubernetes version kubegc is, and the one it emulates (cf. k8s.io/component-base's
``compatibility.EffectiveVersion``, KEP-4330 "Compatibility Versions in Kubernetes").

kubegc's *binary* version is ``BINARY_VERSION``, the newest minor whose behaviour it
knows. ``kubegc serve --emulated-version 1.N`` makes it behave as 1.N, from
``binary - 3`` to the binary version as upstream 1.33's ``effectiveVersion.Validate``
allows: the feature gates take their defaults and locks at 1.N (``kubegc.api.features``),
and ``/version`` reports it in ``emulationMajor``/``emulationMinor`` beside the binary
``major``/``minor`` (apimachinery's ``version.Info``, 1.33+). docs/versions.md lists what
changes with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, order=True, slots=True)
class MajorMinor:
    """A ``major.minor`` version (util/version's ``MajorMinor``)."""

    major: int
    minor: int

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def subtract_minor(self, n: int) -> MajorMinor:
        return MajorMinor(self.major, max(0, self.minor - n))


#: the newest minor kubegc knows: its binary version (kubectl 1.27-1.33 are tested)
BINARY_VERSION = MajorMinor(1, 33)
BINARY_GIT_VERSION = f"v{BINARY_VERSION}.0+kubegc"
#: the oldest version ``--emulated-version`` accepts (binary - 3, as upstream)
EMULATION_VERSION_FLOOR = BINARY_VERSION.subtract_minor(3)

_GENERIC = re.compile(r"^v?(\d+)\.(\d+)(?:\.\d+)?$")


def parse_version(text: str) -> MajorMinor:
    """``1.32``, ``v1.32`` or ``1.32.4`` (util/version's ``ParseGeneric``; the patch is
    dropped, as ``--emulated-version`` keeps only major and minor)."""
    m = _GENERIC.match(text.strip())
    if m is None:
        raise ValueError(f'could not parse "{text}" as version')
    return MajorMinor(int(m.group(1)), int(m.group(2)))


def parse_emulated_version(text: str) -> MajorMinor:
    """``--emulated-version``'s value: ``1.32`` or ``kube=1.32`` (upstream's component
    registry names the component; kubegc has only ``kube``)."""
    component, sep, value = text.partition("=")
    if sep and component.strip() != "kube":
        raise ValueError(f"component not registered: {component.strip()}")
    return parse_version(value if sep else text)


@dataclass(frozen=True, slots=True)
class EffectiveVersion:
    """Binary, emulation and minimum compatibility versions (upstream's
    ``effectiveVersion``; ``SetEmulationVersion`` sets the minimum compatibility version to
    emulation - 1)."""

    emulation: MajorMinor = BINARY_VERSION
    binary: MajorMinor = BINARY_VERSION

    @property
    def min_compatibility(self) -> MajorMinor:
        return self.emulation.subtract_minor(1)

    @property
    def openapi_info_version(self) -> str:
        """OpenAPI's ``info.version`` (v2 and v3): the emulation version as util/version
        writes a major.minor, ``1.32`` (``Config.Complete``'s ``completeOpenAPI`` and
        ``completeOpenAPIV3`` with ``EffectiveVersion.EmulationVersion()``, 1.31+)."""
        return str(self.emulation)

    def validate(self) -> list[str]:
        """Upstream's ``effectiveVersion.Validate`` messages (empty: valid)."""
        floor = self.binary.subtract_minor(3)
        if not floor <= self.emulation <= self.binary:
            return [f"emulation version {self.emulation} is not between "
                    f"[{floor}.0, {self.binary}.0]"]
        return []

    def info(self, base: dict[str, str]) -> dict[str, Any]:
        """``/version``'s document (``effectiveVersion.Info``), in apimachinery's
        ``version.Info`` field order: the binary's major and minor, the emulation and
        minimum compatibility versions, then the rest of ``base``."""
        return {"major": str(self.binary.major), "minor": str(self.binary.minor),
                "emulationMajor": str(self.emulation.major),
                "emulationMinor": str(self.emulation.minor),
                "minCompatibilityMajor": str(self.min_compatibility.major),
                "minCompatibilityMinor": str(self.min_compatibility.minor),
                **{k: v for k, v in base.items() if k not in ("major", "minor")}}


def emulated_version_of(info: dict[str, Any]) -> MajorMinor | None:
    """The version a server's ``/version`` document says it behaves as: its emulation
    version (1.33+), else its binary ``major.minor`` (``minor`` may read ``"28+"``);
    None when neither parses."""
    for major_key, minor_key in (("emulationMajor", "emulationMinor"), ("major", "minor")):
        major, minor = str(info.get(major_key) or ""), str(info.get(minor_key) or "")
        if major.isdigit() and minor.rstrip("+").isdigit():
            return MajorMinor(int(major), int(minor.rstrip("+")))
    return None
