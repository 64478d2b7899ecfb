"""Workload history as ControllerRevisions (cf. pkg/controller/history): the revisions'
names, hashes, numbers and the template patch they hold, and the verbs the StatefulSet
and DaemonSet controllers write them with.

May import: ``kubegc.api``, ``kubegc.client`` and ``kubegc.component``.
"""

from kubegc.controllers.history.controller_history import (
    CONTROLLER_REVISION_HASH_LABEL,
    CONTROLLER_REVISIONS,
    ControllerHistory,
    Created,
    apply_revision,
    controller_revision_name,
    equal_revision,
    find_equal_revisions,
    hash_controller_revision,
    max_revision,
    new_controller_revision,
    raw_of,
    revision_number,
    revision_reference,
    sort_controller_revisions,
    template_patch,
)

__all__ = ["CONTROLLER_REVISIONS", "CONTROLLER_REVISION_HASH_LABEL", "ControllerHistory",
           "Created", "apply_revision", "controller_revision_name", "equal_revision",
           "find_equal_revisions", "hash_controller_revision", "max_revision",
           "new_controller_revision", "raw_of", "revision_number", "revision_reference",
           "sort_controller_revisions", "template_patch"]
