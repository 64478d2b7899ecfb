"""CertificateSigningRequests and APIServices (cf. pkg/registry/certificates,
kube-aggregator's apiservice registry).

A request's ``PrepareForCreate`` clears its status; upstream also records the requesting
user in ``spec.username`` and ``groups``, which kubegc (one token, no user names) leaves
empty.

Stored only: no signer issues a certificate for an approved request, and kubegc
aggregates no API server — an APIService that names a service serves nothing, and the
local APIServices a real cluster lists for its own groups are not created.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from cryptography import x509

from kubegc.api.content import is_dns1123_subdomain, is_path_segment_name
from kubegc.api.errors import StatusCause, field_error
from kubegc.api.types import Obj
from kubegc.registry.groups._fields import empty_status, map_at, required, set_default, value_at

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


def validate_apiservice(obj: Obj) -> list[StatusCause]:
    """``ValidateAPIService``: named ``<version>.<group>``, valid priorities, and a
    service reference with a namespace and a name unless local."""
    spec = map_at(obj, "spec")
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    name = str((obj.get("metadata") or {}).get("name") or "")
    causes: list[StatusCause] = []
    expected = f"{version}.{group}"
    if name != expected and not is_path_segment_name(name):
        causes.append(field_error("FieldValueInvalid", "metadata.name",
                                  f'must be `spec.version+"."+spec.group`: "{expected}"', name))
    if not group and version != "v1":
        causes.append(field_error("FieldValueRequired", "spec.group",
                                  "only v1 may have an empty group and it better be legacy kube"))
    causes += [field_error("FieldValueInvalid", "spec.group", m, group)
               for m in (is_dns1123_subdomain(group) if group else [])]
    for key, limit in (("groupPriorityMinimum", 20000), ("versionPriority", 1000)):
        value = spec.get(key) or 0
        if not isinstance(value, int) or not 0 < value <= limit:
            causes.append(field_error("FieldValueInvalid", f"spec.{key}",
                                      f"must be positive and less than {limit}", value,
                                      go_type="int32"))
    if spec.get("service") is not None:
        causes += required(spec, "service.namespace", "service.name", at="spec")
    return causes


def default_apiservice(obj: Obj) -> None:
    """``SetDefaults_ServiceReference``: port 443."""
    if isinstance(value_at(obj, "spec.service"), dict):
        set_default(obj, "spec.service.port", 443)


STRATEGIES: dict[tuple[str, str], dict[str, Any]] = {
    ("certificates.k8s.io", "certificatesigningrequests"): {
        "tracks_generation": False, "prepare_for_create": empty_status,
        "validate": validate_csr},
    ("apiregistration.k8s.io", "apiservices"): {
        "tracks_generation": False, "prepare_for_create": empty_status,
        "name_validator": is_path_segment_name, "validate": validate_apiservice},
}
DEFAULTERS = {("apiregistration.k8s.io", "apiservices"): default_apiservice}
