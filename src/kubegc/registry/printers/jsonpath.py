"""The JSONPath subset of CRD ``additionalPrinterColumns`` (cf. client-go util/jsonpath).

Contract:
  * ``evaluate_jsonpath(expression, obj)`` returns every result, in document order, of an
    expression made of fields (``.a.b``, ``\\.`` escapes a dot), ``[n]`` (negative counts
    from the end), ``[*]``, ``['key']`` / ``["key"]`` and ``[?(@.f=="v")]`` / ``!=`` filters;
    an optional ``{...}`` and leading ``$`` are accepted. A path that finds nothing gives ``[]``.
  * Syntax outside the subset, such as recursive descent (``..``) or slices, raises
    ValueError (``tables`` then renders the cell as null).
  * ``to_text(value)`` renders a result as the JSONPath printer prints decoded JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

_STEP = re.compile(
    r"""\.(?P<field>(?:[^.\[\\]|\\.)+)"""
    r"""|\[(?P<index>-?\d+)\]|\[(?P<star>\*)\]"""
    r"""|\[(?P<q>['"])(?P<key>.*?)(?P=q)\]"""
    r"""|\[\?\(@(?P<fpath>(?:\.[\w-]+)+)\s*(?P<op>==|!=)\s*(?P<lit>'[^']*'|"[^"]*"|[^)\s]+)\)\]"""
)


def _parse_jsonpath(expression: str) -> list[re.Match[str]]:
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    text = text.removeprefix("$")
    steps: list[re.Match[str]] = []
    pos = 0
    while pos < len(text):
        match = _STEP.match(text, pos)
        if match is None:
            raise ValueError(f"unsupported JSONPath at {text[pos:]!r}")
        steps.append(match)
        pos = match.end()
    return steps


def _literal(text: str) -> Any:
    if text[:1] in "'\"":
        return text[1:-1]
    try:
        return json.loads(text)
    except ValueError:
        return text


def _apply(step: re.Match[str], values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if step["field"] is not None or step["key"] is not None:
            key = step["key"] if step["key"] is not None else re.sub(r"\\(.)", r"\1",
                                                                      step["field"])
            if isinstance(value, Mapping) and key in value:
                out.append(value[key])
        elif step["index"] is not None and isinstance(value, list):
            index = int(step["index"])
            if -len(value) <= index < len(value):
                out.append(value[index])
        elif step["star"] is not None:
            out.extend(value.values() if isinstance(value, Mapping) else (
                value if isinstance(value, list) else []))
        elif step["op"] is not None and isinstance(value, list):
            want = _literal(step["lit"])
            for item in value:
                got = _lookup(item, step["fpath"].split(".")[1:])
                if got is not None and (got == want) == (step["op"] == "=="):
                    out.append(item)
    return out


def _lookup(value: Any, names: list[str]) -> Any:
    for name in names:
        value = value.get(name) if isinstance(value, Mapping) else None
    return value


def evaluate_jsonpath(expression: str, obj: Any) -> list[Any]:
    """All results of a JSONPath (the subset CRD printer columns use) on ``obj``."""
    values = [obj]
    for step in _parse_jsonpath(expression):
        values = _apply(step, values)
    return values


def to_text(value: Any) -> str:
    """How the JSONPath printer renders a value (Go's ``fmt.Sprint`` of decoded JSON,
    as client-go jsonpath's ``evalToText``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e21 else repr(value)
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{to_text(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list):
        return "[" + " ".join(to_text(v) for v in value) + "]"
    return str(value)
