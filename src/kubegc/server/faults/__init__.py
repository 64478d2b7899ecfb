"""Fault injection: an API server that breaks things on purpose, on demand (issue 25;
docs/faults.md has a recipe per fault).

* ``model``: the fault object, parsed at the edge;
* ``registry``: the active faults and the hook on the request path (``FaultRegistry.serve``,
  called by ``app._serve`` after authorization), and the request log;
* ``actions``: the Status an ``error`` fault answers, as kube-apiserver writes it;
* ``stream``: faults on open watches (``closeWatch``, ``expireWatch``, ``hang``);
* ``kubegc.server.fault_endpoints`` serves them: ``/debug/kubegc/faults``,
  ``/debug/kubegc/requests``, ``/debug/kubegc/controllers`` (system:masters).

A fault lives in the server's memory only: it never outlives the server and never
touches stored data.
"""

from kubegc.server.faults.registry import FaultRegistry, WatchScope, current_watch

__all__ = ["FaultRegistry", "WatchScope", "current_watch"]
