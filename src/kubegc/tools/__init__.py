"""Tools that explain deletions: ``doctor``, ``plan``, ``tree`` and ``why``.

They read a cluster — kubegc, any real Kubernetes cluster through a kubeconfig, or a dump
file (``DumpClient``) — only through the ``kubegc.client.Client`` protocol, and never
write to it: the planner runs its what-if in a separate in-memory kubegc that the
composition root builds (injected as a ``SimulationFactory``).

Pipeline: ``inventory`` reads objects → ``ownership`` / ``finalizers`` / ``state``
interpret them with the garbage collector's own decision code
(``kubegc.controllers.garbagecollector.decision``) → ``doctor/``,
``plan/``, ``tree``, ``why`` build reports (plain dataclasses with ``to_dict()``) →
``render/`` turns reports into coloured text, JSON, DOT or SVG; ``commands`` is the
command-line glue that ``kubegc.cli`` calls, reading the cluster through a ``session``.

May import: ``kubegc.api``, ``kubegc.client`` and the standard library (import-linter
forbids ``registry``, ``storage`` and ``server``).
"""
