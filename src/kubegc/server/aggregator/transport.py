"""The aggregator's TLS to a backend (cf. kube-aggregator's
pkg/controllers/status/remote ``BuildTransportConfig``, used by both the proxy and the
availability check): the backend verified against the APIService's ``caBundle`` (or not
at all, ``insecureSkipTLSVerify``), and the front-proxy client certificate
(``--proxy-client-cert-file``/``--proxy-client-key-file``) presented, so that a backend that
verifies it against the ``requestheader-client-ca-file`` of the
``extension-apiserver-authentication`` ConfigMap trusts the requestheader headers.

Ownership: one per server (``Aggregator``); the contexts are built on first use and kept
(building one parses the bundle and loads the key pair).
"""

from __future__ import annotations

import ssl
from pathlib import Path

from kubegc.server.serviceresolver import tls_context

#: contexts kept at most (one per distinct caBundle)
_KEPT = 64


class ProxyTransport:
    """Client TLS contexts of the backends, with the front-proxy certificate (if any)."""

    def __init__(self, client_cert: tuple[Path, Path] | None = None) -> None:
        self.client_cert = client_cert
        self._contexts: dict[tuple[str, bool], ssl.SSLContext] = {}

    def context(self, ca_bundle: str, insecure: bool) -> ssl.SSLContext:
        """The context of a backend: ``ca_bundle`` verified (the host name too, as the
        Service's DNS name) unless ``insecure``; the client certificate presented."""
        key = (ca_bundle, insecure)
        context = self._contexts.get(key)
        if context is None:
            context = tls_context(ca_bundle or None, insecure_skip_verify=insecure)
            context.check_hostname = not insecure
            if self.client_cert is not None:
                context.load_cert_chain(*self.client_cert)
            if len(self._contexts) >= _KEPT:
                self._contexts.clear()
            self._contexts[key] = context
        return context

    def check_context(self) -> ssl.SSLContext:
        """The availability check's: upstream's trusts any certificate ("if someone owns
        the network and messes with your status that's not so bad"), and presents the
        client certificate as the proxy does."""
        return self.context("", True)
