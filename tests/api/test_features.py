"""The versioned feature gates (cf. component-base/featuregate's feature_gate_test.go) and
the effective version (compatibility's version_test.go)."""

from __future__ import annotations

import pytest

from kubegc.api.features import (
    ORDERED_NAMESPACE_DELETION,
    FeatureGate,
    feature_gate,
    parse_feature_gates,
)
from kubegc.api.version import (
    EffectiveVersion,
    MajorMinor,
    emulated_version_of,
    parse_emulated_version,
)


@pytest.mark.parametrize("minor,enabled", [(29, False), (30, False), (32, False),
                                           (33, True), (34, True)])
def test_ordered_namespace_deletion_default_per_version(minor: int, enabled: bool) -> None:
    assert FeatureGate(MajorMinor(1, minor)).enabled(ORDERED_NAMESPACE_DELETION) is enabled


def test_a_gate_set_overrides_the_default() -> None:
    gate = feature_gate(MajorMinor(1, 32), {ORDERED_NAMESPACE_DELETION: True})
    assert gate.enabled(ORDERED_NAMESPACE_DELETION)
    gate = feature_gate(MajorMinor(1, 33), {ORDERED_NAMESPACE_DELETION: False})
    assert not gate.enabled(ORDERED_NAMESPACE_DELETION)


@pytest.mark.parametrize("emulation,requested,message", [
    (MajorMinor(1, 34), {ORDERED_NAMESPACE_DELETION: False},
     "cannot set feature gate OrderedNamespaceDeletion to false, feature is locked to true"),
    (MajorMinor(1, 29), {ORDERED_NAMESPACE_DELETION: True},
     "cannot set feature gate OrderedNamespaceDeletion to true, feature is PreAlpha at "
     "emulated version 1.29"),
    (MajorMinor(1, 33), {"Nope": True}, "unrecognized feature gate: Nope"),
], ids=["locked", "pre-alpha", "unknown"])
def test_upstream_errors(emulation: MajorMinor, requested: dict[str, bool],
                         message: str) -> None:
    with pytest.raises(ValueError) as exc:
        feature_gate(emulation, requested)
    assert str(exc.value) == message


def test_locked_to_its_default_may_be_set_to_it() -> None:
    gate = feature_gate(MajorMinor(1, 34), {ORDERED_NAMESPACE_DELETION: True})
    assert gate.enabled(ORDERED_NAMESPACE_DELETION)


@pytest.mark.parametrize("text,message", [
    ("A", "missing bool value for A"),
    ("A=yes", 'invalid value of A=yes, err: strconv.ParseBool: parsing "yes": invalid '
              "syntax"),
])
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as exc:
        parse_feature_gates(text)
    assert str(exc.value) == message


def test_parse() -> None:
    assert parse_feature_gates("A=true, B=F,,") == {"A": True, "B": False}


def test_known_features_at_a_version() -> None:
    assert FeatureGate(MajorMinor(1, 32)).known_features() == [
        "OrderedNamespaceDeletion=true|false (BETA - default=false)"]
    assert FeatureGate(MajorMinor(1, 34)).known_features() == []  # GA: hidden


def test_effective_version() -> None:
    assert EffectiveVersion(MajorMinor(1, 30)).validate() == []
    assert EffectiveVersion(MajorMinor(1, 34)).validate() == [
        "emulation version 1.34 is not between [1.30.0, 1.33.0]"]
    info = EffectiveVersion(MajorMinor(1, 31)).info({"major": "x", "gitVersion": "v"})
    assert list(info)[:6] == ["major", "minor", "emulationMajor", "emulationMinor",
                              "minCompatibilityMajor", "minCompatibilityMinor"]
    assert (info["emulationMinor"], info["minCompatibilityMinor"], info["minor"]) == (
        "31", "30", "33")


@pytest.mark.parametrize("text,expected", [("1.32", MajorMinor(1, 32)),
                                           ("kube=v1.31.2", MajorMinor(1, 31))])
def test_parse_emulated_version(text: str, expected: MajorMinor) -> None:
    assert parse_emulated_version(text) == expected


@pytest.mark.parametrize("text", ["1", "kcm=1.32", "one.two"])
def test_parse_emulated_version_refuses(text: str) -> None:
    with pytest.raises(ValueError):
        parse_emulated_version(text)


@pytest.mark.parametrize("info,expected", [
    ({"major": "1", "minor": "33", "emulationMajor": "1", "emulationMinor": "31"},
     MajorMinor(1, 31)),
    ({"major": "1", "minor": "28+"}, MajorMinor(1, 28)),
    ({"major": "", "minor": ""}, None),
])
def test_emulated_version_of(info: dict[str, str], expected: MajorMinor | None) -> None:
    assert emulated_version_of(info) == expected
