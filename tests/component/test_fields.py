"""What a component can understand of an object: a value of the wrong type or out of range
is named by its path, with apimachinery's field-error wording; an absent or null field is
fine (its default applies)."""

from __future__ import annotations

from typing import Any

import pytest

from kubegc.component.fields import Field, Fields, NotUnderstood, Type
from kubegc.component.objects import DEPLOYMENT, JOB, POD, SERVICE


@pytest.mark.parametrize(("fields", "obj", "errors"), [
    pytest.param(JOB, {"spec": {"completions": "abc"}},
                 ['spec.completions: Invalid value: "abc": must be an integer'], id="type"),
    pytest.param(JOB, {"spec": {"completions": -1}},
                 ["spec.completions: Invalid value: -1: must be greater than or equal to 0"],
                 id="range"),
    pytest.param(JOB, {"spec": {"completions": True}},
                 ["spec.completions: Invalid value: true: must be an integer"], id="bool"),
    pytest.param(JOB, {"spec": "x"}, ['spec: Invalid value: "x": must be an object'],
                 id="a-parent-once"),
    pytest.param(SERVICE, {"spec": {"ports": [{"port": 80}, {"port": "http"}, 3]}},
                 ["spec.ports[2]: Invalid value: 3: must be an object",
                  'spec.ports[1].port: Invalid value: "http": must be an integer'], id="lists"),
    pytest.param(DEPLOYMENT, {"spec": {"strategy": {"rollingUpdate": {"maxSurge": "abc%"}}}},
                 ['spec.strategy.rollingUpdate.maxSurge: Invalid value: "abc%": must be an '
                  'integer or a percentage ("25%")'], id="percent"),
    pytest.param(POD, {"metadata": {"labels": {"app": 1}}},
                 ['metadata.labels: Invalid value: {"app":1}: must be a map of strings'],
                 id="labels"),
    pytest.param(POD, {"metadata": {"deletionTimestamp": "yesterday"}},
                 ['metadata.deletionTimestamp: Invalid value: "yesterday": must be a time '
                  "(RFC 3339)"], id="time"),
    pytest.param(JOB, {"spec": {"completions": None, "parallelism": 2,
                                "template": {"spec": {"containers": []}}}}, [],
                 id="null-and-valid"),
])
def test_errors_name_the_field(fields: Fields, obj: dict[str, Any], errors: list[str]) -> None:
    assert fields.errors(obj) == errors


def test_check_raises_with_every_error() -> None:
    fields = Fields(Field("a", Type.INT), Field("b", Type.BOOL))
    with pytest.raises(NotUnderstood) as caught:
        fields.check({"a": "1", "b": "no"})
    assert caught.value.errors == ['a: Invalid value: "1": must be an integer',
                                   'b: Invalid value: "no": must be a boolean']
    assert str(caught.value) == "; ".join(caught.value.errors)
