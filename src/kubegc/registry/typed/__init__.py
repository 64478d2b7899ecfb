"""Built-in objects decoded as kube-apiserver decodes them into their Go structs: the Go
type of every field (``gotypes``), the decoding and its messages (``decode``), and the
types that decode themselves (``special``).
May import: stdlib, ``kubegc.api``, ``kubegc.registry.definitions``.
"""

from kubegc.registry.typed.decode import DecodeFailure, decode_typed
from kubegc.registry.typed.gotypes import GoType, definition_type, kind_type

__all__ = ["DecodeFailure", "GoType", "decode_typed", "definition_type", "kind_type"]
