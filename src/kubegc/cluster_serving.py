"""The API server's parts that the composition root (``kubegc.cluster``) builds from the
cluster's configuration: the front proxy of aggregated APIs and auditing. (Here, not in
``kubegc.server``: the server may not import ``kubegc.cluster_config``.)"""

from __future__ import annotations

from pathlib import Path

from kubegc.api.clock import Clock
from kubegc.cluster_config import (
    FRONT_PROXY_CLIENT,
    AuditConfiguration,
    RequestHeaderConfiguration,
)
from kubegc.server.audit import Auditor, LogBackend, LogOptions, load_policy
from kubegc.server.frontproxy import FrontProxy, generated_front_proxy


def front_proxy(config: RequestHeaderConfiguration, data_dir: Path) -> FrontProxy:
    """The front proxy the flags name, or the one kubegc keeps in ``data_dir`` when they
    name no file (kubeadm's front-proxy CA and client certificate)."""
    cert: tuple[Path, Path] | None = None
    ca_file = config.client_ca_file
    if config.generated:
        cert_file, key_file, ca_file = generated_front_proxy(data_dir, FRONT_PROXY_CLIENT)
        cert = (cert_file, key_file)
    elif config.proxy_client_cert_file is not None and config.proxy_client_key_file is not None:
        cert = (config.proxy_client_cert_file, config.proxy_client_key_file)
    return FrontProxy(client_cert=cert,
                      client_ca_pem=ca_file.read_bytes() if ca_file is not None else None,
                      allowed_names=config.allowed_names,
                      username_headers=config.username_headers,
                      group_headers=config.group_headers,
                      extra_headers_prefix=config.extra_headers_prefix)


def build_auditor(config: AuditConfiguration, clock: Clock) -> Auditor | None:
    """The server's auditing, or None when either the policy or the log is not given (as
    kube-apiserver, which then records nothing). Raises ``PolicyError``."""
    if config.policy_file is None or not config.log_path:
        return None
    return Auditor(load_policy(config.policy_file), LogBackend(LogOptions(
        path=config.log_path, max_age=config.log_maxage, max_backups=config.log_maxbackup,
        max_size=config.log_maxsize, format=config.log_format,
        compress=config.log_compress)), clock)
