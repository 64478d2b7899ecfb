"""The per-kind validation of the built-in kinds, worded as upstream's
``pkg/apis/<group>/validation`` (one module per API group, plus ``pods``, ``volumes`` and
``cron``), for the fields that matter to deletion and to the controllers kubegc runs.
Metadata (``ValidateObjectMeta``) is ``kubegc.registry.validation.objectmeta``'s; the registry runs both on
create and on update (``registry.strategy``).

``VALIDATORS`` maps (group, resource) to (validate(obj), validate_update(new, old)); an
update is validated by ``validate_update`` when there is one, else by ``validate``.
Validators run on decoded objects (``kubegc.registry.typed``): types are already right.
May import: stdlib, ``kubegc.api``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubegc.api.errors import StatusCause
from kubegc.registry.validation import apps, batch, coordination, core, pods, volumes

Validate = Callable[[dict[str, Any]], list[StatusCause]]
ValidateUpdate = Callable[[dict[str, Any], dict[str, Any]], list[StatusCause]]

VALIDATORS: dict[tuple[str, str], tuple[Validate, ValidateUpdate | None]] = {
    ("", "pods"): (pods.validate_pod, None),
    ("", "podtemplates"): (pods.validate_pod_template_object, None),
    ("", "configmaps"): (core.validate_config_map, core.validate_config_map_update),
    ("", "secrets"): (core.validate_secret, core.validate_secret_update),
    ("", "namespaces"): (core.validate_namespace, None),
    ("", "services"): (core.validate_service, None),
    ("", "replicationcontrollers"): (core.validate_replication_controller, None),
    ("", "events"): (core.validate_event, None),
    ("events.k8s.io", "events"): (core.validate_events_v1_event, None),
    ("", "persistentvolumes"): (volumes.validate_persistent_volume, None),
    ("", "persistentvolumeclaims"): (volumes.validate_persistent_volume_claim,
                                     volumes.validate_persistent_volume_claim_update),
    ("apps", "deployments"): (apps.validate_deployment, apps.validate_deployment_update),
    ("apps", "replicasets"): (apps.validate_replica_set, apps.validate_replica_set_update),
    ("apps", "statefulsets"): (apps.validate_stateful_set, apps.validate_stateful_set_update),
    ("apps", "daemonsets"): (apps.validate_daemon_set, apps.validate_daemon_set_update),
    ("batch", "jobs"): (batch.validate_job, batch.validate_job_update),
    ("batch", "cronjobs"): (batch.validate_cron_job, None),
    ("coordination.k8s.io", "leases"): (coordination.validate_lease, None),
}

__all__ = ["VALIDATORS", "Validate", "ValidateUpdate"]
