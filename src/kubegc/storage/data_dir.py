"""Every file and folder of a kubegc data directory, named in one place (as etcd names its
data directory's in ``server/storage/datadir``: ``ToBackendFileName``, ``ToSnapDir``,
``ToWalDir``). Whoever reads or writes one of them asks ``DataDir`` for its path::

    <data-dir>/                 owner-only (0700); ``--data-dir``, ``$KUBEGC_DATA_DIR``
      kubegc.db                 the SQLite store of ``--storage sqlite`` (and its -wal, -shm)
      kubegc.lock               held by the one kubegc serving from the directory (its pid)
      kubeconfig                the admin kubeconfig ``kubegc serve`` writes
      clock.json                the cluster clock's lead over real time (``--time-scale``)
      leader-identity           this server's leader-election identity
      pki/                      owner-only (0700)
        ca.crt  ca.key          the CA: it signs the serving and the client certificates
        server.crt  server.key  the serving certificate
        token                   the admin's bearer token
        sa.key  sa.pub          the ServiceAccount signing key pair (kubeadm's names)

Who writes them: ``kubegc.storage`` the store; ``kubegc.server.tls`` ``pki/``; the
composition root (``kubegc.cluster``, ``kubegc.data_dir_state``) the rest. May import: the
standard library.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: where the data directory is unless ``--data-dir`` says otherwise
DEFAULT_DATA_DIR = "~/.kubegc"
#: the environment variable that moves the default data directory
DATA_DIR_ENV = "KUBEGC_DATA_DIR"


def default_data_dir() -> Path:
    """``$KUBEGC_DATA_DIR``, else ``~/.kubegc``."""
    return Path(os.environ.get(DATA_DIR_ENV, DEFAULT_DATA_DIR)).expanduser()


@dataclass(frozen=True, slots=True)
class DataDir:
    """The paths of the data directory ``root`` (nothing is read or created here)."""

    root: Path

    @property
    def store(self) -> Path:
        return self.root / "kubegc.db"

    @property
    def lock(self) -> Path:
        return self.root / "kubegc.lock"

    @property
    def kubeconfig(self) -> Path:
        return self.root / "kubeconfig"

    @property
    def clock(self) -> Path:
        return self.root / "clock.json"

    @property
    def informer_caches(self) -> Path:
        """The metadata informers' caches, written while serving and at a clean stop
        (``client.cache.snapshot``)."""
        return self.root / "informer-caches.jsonl"

    @property
    def leader_identity(self) -> Path:
        return self.root / "leader-identity"

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def ca_cert(self) -> Path:
        return self.pki / "ca.crt"

    @property
    def ca_key(self) -> Path:
        return self.pki / "ca.key"

    @property
    def server_cert(self) -> Path:
        return self.pki / "server.crt"

    @property
    def server_key(self) -> Path:
        return self.pki / "server.key"

    @property
    def front_proxy_ca_cert(self) -> Path:
        """The front-proxy CA (kubeadm's name): the aggregator's client certificate's."""
        return self.pki / "front-proxy-ca.crt"

    @property
    def front_proxy_ca_key(self) -> Path:
        return self.pki / "front-proxy-ca.key"

    @property
    def front_proxy_client_cert(self) -> Path:
        return self.pki / "front-proxy-client.crt"

    @property
    def front_proxy_client_key(self) -> Path:
        return self.pki / "front-proxy-client.key"

    @property
    def token(self) -> Path:
        return self.pki / "token"

    @property
    def service_account_key(self) -> Path:
        return self.pki / "sa.key"

    @property
    def service_account_public_key(self) -> Path:
        return self.pki / "sa.pub"
