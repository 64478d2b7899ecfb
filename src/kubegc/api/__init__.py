"""The vocabulary shared by every layer, and nothing else: Status errors (``errors``), the
injected clock (``clock``), the resource catalog and GVK/GVR (``resources``), object
metadata helpers and finalizer/propagation names (``meta``), label and field selectors
(``labels``, ``fields``), the name grammars (``content``), who a request is and what it asks
(``auth``, ``authenticator``), Go's formatting of values (``goformat``), limits, and the pod
and status words the components share (``pod``, ``zero_status``).

Machinery that two floors share lives in a package named for what it is, not here:
``kubegc.authz`` (RBAC rule matching, the ownerReferences permission rule),
``kubegc.tokens`` (ServiceAccount tokens); the registry's own machinery (schemas, typed
decoding, patches and managedFields, validation) is under ``kubegc.registry``.

May import: the standard library and small pure-Python dependencies only.
"""
