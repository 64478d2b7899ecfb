"""The deletion-related feature gates and their versioned specs (cf. pkg/features/
kube_features.go ``defaultVersionedKubernetesFeatureGates``) and the gate that reads them
at an emulated version (cf. k8s.io/component-base/featuregate ``featureGate``:
``SetFromMap``, ``Enabled``, ``getCurrentVersion``).

A gate's default and lock are those of the newest spec not newer than the emulated
version; before its first spec a feature is PreAlpha: off, and cannot be set.
``--feature-gates`` errors are upstream's messages.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

from kubegc.api.version import BINARY_VERSION, MajorMinor


class PreRelease(enum.StrEnum):
    PRE_ALPHA = "PRE-ALPHA"
    ALPHA = "ALPHA"
    BETA = "BETA"
    GA = ""
    DEPRECATED = "DEPRECATED"


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    version: MajorMinor
    default: bool
    pre_release: PreRelease
    lock_to_default: bool = False


#: KEP-5080 (kubernetes#130035): the namespace controller deletes a namespace's pods and
#: waits for them to be gone before it deletes anything else
ORDERED_NAMESPACE_DELETION = "OrderedNamespaceDeletion"

#: the gates kubegc's behaviour depends on, as pkg/features/kube_features.go declares them
VERSIONED_FEATURES: dict[str, tuple[FeatureSpec, ...]] = {
    ORDERED_NAMESPACE_DELETION: (
        FeatureSpec(MajorMinor(1, 30), False, PreRelease.BETA),
        FeatureSpec(MajorMinor(1, 33), True, PreRelease.BETA),
        FeatureSpec(MajorMinor(1, 34), True, PreRelease.GA, lock_to_default=True),
    ),
}

_PRE_ALPHA = FeatureSpec(MajorMinor(0, 0), False, PreRelease.PRE_ALPHA)


def current_spec(specs: tuple[FeatureSpec, ...], emulation: MajorMinor) -> FeatureSpec:
    """``getCurrentVersion``: the newest spec not newer than ``emulation``."""
    for spec in reversed(specs):
        if spec.version <= emulation:
            return spec
    return _PRE_ALPHA


@dataclass(frozen=True)
class FeatureGate:
    """The gates at one emulated version, with what ``--feature-gates`` set (immutable:
    build one with ``feature_gate``)."""

    emulation: MajorMinor = BINARY_VERSION
    enabled_raw: Mapping[str, bool] = field(default_factory=dict)

    def enabled(self, name: str) -> bool:
        """``Enabled``; an unknown name is a programming error (``KeyError``)."""
        spec = current_spec(VERSIONED_FEATURES[name], self.emulation)
        if name in self.enabled_raw and spec.pre_release is not PreRelease.PRE_ALPHA:
            return self.enabled_raw[name]
        return spec.default

    def known_features(self) -> list[str]:
        """``KnownFeatures``: ``Name=true|false (BETA - default=false)``, GA and PreAlpha
        ones left out."""
        out = []
        for name, specs in VERSIONED_FEATURES.items():
            spec = current_spec(specs, self.emulation)
            if spec.pre_release in (PreRelease.ALPHA, PreRelease.BETA):
                out.append(f"{name}=true|false ({spec.pre_release} - "
                           f"default={str(spec.default).lower()})")
        return sorted(out)


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``featureGate.Set``'s parsing of ``key1=value1,key2=value2``; ``ValueError`` with
    upstream's message."""
    out: dict[str, bool] = {}
    for item in text.split(","):
        if not item:
            continue
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep:
            raise ValueError(f"missing bool value for {key}")
        value = value.strip()
        parsed = _parse_bool(value)
        if parsed is None:
            raise ValueError(f'invalid value of {key}={value}, err: strconv.ParseBool: '
                             f'parsing "{value}": invalid syntax')
        out[key] = parsed
    return out


def _parse_bool(value: str) -> bool | None:
    """Go's ``strconv.ParseBool``."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    return None


def feature_gate(emulation: MajorMinor, requested: Mapping[str, bool]) -> FeatureGate:
    """The gate at ``emulation`` with ``requested`` set (``SetFromMap`` after
    ``SetEmulationVersion``); ``ValueError`` with upstream's messages, joined as
    ``utilerrors.NewAggregate`` does."""
    errors: list[str] = []
    for name, value in requested.items():
        specs = VERSIONED_FEATURES.get(name)
        if specs is None:
            raise ValueError(f"unrecognized feature gate: {name}")
        spec = current_spec(specs, emulation)
        if spec.lock_to_default and spec.default != value:
            errors.append(f"cannot set feature gate {name} to {str(value).lower()}, feature "
                          f"is locked to {str(spec.default).lower()}")
        elif spec.pre_release is PreRelease.PRE_ALPHA:
            errors.append(f"cannot set feature gate {name} to {str(value).lower()}, feature "
                          f"is PreAlpha at emulated version {emulation}")
    if errors:
        raise ValueError(errors[0] if len(errors) == 1 else
                         "[" + ", ".join(errors) + "]")
    return FeatureGate(emulation, dict(requested))
