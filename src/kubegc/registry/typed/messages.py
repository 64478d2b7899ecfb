"""The Status errors kube-apiserver answers when a request cannot be decoded.

* ``cannot_be_handled``: a create or update body that does not decode into its kind
  (``transformDecodeError`` with a known kind): 400 ``ConfigMap in version "v1" cannot be
  handled as a ConfigMap: json: cannot unmarshal ...``.
* ``unrecognized``: a body whose apiVersion/kind cannot even be read (``transformDecodeError``
  without one): 400 ``the object provided is unrecognized (must be of type ConfigMap):
  couldn't get version/kind; json parse error: ... ({"metadata": ...``.
* ``patch_invalid``: a patched object that does not decode (``applyPatchToCurrentObject``):
  422 `` "" is invalid: patch: Invalid value: "<patched JSON>": json: cannot unmarshal ...``.
* ``typed_patch_object``: an apply configuration that does not convert to its kind's type
  (``structuredMergeManager.Apply``): 400, as kubernetes/kubernetes#139253 asks (upstream
  answers 500 there today, with this text).
May import: stdlib, ``kubegc.api``.
"""

from __future__ import annotations

from kubegc.api import errors
from kubegc.api.errors import StatusError

#: ``encoding/json``'s scanner error past its nesting limit (``pushParseState``)
EXCEEDED_MAX_DEPTH = "exceeded max depth"


def cannot_be_handled(kind: str, version: str, detail: str) -> StatusError:
    return errors.bad_request(
        f'{kind} in version "{version}" cannot be handled as a {kind}: {detail}')


def summarize_data(data: bytes, max_length: int = 30) -> str:
    """``summarizeData``: the start of a JSON body as text, of anything else in hex."""
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        text = data[:max_length].decode("utf-8", errors="replace")
        return text + " ..." if len(data) > max_length else text
    return data[:max_length].hex() + (" ..." if len(data) > max_length else "")


def unrecognized(kind: str, detail: str, body: bytes) -> StatusError:
    return errors.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): {detail} "
        f"({summarize_data(body)})")


def too_deep(kind: str, body: bytes, bracket: str = "{") -> StatusError:
    """A body nested past ``kubegc.api.limits.MAX_NESTING``, as Go's decoder words it."""
    return unrecognized(
        kind, "couldn't get version/kind; json parse error: invalid character "
        f"'{bracket}' {EXCEEDED_MAX_DEPTH}", body)


def patch_invalid(value: str, detail: str) -> StatusError:
    """``errors.NewInvalid(schema.GroupKind{}, "", {field.Invalid("patch", value, detail)})``."""
    return errors.invalid("", "", "", [errors.field_error("FieldValueInvalid", "patch", detail,
                                                          value, go_type="string")])


def typed_patch_object(namespace: str, name: str, group: str, version: str, kind: str,
                       detail: str) -> StatusError:
    return errors.bad_request(
        f"failed to create typed patch object ({namespace}/{name}; {group}/{version}, "
        f"Kind={kind}): {detail}")
