"""Structural schemas of custom resources (cf. ``k8s.io/apiextensions-apiserver``
``pkg/apiserver/schema`` and ``pkg/apiserver/validation``): what kube-apiserver does with a
CRD version's ``openAPIV3Schema`` to every object it stores.

Pipeline, per write (the registry calls these):
  1. ``compile_schema`` — once per CRD generation, not per request (``schema.py``).
  2. ``prune`` — decoding: unknown fields and non-nullable nulls dropped, their paths
     returned for fieldValidation Strict/Warn (``pruning.py``).
  3. ``default`` — schema defaults filled in (``defaulting.py``).
  4. ``validate`` / ``validate_status`` — one walk: kube-openapi value validation with
     upstream's messages, embedded resources, list-type invariants, ratcheted against the
     old object on update (``validation.py``, ``objectmeta.py``, ``listtype.py``,
     ``ratcheting.py``; string formats in ``formats.py``; upstream's ``field.Error``
     constructors in ``field.py``, which print values through ``kubegc.api.goformat``).

Compiled schemas are immutable and shared; every function here mutates only the object it
is given. May import: ``kubegc.api``, ``kubegc.registry.definitions``,
``kubegc.registry.validation.objectmeta``.
"""

from kubegc.registry.structural.defaulting import default
from kubegc.registry.structural.pruning import prune
from kubegc.registry.structural.schema import Structural, compile_schema
from kubegc.registry.structural.validation import validate, validate_status

__all__ = ["Structural", "compile_schema", "default", "prune", "validate", "validate_status"]
