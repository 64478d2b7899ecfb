"""Emptying a Terminating namespace (cf. pkg/controller/namespace/deletion):
``namespaced_resources_deleter`` deletes its content and removes the ``kubernetes``
finalizer; ``status_condition_utils`` writes the five deletion conditions."""

from kubegc.controllers.namespace.deletion.namespaced_resources_deleter import (
    NamespacedResourcesDeleter,
)

__all__ = ["NamespacedResourcesDeleter"]
