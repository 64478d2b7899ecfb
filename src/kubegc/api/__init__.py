"""The vocabulary shared by every layer: Status errors (``errors``), the injected clock
(``clock``), the resource catalog and GVK/GVR (``resources``), object metadata helpers and
finalizer/propagation names (``meta``), selectors, validation, the patch machinery
(``patch``) and the built-in OpenAPI schemas (``schema``).

May import: the standard library and small pure-Python dependencies only.
"""
