from __future__ import annotations

from kubegc.registry.fieldmanager._errors import go_repr, go_type


def test_go_repr_prints_floats_and_containers_as_go_does() -> None:
    assert go_repr(1e6) == "1e+06"
    assert go_repr(1.5) == "1.5"
    assert go_repr(2.0) == "2"
    assert go_repr({"b": [1, True], "a": None}) == "map[a:<nil> b:[1 true]]"


def test_go_type_is_reflects_type_of_a_decoded_value() -> None:
    assert [go_type(v) for v in (None, True, 1, 1.5, "s", {}, [])] == [
        "<nil>", "bool", "int64", "float64", "string", "map[string]interface {}",
        "[]interface {}"]
