"""kube-apiserver's auditing (``k8s.io/apiserver/pkg/audit``): the policy
(``--audit-policy-file``), the events, the log backend (``--audit-log-*``) and the filter
that audits each request. Off unless a policy file is given, as upstream.
"""

from kubegc.server.audit.event import Event
from kubegc.server.audit.filter import Auditor, RequestAudit
from kubegc.server.audit.log import LogBackend, LogOptions
from kubegc.server.audit.policy import Level, Policy, PolicyError, Stage, load_policy

__all__ = ["Auditor", "Event", "Level", "LogBackend", "LogOptions", "Policy",
           "PolicyError", "RequestAudit", "Stage", "load_policy"]
