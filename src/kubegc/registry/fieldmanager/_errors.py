"""Status errors of the patch machinery, worded as kube-apiserver words them.

The constructors in ``kubegc.api.errors`` cover most cases; this module adds the few shapes
only PATCH produces:

* ``unprocessable`` -- ``errors.NewGenericServerResponse(422, ...)`` as the patch handler uses
  it for a JSON patch that cannot be applied: reason ``Invalid`` and a fixed message (the
  detail is dropped by upstream; we keep it as the exception's ``__cause__`` for logs).
* ``unknown_error`` -- a plain Go ``error`` that reached the handler: code 500, reason
  ``""`` (``StatusReasonUnknown``), the error text as message.
* ``go_repr`` / ``go_s`` / ``go_type`` -- ``fmt.Sprintf("%v")``, ``fmt.Sprintf("%s")`` and
  ``reflect.TypeOf`` renderings of decoded JSON values, used inside upstream's error texts.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from kubegc.api.errors import StatusError
from kubegc.api.goformat import dynamic_type, go_float

UNPROCESSABLE_MESSAGE = "the server rejected our request due to an error in our request"


def unprocessable() -> StatusError:
    return StatusError(422, "Invalid", UNPROCESSABLE_MESSAGE)


def unknown_error(message: str) -> StatusError:
    return StatusError(500, "", message)


def too_large(message: str) -> StatusError:
    return StatusError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


def go_repr(value: Any) -> str:
    """``fmt.Sprintf("%v", value)`` of a value decoded from JSON by Go."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict):
        inner = " ".join(f"{k}:{go_repr(v)}" for k, v in sorted(value.items()))
        return f"map[{inner}]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_repr(v) for v in value) + "]"
    return str(value)


def go_s(value: Any) -> str:
    """``fmt.Sprintf("%s", value)`` of a value decoded from JSON by Go (numbers are float64s):
    what is not a string prints as ``%!s(type=value)``."""
    if isinstance(value, str):
        return value
    if value is None:
        return "%!s(<nil>)"
    if isinstance(value, bool):
        return f"%!s(bool={'true' if value else 'false'})"
    if isinstance(value, int | float):
        return f"%!s(float64={go_float(float(value))})"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_s(v)}" for k, v in sorted(value.items())) + "]"
    if isinstance(value, list | tuple):
        return "[" + " ".join(go_s(v) for v in value) + "]"
    return str(value)


def go_type(value: Any) -> str:
    """``reflect.TypeOf(value).String()`` for a JSON value decoded into ``interface{}``."""
    return "<nil>" if value is None else dynamic_type(value)


def bad_arg_type(expected: str, actual: Any) -> StatusError:
    """``mergepatch.ErrBadArgType``."""
    return unknown_error(f"expected a {expected}, but received a {go_type(actual)}")


def go_json(value: Any) -> str:
    """Compact JSON as Go's encoder writes it (sorted keys, HTML-escaped)."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:  # non-string keys and the like: the general encoder
        text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
