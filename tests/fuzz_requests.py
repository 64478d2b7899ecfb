"""Hostile requests for fuzzing a running kubegc over HTTP (Hypothesis strategies), and
the check every answer must pass: no 5xx, every error a ``Status`` whose code is the HTTP
status. Used by ``tests/e2e/test_fuzz.py`` (bounded, in CI) and ``bench/fuzz_http.py``
(long runs).

A request is built from a valid object of one of the built-in kinds (``TEMPLATES``) with a
few values replaced by arbitrary JSON, sent as a create, an update or one of the four
patch types (and the same body through the other write paths: ``FuzzRequest.also``), or
it is a read, list, watch or delete with arbitrary query parameters, or a body of
arbitrary bytes, or an object of the invalid corpus (``tests/invalid_corpus.py``), which
must be refused.
"""

from __future__ import annotations

import copy
import http.client
import json
import ssl
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlsplit

from hypothesis import strategies as st

from tests.invalid_corpus import BASES, CORPUS, Invalid

POD_SPEC = {"containers": [{"name": "c", "image": "busybox", "ports": [{"containerPort": 80}],
                            "resources": {"limits": {"cpu": "100m"}}}]}
TEMPLATE = {"metadata": {"labels": {"app": "f"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "f"}}

#: (path of the collection under /, kind's apiVersion, kind, object without metadata.name)
TEMPLATES: list[tuple[str, str, str, dict[str, Any]]] = [
    ("api/v1/namespaces/{ns}/configmaps", "v1", "ConfigMap", {"data": {"a": "b"}}),
    ("api/v1/namespaces/{ns}/secrets", "v1", "Secret", {"data": {"a": "Yg=="}}),
    ("api/v1/namespaces/{ns}/pods", "v1", "Pod", {"spec": POD_SPEC}),
    ("api/v1/namespaces/{ns}/services", "v1", "Service",
     {"spec": {"selector": {"app": "f"}, "ports": [{"port": 80, "targetPort": 8080}]}}),
    ("api/v1/namespaces/{ns}/serviceaccounts", "v1", "ServiceAccount", {}),
    ("api/v1/namespaces/{ns}/replicationcontrollers", "v1", "ReplicationController",
     {"spec": {"replicas": 0, "selector": {"app": "f"}, "template": TEMPLATE}}),
    ("api/v1/namespaces/{ns}/persistentvolumeclaims", "v1", "PersistentVolumeClaim",
     {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    ("api/v1/namespaces/{ns}/events", "v1", "Event",
     {"involvedObject": {"kind": "Pod", "name": "p"}, "reason": "R", "message": "m"}),
    ("api/v1/persistentvolumes", "v1", "PersistentVolume",
     {"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
               "hostPath": {"path": "/tmp"}}}),
    ("apis/apps/v1/namespaces/{ns}/deployments", "apps/v1", "Deployment",
     {"spec": {"replicas": 0, "selector": SELECTOR, "template": TEMPLATE}}),
    ("apis/apps/v1/namespaces/{ns}/replicasets", "apps/v1", "ReplicaSet",
     {"spec": {"replicas": 0, "selector": SELECTOR, "template": TEMPLATE}}),
    ("apis/apps/v1/namespaces/{ns}/statefulsets", "apps/v1", "StatefulSet",
     {"spec": {"replicas": 0, "serviceName": "s", "selector": SELECTOR, "template": TEMPLATE}}),
    ("apis/apps/v1/namespaces/{ns}/daemonsets", "apps/v1", "DaemonSet",
     {"spec": {"selector": SELECTOR, "template": TEMPLATE}}),
    ("apis/batch/v1/namespaces/{ns}/jobs", "batch/v1", "Job",
     {"spec": {"suspend": True, "template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}}),
    ("apis/batch/v1/namespaces/{ns}/cronjobs", "batch/v1", "CronJob",
     {"spec": {"schedule": "*/5 * * * *", "suspend": True, "jobTemplate": {"spec": {
         "template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}}}}),
    ("apis/coordination.k8s.io/v1/namespaces/{ns}/leases", "coordination.k8s.io/v1", "Lease",
     {"spec": {"holderIdentity": "h", "leaseDurationSeconds": 15}}),
    ("api/v1/namespaces", "v1", "Namespace", {}),
    ("api/v1/nodes", "v1", "Node", {"spec": {"unschedulable": True}}),
    ("apis/apiextensions.k8s.io/v1/customresourcedefinitions", "apiextensions.k8s.io/v1",
     "CustomResourceDefinition", {"spec": {
         "group": "fuzz.example.com", "scope": "Namespaced",
         "names": {"plural": "widgets", "kind": "Widget"},
         "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
             "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                 "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}),
    ("apis/events.k8s.io/v1/namespaces/{ns}/events", "events.k8s.io/v1", "Event",
     {"eventTime": "2024-01-01T00:00:00.000000Z", "reportingController": "c",
      "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal"}),
]
PATCH_TYPES = ["application/merge-patch+json", "application/strategic-merge-patch+json",
               "application/json-patch+json", "application/apply-patch+yaml"]
FIELDS = ["metadata", "spec", "status", "data", "name", "namespace", "labels", "annotations",
          "finalizers", "ownerReferences", "uid", "kind", "apiVersion", "containers",
          "replicas", "selector", "template", "matchLabels", "schedule", "completions",
          "image", "ports", "resourceVersion", "generateName", "deletionTimestamp",
          "creationTimestamp", "blockOwnerDeletion", "controller", "managedFields"]
QUERY = ["limit", "continue", "resourceVersion", "resourceVersionMatch", "labelSelector",
         "fieldSelector", "timeoutSeconds", "propagationPolicy", "gracePeriodSeconds",
         "dryRun", "fieldValidation", "fieldManager", "force", "orphanDependents",
         "allowWatchBookmarks", "sendInitialEvents", "pretty"]

text = st.text(max_size=12) | st.sampled_from(
    ["", "a b", "UPPER", "-x", "x" * 300, "\ud800", "Foreground", "*/5 * * * *", "1Gi",
     "x" * 300_000, "2024-01-01T00:00:00Z", "-1", "9223372036854775808",
     "99999999999999999999", "18446744073709551616", "+1", "1_0", "0x10"])
#: integers past int64 and uint64 (Go's decoders make them float64s) and past float64
big_integers = st.integers(-(2 ** 70), 2 ** 70) | st.sampled_from(
    [2 ** 63, 2 ** 64, -(2 ** 63) - 1, 10 ** 23, 10 ** 400])
scalars = (st.none() | st.booleans() | big_integers | text
           | st.floats(allow_nan=False, allow_infinity=False))
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(FIELDS) | text, inner, max_size=3), max_leaves=8)


#: how deeply a value nests: around kubegc's limit (``api.limits.MAX_NESTING``), past
#: Python's recursion limit, and past Go's decoders' (10000)
DEPTHS = [150, 199, 200, 201, 999, 1001, 5000, 20000]


@st.composite
def deep_values(draw: st.DrawFn) -> Any:
    """A map or list nested ``DEPTHS`` levels (or maps and lists alternating)."""
    depth = draw(st.sampled_from(DEPTHS))
    shape = draw(st.sampled_from(["map", "list", "both"]))
    value: Any = draw(scalars)
    for level in range(depth):
        as_map = shape == "map" or (shape == "both" and level % 2 == 0)
        value = {"a": value} if as_map else [value]
    return value


def _dumps_deep(value: Any) -> bytes:
    """JSON of a value however deep (the standard encoder recurses): an explicit stack of
    text pieces (``str``) and values still to encode (wrapped in a 1-tuple)."""
    out: list[str] = []
    stack: list[Any] = [(value,)]
    while stack:
        piece = stack.pop()
        if isinstance(piece, str):
            out.append(piece)
            continue
        item = piece[0]
        if isinstance(item, dict):
            parts: list[Any] = []
            for key, inner in item.items():
                parts += [",", json.dumps(key) + ":", (inner,)]
            stack.extend(reversed(["{", *parts[1:], "}"]))
        elif isinstance(item, list):
            parts = []
            for inner in item:
                parts += [",", (inner,)]
            stack.extend(reversed(["[", *parts[1:], "]"]))
        else:
            out.append(json.dumps(item))
    return "".join(out).encode()


@dataclass
class FuzzRequest:
    method: str
    path: str  # with the namespace placeholder filled
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    #: the corpus case this request sends (``tests/invalid_corpus.py``): it must be refused
    invalid: Invalid | None = None
    #: the same body through the other write paths, sent after this request
    also: list[FuzzRequest] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.method} {self.path} {self.headers} {self.body[:300]!r}"


def _replace_somewhere(obj: Any, choices: list[int], value: Any) -> Any:
    """``obj`` with the node that ``choices`` lead to (an index per level) replaced."""
    if not choices or not isinstance(obj, dict | list) or not obj:
        return value
    keys = list(obj) if isinstance(obj, dict) else list(range(len(obj)))
    key = keys[choices[0] % len(keys)]
    obj[key] = _replace_somewhere(obj[key], choices[1:], value)
    return obj


@st.composite
def objects(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """(collection path template, an object of a kind with a few values replaced)."""
    path, api_version, kind, body = draw(st.sampled_from(TEMPLATES))
    obj = {"apiVersion": api_version, "kind": kind,
           "metadata": {"name": draw(st.sampled_from(["seed", "f1", "f2"]))},
           **copy.deepcopy(body)}
    for _ in range(draw(st.integers(0, 3))):
        choices = draw(st.lists(st.integers(0, 7), max_size=6))
        obj = _replace_somewhere(obj, choices, draw(json_values))
    if draw(st.integers(0, 9)) == 0:  # one value nested deeply
        choices = draw(st.lists(st.integers(0, 7), min_size=1, max_size=4))
        obj = _replace_somewhere(obj, choices, draw(deep_values()))
    return path, obj if isinstance(obj, dict) else {"x": obj}


def _dumps(value: Any) -> bytes:
    try:
        return json.dumps(value).encode()
    except RecursionError:
        return _dumps_deep(value)


def _query(draw: st.DrawFn) -> str:
    params = draw(st.dictionaries(st.sampled_from(QUERY), text | st.integers().map(str),
                                  max_size=3))
    return "&".join(f"{k}={_quote(v)}" for k, v in params.items())


def _quote(text: str) -> str:
    return quote(text.encode("utf-8", "surrogatepass"), safe="")


@st.composite
def requests(draw: st.DrawFn, namespace: str) -> FuzzRequest:
    path, obj = draw(objects())
    collection = "/" + path.format(ns=namespace)
    name = obj["metadata"].get("name") if isinstance(obj.get("metadata"), dict) else None
    item = f"{collection}/{_quote(name) if isinstance(name, str) and name else 'seed'}"
    query = _query(draw)
    suffix = f"?{query}" if query else ""
    what = draw(st.sampled_from(["create", "update", "patch", "read", "delete", "bytes",
                                 "invalid"]))
    # JSON is YAML too: a body is sent as either
    json_header = {"Content-Type": draw(st.sampled_from(["application/json"] * 3
                                                        + ["application/yaml"]))}
    whole: Any = obj
    if draw(st.integers(0, 9)) == 0:  # valid JSON that is not an object
        whole = draw(st.one_of(scalars, st.lists(json_values, max_size=3), deep_values()))
    if what == "create":
        return FuzzRequest("POST", collection + suffix, json_header, _dumps(whole),
                           also=_writes(item, suffix, _dumps(whole), json_header))
    if what == "update":
        target = draw(st.sampled_from([item, item + "/status", item + "/scale"]))
        return FuzzRequest("PUT", target + suffix, json_header, _dumps(whole),
                           also=_writes(item, suffix, _dumps(whole), json_header))
    if what == "invalid":
        return invalid_request(draw(st.sampled_from(range(len(CORPUS)))), namespace)
    if what == "patch":
        patch_type = draw(st.sampled_from(PATCH_TYPES))
        body: Any = obj
        if patch_type.endswith("json-patch+json"):
            body = draw(st.lists(st.fixed_dictionaries({
                "op": st.sampled_from(["add", "replace", "remove", "test", "move", "copy"])
                | text, "path": st.sampled_from(["/metadata", "/spec", "/metadata/labels/a",
                                                "/data/a", "/spec/replicas", "/", ""]) | text,
                "value": json_values}), max_size=3) | json_values)
        elif draw(st.booleans()):
            body = draw(json_values | deep_values())
        target = draw(st.sampled_from([item, item, item + "/status", item + "/scale"]))
        return FuzzRequest("PATCH", target + (suffix or "?fieldManager=fuzz"),
                           {"Content-Type": patch_type}, _dumps(body))
    if what == "read":
        target = draw(st.sampled_from([collection, item, collection + "/seed/status",
                                       collection + "/seed/scale"]))
        if draw(st.booleans()):  # a watch that ends by itself
            return FuzzRequest("GET", f"{target}?watch=1&timeoutSeconds=1"
                                      f"{'&' + query if query else ''}")
        return FuzzRequest("GET", target + suffix)
    if what == "delete":
        options = draw(st.none() | json_values | deep_values() | st.fixed_dictionaries(
            {}, optional={"propagationPolicy": text | deep_values(),
                          "gracePeriodSeconds": json_values,
                          "preconditions": json_values | deep_values(),
                          "orphanDependents": json_values, "dryRun": json_values}))
        target = draw(st.sampled_from([collection, item]))
        return FuzzRequest("DELETE", target + suffix, json_header,
                           b"" if options is None else _dumps(options))
    content_type = draw(st.sampled_from(["application/json", "application/yaml",
                                         "application/vnd.kubernetes.protobuf", *PATCH_TYPES]))
    method = "PATCH" if content_type in PATCH_TYPES else draw(st.sampled_from(["POST", "PUT"]))
    return FuzzRequest(method, collection if method == "POST" else item,
                       {"Content-Type": content_type}, draw(st.binary(max_size=64)))


def _writes(item: str, suffix: str, body: bytes, headers: dict[str, str]) -> list[FuzzRequest]:
    """One body through the write paths beside the one drawn: an update of the object and
    of its status, and the three patch types that take an object (fuzzing every decoder
    with the same input costs one draw)."""
    manager = suffix or "?fieldManager=fuzz"
    return [FuzzRequest("PUT", item + suffix, headers, body),
            FuzzRequest("PUT", item + "/status" + suffix, headers, body),
            *(FuzzRequest("PATCH", item + manager, {"Content-Type": patch_type}, body)
              for patch_type in PATCH_TYPES if not patch_type.endswith("json-patch+json"))]


def invalid_request(index: int, namespace: str) -> FuzzRequest:
    """The create of corpus case ``index`` (named ``inv-<index>`` unless the case is about
    the name), and the same object through the other ways to create it — as YAML, as a
    dry run, by server-side apply: each must be refused the same way."""
    case = CORPUS[index]
    collection = "/" + BASES[case.resource].path.format(ns=namespace)
    body = case.body(f"inv-{index}")
    data = json.dumps(body).encode()
    item = f"{collection}/{_quote(str(body['metadata']['name']))}"
    return FuzzRequest("POST", collection, {"Content-Type": "application/json"}, data,
                       invalid=case, also=[
                           FuzzRequest("POST", collection, {"Content-Type": "application/yaml"},
                                       data, invalid=case),
                           FuzzRequest("POST", collection + "?dryRun=All",
                                       {"Content-Type": "application/json"}, data,
                                       invalid=case),
                           FuzzRequest("PATCH", item + "?fieldManager=fuzz&force=true",
                                       {"Content-Type": "application/apply-patch+yaml"}, data,
                                       invalid=case)])


def invalid_requests(namespace: str) -> list[FuzzRequest]:
    """Every case of the corpus, once."""
    return [invalid_request(i, namespace) for i in range(len(CORPUS))]


class Connection:
    """A keep-alive HTTPS (or HTTP) connection to kubegc with its bearer token."""

    def __init__(self, url: str, token: str | None, ca_file: str | None, *,
                 read_watches: bool = True) -> None:
        """``read_watches``: read a watch's stream to its end; False: its status and
        headers only, then drop the connection (the stream is not checked, and a bounded
        run need not wait out each watch's timeout)."""
        self.read_watches = read_watches
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 443
        self.tls = parts.scheme == "https"
        self.context = ssl.create_default_context(cafile=ca_file) if self.tls else None
        self.token = token
        self._conn: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._conn is None:
            if self.tls:
                self._conn = http.client.HTTPSConnection(self.host, self.port, timeout=30,
                                                         context=self.context)
            else:
                self._conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        return self._conn

    def send(self, request: FuzzRequest) -> tuple[int, bytes, str]:
        headers = dict(request.headers)
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in range(2):
            conn = self._connect()
            try:
                conn.request(request.method, request.path, body=request.body or None,
                             headers=headers)
                response = conn.getresponse()
                content_type = response.getheader("Content-Type") or ""
                if (not self.read_watches and response.status == 200
                        and "watch=1" in request.path):
                    self.close()
                    return response.status, b"", content_type
                return response.status, response.read(), content_type
            except (http.client.HTTPException, ConnectionError, OSError):
                conn.close()
                self._conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


#: a 5xx kube-apiserver answers to a client's input: a resourceVersion from the future,
#: after the watch cache waited for it (``storage.NewTooLargeResourceVersionError``)
UPSTREAM_5XX = b'"reason":"ResourceVersionTooLarge"'


def upstreams_5xx(status: int, body: bytes) -> bool:
    """Whether a 5xx is one kube-apiserver answers to the same request: the 504 above, or
    a 500 without a reason (``StatusReasonUnknown``): a plain Go error of the patch
    machinery that reached the handler (``interpretStrategicMergePatchError`` passes most
    through), which kubegc builds only where upstream gives one
    (``registry.fieldmanager._errors.unknown_error``)."""
    if status == 504:
        return UPSTREAM_5XX in body
    if status != 500:
        return False
    try:
        answer = json.loads(body)
    except ValueError:
        return False
    return isinstance(answer, dict) and answer.get("kind") == "Status" and not answer.get(
        "reason")


def check_answer(request: FuzzRequest, status: int, body: bytes, content_type: str) -> None:
    """What every answer must be: no 5xx kube-apiserver would not answer, every error
    answered with a ``Status`` of its code, and a corpus case refused with its code."""
    if request.invalid is not None and status != request.invalid.code and (
            status < 400 or not upstreams_5xx(status, body)):
        # refused with its code; server-side apply refuses some before validation, with the
        # 500 upstream gives (duplicate keys of a list map: "failed to create typed patch
        # object")
        raise AssertionError(f"invalid object answered {status}, not {request.invalid.code} "
                             f"({request.invalid.id}, {request.invalid.upstream}): "
                             f"{body[:300]!r}")
    if status >= 500 and not upstreams_5xx(status, body):
        raise AssertionError(f"{status} for {request}: {body[:500]!r}")
    if status < 400:
        return
    try:
        answer = json.loads(body)
    except ValueError:
        raise AssertionError(f"{status} without a Status for {request}: {body[:300]!r}") from None
    if not (isinstance(answer, dict) and answer.get("kind") == "Status"
            and answer.get("code") == status and "application/json" in content_type):
        raise AssertionError(f"{status} with a body that is not its Status for {request}: "
                             f"{body[:300]!r}")
