"""Decoding patch bodies with Go's error texts.

``loads_json`` parses JSON like ``encoding/json`` and, on a syntax error, raises
``DecodeError`` carrying the message Go would print ("invalid character 'x' looking for
beginning of value", "unexpected end of JSON input", ...). ``loads_yaml`` parses an apply
body the way ``sigs.k8s.io/yaml`` does: the first YAML document, timestamps left as strings,
JSON bodies read as JSON. ``type_error`` renders Go's ``json: cannot unmarshal ...`` text.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from kubegc.api.goformat import json_type_name
from kubegc.api.limits import (
    NumberOutOfRange,
    go_int,
    nesting_exceeds,
    with_go_numbers,
    without_surrogates,
)
from kubegc.registry.typed.yamlload import DepthLimitedLoader


class DecodeError(ValueError):
    """A body that does not decode; ``str(err)`` is upstream's message."""


def loads_json(body: bytes | str) -> Any:
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    if not text.strip():
        raise DecodeError("unexpected end of JSON input")
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_int=go_int)
    except json.JSONDecodeError as e:
        raise DecodeError(_go_syntax_message(e, text)) from None
    except RecursionError:
        raise DecodeError(TOO_DEEP) from None
    except NumberOutOfRange as e:
        raise DecodeError(_out_of_range(str(e))) from None
    if nesting_exceeds(value):
        raise DecodeError(TOO_DEEP)
    return without_surrogates(value)


#: ``encoding/json``'s scanner past its nesting limit (kubegc's: ``api.limits``)
TOO_DEEP = "invalid character '{' exceeded max depth"


def _out_of_range(number: str) -> str:
    """``encoding/json`` on a number no float64 holds (decoding into ``interface{}``)."""
    return f"json: cannot unmarshal number {number} into Go value of type float64"


def _reject_constant(name: str) -> Any:
    raise DecodeError(f"invalid character {_quote_char(name[0])} looking for beginning of value")


def type_error(value: Any, go_type: str, field: str = "") -> DecodeError:
    """``json: cannot unmarshal <json type> into Go value of type <go type>``."""
    into = f"Go struct field {field}" if field else "Go value"
    what = json_type_name(value)
    return DecodeError(f"json: cannot unmarshal {what} into {into} of type {go_type}")


_SYNTAX = {
    "Expecting value": "invalid character {c} looking for beginning of value",
    "Extra data": "invalid character {c} after top-level value",
    "Expecting property name enclosed in double quotes":
        "invalid character {c} looking for beginning of object key string",
    "Expecting ':' delimiter": "invalid character {c} after object key",
    "Invalid control character at": "invalid character {c} in string literal",
    "Invalid \\escape": "invalid character {c} in string escape code",
    "Invalid \\uXXXX escape": "invalid character {c} in \\u hexadecimal character escape",
}


def _go_syntax_message(e: json.JSONDecodeError, text: str) -> str:
    if e.pos >= len(text) or e.msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    c = _quote_char(text[e.pos])
    if e.msg == "Expecting ',' delimiter":
        where = "object key:value pair" if _innermost(text, e.pos) == "{" else "array element"
        return f"invalid character {c} after {where}"
    template = _SYNTAX.get(e.msg)
    return template.format(c=c) if template else e.msg


def _quote_char(ch: str) -> str:
    """Go's ``quoteChar``: 'x', '\\'' and '\\n' style escapes."""
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + json.dumps(ch, ensure_ascii=False)[1:-1] + "'"


def _innermost(text: str, pos: int) -> str:
    """The bracket (``{`` or ``[``) enclosing ``pos``, skipping string contents."""
    stack: list[str] = []
    in_string = escaped = False
    for ch in text[:pos]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            stack.append(ch)
        elif ch in "}]" and stack:
            stack.pop()
    return stack[-1] if stack else ""


class _Loader(DepthLimitedLoader):
    """SafeLoader that keeps timestamps as strings, as ``sigs.k8s.io/yaml`` does."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def loads_yaml(body: bytes | str) -> Any:
    """The first document of a YAML (or JSON) body, as JSON-compatible values."""
    text = body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body
    if text.lstrip().startswith(("{", "[")):
        try:
            value = json.loads(text, parse_int=go_int)
        except NumberOutOfRange as e:
            raise DecodeError(f"error converting YAML to JSON: {_out_of_range(str(e))}") from None
        except ValueError:
            pass  # not strict JSON: YAML flow style is still possible
        except RecursionError:
            raise DecodeError(f"error converting YAML to JSON: yaml: {TOO_DEEP}") from None
        else:  # as deep a JSON body as a YAML one is refused, and read as Go reads it
            if nesting_exceeds(value):
                raise DecodeError(f"error converting YAML to JSON: yaml: {TOO_DEEP}")
            return without_surrogates(value)
    try:
        documents = yaml.load_all(text, Loader=_Loader)
        first = next(iter(documents), None)
    except yaml.YAMLError as e:
        raise DecodeError(f"error converting YAML to JSON: {_go_yaml_message(e)}") from None
    except RecursionError:
        raise DecodeError(f"error converting YAML to JSON: yaml: {TOO_DEEP}") from None
    if nesting_exceeds(first):
        raise DecodeError(f"error converting YAML to JSON: yaml: {TOO_DEEP}")
    return with_go_numbers(without_surrogates(_jsonify(first)))


def _go_yaml_message(e: yaml.YAMLError) -> str:
    problem = getattr(e, "problem", None) or str(e)
    problem = problem.replace("mapping values are not allowed here",
                              "mapping values are not allowed in this context")
    mark = getattr(e, "problem_mark", None)
    return f"yaml: line {mark.line + 1}: {problem}" if mark is not None else f"yaml: {problem}"


def _jsonify(value: Any) -> Any:
    if isinstance(value, dict):
        return {_key(k): _jsonify(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonify(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _key(key: Any) -> str:
    if isinstance(key, bool):
        return "true" if key else "false"
    return "null" if key is None else str(key)
