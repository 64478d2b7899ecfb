"""The certificates.k8s.io group's storage: CertificateSigningRequests (cf.
pkg/registry/certificates).

A request's ``PrepareForCreate`` clears its status; upstream also records the requesting
user in ``spec.username`` and ``groups``, which kubegc (one token, no user names) leaves
empty.

Stored only: no signer issues a certificate for an approved request.
"""

from __future__ import annotations

import base64
import binascii

from cryptography import x509

from kubegc.api.errors import StatusCause, field_error
from kubegc.api.resources import builtin
from kubegc.api.types import Obj
from kubegc.registry import printers
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StatusREST, StorageContext, stored
from kubegc.registry.generic.strategy import Strategy
from kubegc.registry.validation.paths import empty_status, required, value_at

_PEM_BEGIN = b"-----BEGIN CERTIFICATE REQUEST-----"


def validate_csr(obj: Obj) -> list[StatusCause]:
    """``ValidateCertificateSigningRequestCreate``: a signer name, usages, and a request
    that parses as a PEM certificate request with a valid signature."""
    causes = required(obj, "spec.request", "spec.usages")
    signer = str(value_at(obj, "spec.signerName") or "")
    if not signer:
        causes += required(obj, "spec.signerName")
    elif "/" not in signer:
        causes.append(field_error("FieldValueInvalid", "spec.signerName",
                                  "must be a fully qualified domain and path of the form "
                                  "'example.com/signer-name'", signer))
    request = value_at(obj, "spec.request")
    if request:
        error = _csr_error(str(request))
        if error:  # the value is the decoded []byte, as Go's %#v prints it
            shown = ", ".join(f"0x{b:x}" for b in _decoded(str(request)))
            causes.append(StatusCause("FieldValueInvalid",
                                      f"Invalid value: []byte{{{shown}}}: {error}",
                                      "spec.request"))
    return causes


def _decoded(request: str) -> bytes:
    try:
        return base64.b64decode(request, validate=True)
    except (binascii.Error, ValueError):
        return request.encode()


def _csr_error(request: str) -> str:
    """``certificates.ParseCSR`` and ``CheckSignature``: "" when valid."""
    pem = _decoded(request)
    if _PEM_BEGIN not in pem:
        return "PEM block type must be CERTIFICATE REQUEST"
    try:
        csr = x509.load_pem_x509_csr(pem)
    except ValueError as e:
        return f"asn1: structure error: {e}"
    return "" if csr.is_signature_valid else "x509: ECDSA verification failure"


def resources(ctx: StorageContext) -> list[Resource]:
    """CertificateSigningRequests, with their ``status`` and ``approval`` subresources (an
    approval is a write of the status's conditions)."""
    return [stored(ctx, builtin("certificates.k8s.io", "certificatesigningrequests"),
                   Strategy(tracks_generation=False, prepare_for_create=empty_status,
                            validate=validate_csr), status=True,
                   subresources={"approval": StatusREST(ctx, subresource="approval")},
                       table=printers.CSR)]
