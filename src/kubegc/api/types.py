"""Domain scalars and the JSON shape of objects.

Objects at the server and registry boundary are JSON-shaped dicts with Kubernetes'
camelCase keys. ``resourceVersion`` is an opaque string at the API and an integer
revision inside storage; only the registry converts between the two.
"""

from __future__ import annotations

from typing import Any, NewType

Uid = NewType("Uid", str)
ResourceVersion = NewType("ResourceVersion", str)
Revision = NewType("Revision", int)

#: A Kubernetes object as decoded from JSON (``{"apiVersion", "kind", "metadata", ...}``).
Obj = dict[str, Any]
