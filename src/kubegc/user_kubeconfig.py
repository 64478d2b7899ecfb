"""A user's kubeconfig: a client certificate for a user and groups, signed by a kubegc's CA
(as ``kubeadm kubeconfig user`` signs with the cluster's CA), for ``kubegc kubeconfig
--user`` (from a data directory, no server needed) and ``Cluster.user_kubeconfig`` (from
a running cluster, for ``kubegc.testing``). The server's x509 authenticator reads the
certificate back as that user; what the user may do is RBAC's to say.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import yaml

from kubegc.client.kubeconfig import kubeconfig_document
from kubegc.server.tls import (
    CLIENT_CERT_VALIDITY,
    CertificateAuthority,
    ClientCertificateError,
    client_certificate,
    load_ca,
)
from kubegc.storage import DataDir


class UserKubeconfigError(RuntimeError):
    """A user's kubeconfig cannot be made (the message says why and what to do)."""


def signed_kubeconfig(ca: CertificateAuthority, ca_pem: bytes, server: str, user: str,
                      groups: tuple[str, ...] = (), *,
                      validity: timedelta = CLIENT_CERT_VALIDITY) -> dict[str, object]:
    """A kubeconfig (document) of ``server`` for ``user`` in ``groups``, with a client
    certificate signed by ``ca``. Raises ``ClientCertificateError`` for a name a
    certificate cannot carry or a validity the CA does not cover."""
    cert = client_certificate(ca, user, groups, validity=validity)
    return kubeconfig_document(server=server, ca_data=ca_pem, user=user,
                               client_certificate=cert.cert_pem, client_key=cert.key_pem)


def data_dir_user_kubeconfig(data_dir: Path, user: str, groups: tuple[str, ...] = (), *,
                             validity: timedelta = CLIENT_CERT_VALIDITY,
                             server: str | None = None) -> dict[str, object]:
    """``kubegc kubeconfig --user``: ``signed_kubeconfig`` by the CA of the kubegc that
    serves from ``data_dir``, for the server its admin kubeconfig names (or ``server``).
    Needs no running server; ``UserKubeconfigError`` says what is missing."""
    ca = load_ca(data_dir)
    files = DataDir(data_dir)
    if ca is None:
        raise UserKubeconfigError(
            f"no kubegc CA in {files.pki}: start kubegc once with TLS on that "
            f"data directory (kubegc serve --data-dir {data_dir}), or pass --data-dir")
    if server is None:
        server = _admin_server(files.kubeconfig)
    try:
        return signed_kubeconfig(ca, files.ca_cert.read_bytes(), server, user, groups,
                                 validity=validity)
    except ClientCertificateError as e:
        raise UserKubeconfigError(str(e)) from None


def _admin_server(path: Path) -> str:
    """The server address of the admin kubeconfig ``kubegc serve`` wrote at ``path``."""
    try:
        doc = yaml.safe_load(path.read_text())
        server = str(doc["clusters"][0]["cluster"]["server"])
    except (OSError, yaml.YAMLError, KeyError, IndexError, TypeError) as e:
        reason = "it is missing" if isinstance(e, FileNotFoundError) else "it names no server"
        raise UserKubeconfigError(
            f"cannot take the server's address from {path} ({reason}): pass --server "
            "https://HOST:PORT") from None
    return server
