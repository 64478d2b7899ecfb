"""Generate ``src/kubegc/registry/openapi_data/gotypes.json.gz``: the Go type of every field of
every upstream API struct, for ``kubegc.registry.typed`` (decoding a request as kube-apiserver
decodes it into the typed object, with encoding/json's error messages).

Run by hand when the Kubernetes version kubegc reports changes:

    pip install kubernetes-validate==1.37.0   # dev only: ships upstream's OpenAPI schemas
    python scripts/gen_gotypes.py

The source is kubernetes-validate's ``v1.32.0-local/_definitions.json`` (upstream's OpenAPI
definitions with their integer formats). OpenAPI says ``string`` for named string types
(``v1.RestartPolicy``, ``types.UID``); ``NAMED`` below restores the Go names of the fields
users most often get wrong, read from upstream's ``types.go`` (fields not listed keep
``string``: only the text of a type error about them differs).

Type grammar (one string per field): ``string``, ``bool``, ``int32``, ``int64``,
``float64``, ``[]byte``, ``string:<go name>`` (a named string type), ``@<definition>``,
``[]<type>``, ``map[string]<type>``. A definition is ``{"go": <go name>, "fields": {...}}``,
or ``{"go": ..., "special": <kind>}`` for the types with their own JSON decoding
(``quantity``, ``intorstring``, ``time``, ``microtime``, ``raw``, ``duration``).
"""

from __future__ import annotations

import gzip
import json
import zipfile
from importlib import util
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "src" / "kubegc" / "registry" / "openapi_data" / "gotypes.json.gz"
SOURCE = "kubernetes_validate/kubernetes-json-schema/v1.32.0-local/_definitions.json"
REF = "#/$defs/"

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
EXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1"
SPECIAL = {
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intorstring",
    f"{META}.Time": "time",
    f"{META}.MicroTime": "microtime",
    f"{META}.Duration": "duration",
    f"{META}.FieldsV1": "raw",
    f"{META}.Patch": "raw",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "raw",
    f"{EXT}.JSON": "raw",
    f"{EXT}.JSONSchemaPropsOrArray": "raw",
    f"{EXT}.JSONSchemaPropsOrBool": "raw",
    f"{EXT}.JSONSchemaPropsOrStringArray": "raw",
    f"{EXT}.CustomResourceSubresourceStatus": "raw",
}

CORE = "io.k8s.api.core.v1"
APPS = "io.k8s.api.apps.v1"
BATCH = "io.k8s.api.batch.v1"
#: (definition, field) → Go type of named string fields (upstream types.go).
NAMED: dict[tuple[str, str], str] = {
    (f"{META}.ObjectMeta", "uid"): "types.UID",
    (f"{META}.OwnerReference", "uid"): "types.UID",
    (f"{META}.ManagedFieldsEntry", "operation"): "v1.ManagedFieldsOperationType",
    (f"{META}.LabelSelectorRequirement", "operator"): "v1.LabelSelectorOperator",
    (f"{META}.Preconditions", "uid"): "types.UID",
    (f"{META}.Condition", "status"): "v1.ConditionStatus",
    (f"{CORE}.Container", "imagePullPolicy"): "v1.PullPolicy",
    (f"{CORE}.Container", "terminationMessagePolicy"): "v1.TerminationMessagePolicy",
    (f"{CORE}.ContainerPort", "protocol"): "v1.Protocol",
    (f"{CORE}.ServicePort", "protocol"): "v1.Protocol",
    (f"{CORE}.EndpointPort", "protocol"): "v1.Protocol",
    (f"{CORE}.PodSpec", "restartPolicy"): "v1.RestartPolicy",
    (f"{CORE}.PodSpec", "dnsPolicy"): "v1.DNSPolicy",
    (f"{CORE}.PodSpec", "preemptionPolicy"): "v1.PreemptionPolicy",
    (f"{CORE}.PodStatus", "phase"): "v1.PodPhase",
    (f"{CORE}.PodStatus", "qosClass"): "v1.PodQOSClass",
    (f"{CORE}.PodCondition", "type"): "v1.PodConditionType",
    (f"{CORE}.PodCondition", "status"): "v1.ConditionStatus",
    (f"{CORE}.NodeCondition", "type"): "v1.NodeConditionType",
    (f"{CORE}.NodeCondition", "status"): "v1.ConditionStatus",
    (f"{CORE}.NamespaceStatus", "phase"): "v1.NamespacePhase",
    (f"{CORE}.NamespaceCondition", "type"): "v1.NamespaceConditionType",
    (f"{CORE}.NamespaceCondition", "status"): "v1.ConditionStatus",
    (f"{CORE}.ServiceSpec", "type"): "v1.ServiceType",
    (f"{CORE}.ServiceSpec", "sessionAffinity"): "v1.ServiceAffinity",
    (f"{CORE}.ServiceSpec", "externalTrafficPolicy"): "v1.ServiceExternalTrafficPolicy",
    (f"{CORE}.ServiceSpec", "internalTrafficPolicy"): "v1.ServiceInternalTrafficPolicy",
    (f"{CORE}.ServiceSpec", "ipFamilyPolicy"): "v1.IPFamilyPolicy",
    (f"{CORE}.Secret", "type"): "v1.SecretType",
    (f"{CORE}.Toleration", "operator"): "v1.TolerationOperator",
    (f"{CORE}.Toleration", "effect"): "v1.TaintEffect",
    (f"{CORE}.Taint", "effect"): "v1.TaintEffect",
    (f"{CORE}.NodeSelectorRequirement", "operator"): "v1.NodeSelectorOperator",
    (f"{CORE}.PersistentVolumeClaimSpec", "volumeMode"): "v1.PersistentVolumeMode",
    (f"{CORE}.PersistentVolumeClaimStatus", "phase"): "v1.PersistentVolumeClaimPhase",
    (f"{CORE}.PersistentVolumeSpec", "persistentVolumeReclaimPolicy"):
        "v1.PersistentVolumeReclaimPolicy",
    (f"{CORE}.PersistentVolumeSpec", "volumeMode"): "v1.PersistentVolumeMode",
    (f"{CORE}.PersistentVolumeStatus", "phase"): "v1.PersistentVolumePhase",
    (f"{CORE}.ReplicationControllerCondition", "type"): "v1.ReplicationControllerConditionType",
    (f"{CORE}.ReplicationControllerCondition", "status"): "v1.ConditionStatus",
    (f"{APPS}.DeploymentStrategy", "type"): "v1.DeploymentStrategyType",
    (f"{APPS}.DeploymentCondition", "type"): "v1.DeploymentConditionType",
    (f"{APPS}.DeploymentCondition", "status"): "v1.ConditionStatus",
    (f"{APPS}.ReplicaSetCondition", "type"): "v1.ReplicaSetConditionType",
    (f"{APPS}.ReplicaSetCondition", "status"): "v1.ConditionStatus",
    (f"{APPS}.StatefulSetSpec", "podManagementPolicy"): "v1.PodManagementPolicyType",
    (f"{APPS}.StatefulSetUpdateStrategy", "type"): "v1.StatefulSetUpdateStrategyType",
    (f"{APPS}.DaemonSetUpdateStrategy", "type"): "v1.DaemonSetUpdateStrategyType",
    (f"{BATCH}.JobSpec", "completionMode"): "v1.CompletionMode",
    (f"{BATCH}.JobSpec", "podReplacementPolicy"): "v1.PodReplacementPolicy",
    (f"{BATCH}.JobCondition", "type"): "v1.JobConditionType",
    (f"{BATCH}.JobCondition", "status"): "v1.ConditionStatus",
    (f"{BATCH}.CronJobSpec", "concurrencyPolicy"): "v1.ConcurrencyPolicy",
    (f"{EXT}.CustomResourceDefinitionSpec", "scope"): "v1.ResourceScope",
    (f"{EXT}.CustomResourceDefinitionCondition", "type"):
        "v1.CustomResourceDefinitionConditionType",
    (f"{EXT}.CustomResourceDefinitionCondition", "status"): "v1.ConditionStatus",
}
#: (definition, field) → Go type of list/map fields whose element is a named string.
NAMED_ELEMENTS: dict[tuple[str, str], str] = {
    (f"{CORE}.NamespaceSpec", "finalizers"): "[]string:v1.FinalizerName",
    (f"{CORE}.PersistentVolumeClaimSpec", "accessModes"): "[]string:v1.PersistentVolumeAccessMode",
    (f"{CORE}.PersistentVolumeSpec", "accessModes"): "[]string:v1.PersistentVolumeAccessMode",
    (f"{CORE}.ServiceSpec", "ipFamilies"): "[]string:v1.IPFamily",
}


def go_name(definition: str) -> str:
    """``io.k8s.api.core.v1.PodSpec`` → ``v1.PodSpec`` (package, then type)."""
    package, _, name = definition.rpartition(".")
    return f"{package.rpartition('.')[2]}.{name}"


def field_type(schema: dict[str, Any]) -> str:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return "@" + ref.removeprefix(REF)
    for member in schema.get("allOf") or ():
        if "$ref" in member:
            return field_type(member)
    kinds = schema.get("type") or []
    kinds = [kinds] if isinstance(kinds, str) else [k for k in kinds if k != "null"]
    kind = kinds[0] if kinds else "object"
    fmt = schema.get("format")
    if kind == "array":
        return "[]" + field_type(schema.get("items") or {})
    if kind == "object":
        extra = schema.get("additionalProperties")
        return "map[string]" + (field_type(extra) if isinstance(extra, dict) else "raw")
    if kind == "integer":
        return "int32" if fmt == "int32" else "int64"
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if fmt == "byte":
        return "[]byte"
    return "string"


#: definitions the 1.32 source lacks, copied from a package of the same shape: the types 1.33
#: promoted to GA, whose shape is their 1.32 beta's (KEP-1880's networking.k8s.io/v1
#: ServiceCIDR and IPAddress), and flowcontrol v1beta3, which 1.32 stopped serving
#: (``--emulated-version`` 1.30 and 1.31 serve it) and whose shape is v1's:
#: (source package, target package, type names; empty: every type of the source package)
COPIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("io.k8s.api.networking.v1beta1.", "io.k8s.api.networking.v1.", (
        "IPAddress", "IPAddressList", "IPAddressSpec", "ParentReference", "ServiceCIDR",
        "ServiceCIDRList", "ServiceCIDRSpec", "ServiceCIDRStatus")),
    ("io.k8s.api.flowcontrol.v1.", "io.k8s.api.flowcontrol.v1beta3.", ()),
)


def promote(table: dict[str, Any]) -> dict[str, Any]:
    """``table`` with ``COPIES``'s copies (references inside renamed likewise)."""
    for source, target, names in COPIES:
        renamed = {name: target + name.removeprefix(source) for name in list(table)
                   if name.startswith(source) and "." not in name.removeprefix(source)
                   and (not names or name.removeprefix(source) in names)}
        for old, new in renamed.items():
            entry = json.loads(json.dumps(table[old]))
            entry["go"] = go_name(new)
            for prop, typ in entry.get("fields", {}).items():
                entry["fields"][prop] = typ.replace("@" + source, "@" + target)
            table[new] = entry
    return table


def build(defs: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, schema in sorted(defs.items()):
        if name in SPECIAL:
            out[name] = {"go": go_name(name), "special": SPECIAL[name]}
            continue
        fields = {}
        for prop, sub in (schema.get("properties") or {}).items():
            typ = NAMED_ELEMENTS.get((name, prop)) or field_type(sub)
            if (name, prop) in NAMED and typ == "string":
                typ = "string:" + NAMED[(name, prop)]
            fields[prop] = typ
        out[name] = {"go": go_name(name), "fields": fields}
    missing = [k for k in NAMED if k[0] not in out or k[1] not in out[k[0]].get("fields", {})]
    if missing:
        raise SystemExit(f"NAMED names fields upstream does not have: {missing}")
    return out


def main() -> None:
    spec = util.find_spec("kubernetes_validate")
    if spec is None or spec.origin is None:
        raise SystemExit("pip install kubernetes-validate==1.37.0 first (dev only)")
    package = Path(spec.origin).parent
    source = package.parent / SOURCE
    if source.exists():
        raw = source.read_bytes()
    else:  # a wheel not unpacked
        with zipfile.ZipFile(package.parent) as z:
            raw = z.read(SOURCE)
    defs = json.loads(raw)["$defs"]
    table = promote(build(defs))
    OUTPUT.write_bytes(gzip.compress(
        json.dumps(table, sort_keys=True, separators=(",", ":")).encode(), mtime=0))
    print(f"wrote {OUTPUT.relative_to(ROOT)}: {len(table)} definitions")


if __name__ == "__main__":
    main()
