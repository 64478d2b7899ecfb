"""The ServiceAccount signing key pair (kube-apiserver's
``--service-account-signing-key-file`` and ``--service-account-key-file``,
kube-controller-manager's ``--service-account-private-key-file``: one pair for both, as
kubeadm's ``sa.key``/``sa.pub``).

A key is RSA 2048 and signs RS256, as kubeadm makes it: upstream's OIDC discovery
(``algorithmForPublicKey``) publishes RS256 keys only, and verifiers of ServiceAccount
tokens outside the cluster commonly expect RS256. ``kubegc.server.tls`` keeps it in the
data directory's ``pki/`` beside the CA; a cluster without a data directory has one in
memory, made when first used (generating takes ~65 ms, which a test cluster that never
signs a token should not pay).
"""

from __future__ import annotations

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kubegc.tokens.jws import PrivateKey, PublicKey, key_id

RSA_KEY_BITS = 2048


def generate_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_BITS)


def private_key_pem(key: PrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def public_key_pem(key: PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def load_private_key(pem: bytes) -> PrivateKey:
    """An RSA or EC private key from PEM; ValueError for anything else."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (TypeError, UnsupportedAlgorithm) as e:
        raise ValueError(str(e)) from None
    if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        raise ValueError(f"unknown private key type {type(key).__name__}, must be RSA or "
                         "ECDSA")
    return key


class ServiceAccountKey:
    """One signing key pair: given as PEM, or made on first use.

    Ownership: made once, then read by the TokenRequest issuer (registry), the token
    authenticator (server) and the tokens controller; never changes afterwards."""

    def __init__(self, pem: bytes | None = None) -> None:
        self._key: PrivateKey | None = None if pem is None else load_private_key(pem)
        self._key_id = ""

    @property
    def private_key(self) -> PrivateKey:
        if self._key is None:
            self._key = generate_key()
        return self._key

    @property
    def public_key(self) -> PublicKey:
        return self.private_key.public_key()

    @property
    def key_id(self) -> str:
        """The ``kid`` its tokens carry (computed once)."""
        if not self._key_id:
            self._key_id = key_id(self.public_key)
        return self._key_id

    def pem(self) -> bytes:
        return private_key_pem(self.private_key)

    def __repr__(self) -> str:  # never print the key
        return "ServiceAccountKey(...)"
