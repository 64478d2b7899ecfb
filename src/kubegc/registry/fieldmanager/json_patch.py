"""RFC 6902 JSON patch (``application/json-patch+json``), as kube-apiserver applies it.

kube-apiserver uses ``gopkg.in/evanphx/json-patch.v4``; this module keeps its behaviour,
including the lenient corners a client may rely on:

* pointers are ``/``-separated with ``~1`` → ``/`` and ``~0`` → ``~``; the part before the
  first ``/`` is ignored;
* array indices may be negative (``-1`` is the last element; for ``add``, the end);
  ``-`` appends;
* ``replace`` of a missing object member sets it (only arrays check the index); ``replace``
  of the root (``""``) swaps the document for an object or array;
* ``test`` with value ``null`` passes for a missing member; values compare as JSON;
* ``add``/``replace`` without ``value`` write ``null``.

Errors, as the patch handler reports them:
  * undecodable body → 400 BadRequest ``error decoding patch: <Go json error>``;
  * more than 10000 operations → 413 RequestEntityTooLarge;
  * an operation that does not apply (missing path, failed ``test``, unknown ``op``) →
    422 Invalid ``the server rejected our request due to an error in our request``
    (upstream drops the detail; it is the ``__cause__`` here, a ``JSONPatchError``).
A failed ``test`` fails the whole patch: nothing is applied.
"""

from __future__ import annotations

import re
from typing import Any

from kubegc.api.errors import bad_request
from kubegc.api.types import Obj, clone
from kubegc.registry.fieldmanager._decode import DecodeError, loads_json, type_error
from kubegc.registry.fieldmanager._errors import too_large, unprocessable
from kubegc.registry.fieldmanager._values import json_equal

MAX_OPERATIONS = 10000
_OP_TYPE = "handlers.jsonPatchOp"


class JSONPatchError(Exception):
    """Why one operation does not apply (evanphx/json-patch's wording)."""


def decode_json_patch(body: bytes | str) -> list[dict[str, Any]]:
    """The operations of a body; 400 BadRequest when it is not a JSON array of operations."""
    try:
        value = loads_json(body)
        if value is None:
            return []
        if not isinstance(value, list):
            raise type_error(value, "[]" + _OP_TYPE)
        return [_check_operation(op) for op in value]
    except DecodeError as e:
        raise bad_request(f"error decoding patch: {e}") from None


def _check_operation(op: Any) -> dict[str, Any]:
    if op is None:
        return {}
    if not isinstance(op, dict):
        raise type_error(op, _OP_TYPE)
    for name in ("op", "path", "from"):
        if op.get(name) is not None and not isinstance(op[name], str):
            raise type_error(op[name], "string", field=f"jsonPatchOp.{name}")
    return op


def apply_json_patch(original: Obj, operations: list[dict[str, Any]]) -> Obj:
    """``original`` with ``operations`` applied in order; ``original`` is not modified."""
    if len(operations) > MAX_OPERATIONS:
        raise too_large(f"The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, "
                        f"got {len(operations)}")
    root: list[Any] = [clone(original)]
    try:
        for op in operations:
            _apply_operation(root, op)
    except JSONPatchError as e:
        raise unprocessable() from e
    result = root[0]
    if not isinstance(result, dict):
        raise unprocessable() from JSONPatchError("the patched document is not an object")
    return result


def _apply_operation(root: list[Any], op: dict[str, Any]) -> None:
    kind = op.get("op") or "unknown"
    handler = _OPERATIONS.get(kind)
    if handler is None:
        raise JSONPatchError(f"Unexpected kind: {kind}")
    handler(root, op)


def _path(op: dict[str, Any], name: str = "path") -> str:
    value = op.get(name)
    if value is None:
        raise JSONPatchError(f"operation missing {name} field")
    return str(value)


def _find(root: list[Any], path: str) -> tuple[dict[str, Any] | list[Any] | None, str]:
    """evanphx ``findObject``: the container holding the last pointer token, and that token."""
    parts = path.split("/")
    if len(parts) < 2:
        return None, ""
    doc = root[0]
    for part in parts[1:-1]:
        try:
            doc = _get(doc, _unescape(part))
        except JSONPatchError:
            return None, ""
        if not isinstance(doc, dict | list):
            return None, ""
    return doc, _unescape(parts[-1])


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


_INT = re.compile(r"[+-]?[0-9]+")


def _index(key: str, size: int, *, allow_end: bool = False) -> int:
    """strconv.Atoi plus evanphx's bounds rules (negative indices count from the end)."""
    if not _INT.fullmatch(key):
        raise JSONPatchError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    idx = int(key)
    limit = size + 1 if allow_end else size
    if idx >= limit or idx < -limit:
        raise JSONPatchError(f"Unable to access invalid index: {idx}")
    return idx + limit if idx < 0 else idx


def _get(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key)
    if isinstance(container, list):
        return container[_index(key, len(container))]
    raise JSONPatchError("not a container")


def _add(container: dict[str, Any] | list[Any], key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
    elif key == "-":
        container.append(value)
    else:
        container.insert(_index(key, len(container), allow_end=True), value)


def _remove(container: dict[str, Any] | list[Any], key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise JSONPatchError(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
    else:
        del container[_index(key, len(container))]


def _op_add(root: list[Any], op: dict[str, Any]) -> None:
    path = _path(op)
    container, key = _find(root, path)
    if container is None:
        raise JSONPatchError(f"add operation does not apply: doc is missing path: {path}")
    _add(container, key, clone(op.get("value")))


def _op_remove(root: list[Any], op: dict[str, Any]) -> None:
    path = _path(op)
    container, key = _find(root, path)
    if container is None:
        raise JSONPatchError(f"remove operation does not apply: doc is missing path: {path}")
    _remove(container, key)


def _op_replace(root: list[Any], op: dict[str, Any]) -> None:
    path = _path(op)
    value = clone(op.get("value"))
    if path == "":
        if not isinstance(value, dict | list):
            raise JSONPatchError("replace operation value must be object or array")
        root[0] = value
        return
    container, key = _find(root, path)
    if container is None:
        raise JSONPatchError(f"replace operation does not apply: doc is missing path: {path}")
    if isinstance(container, dict):
        container[key] = value
    else:
        container[_index(key, len(container))] = value


def _op_move(root: list[Any], op: dict[str, Any]) -> None:
    source = _path(op, "from")
    container, key = _find(root, source)
    if container is None:
        raise JSONPatchError(f"move operation does not apply: doc is missing from path: {source}")
    value = _get(container, key)
    _remove(container, key)
    path = _path(op)
    target, target_key = _find(root, path)
    if target is None:
        raise JSONPatchError(
            f"move operation does not apply: doc is missing destination path: {path}")
    _add(target, target_key, value)


def _op_copy(root: list[Any], op: dict[str, Any]) -> None:
    source = _path(op, "from")
    container, key = _find(root, source)
    if container is None:
        raise JSONPatchError(f"copy operation does not apply: doc is missing from path: {source}")
    value = clone(_get(container, key))
    path = _path(op)
    target, target_key = _find(root, path)
    if target is None:
        raise JSONPatchError(
            f"copy operation does not apply: doc is missing destination path: {path}")
    _add(target, target_key, value)


def _op_test(root: list[Any], op: dict[str, Any]) -> None:
    path = _path(op)
    expected = op.get("value")
    if path == "":
        actual = root[0]
    else:
        container, key = _find(root, path)
        if container is None:
            raise JSONPatchError(f"test operation does not apply: is missing path: {path}")
        actual = _get(container, key)
    if actual is None and expected is None:
        return
    if actual is None or expected is None or not json_equal(actual, expected):
        raise JSONPatchError(f"testing value {path} failed: test failed")


_OPERATIONS = {
    "add": _op_add,
    "remove": _op_remove,
    "replace": _op_replace,
    "move": _op_move,
    "copy": _op_copy,
    "test": _op_test,
}
