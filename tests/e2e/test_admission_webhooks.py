"""Admission webhooks against ``kubegc serve``, as kube-apiserver calls them: a small HTTPS
webhook server on loopback (``webhook_server.py``), configurations applied with the real
kubectl, what kubectl then says (refusals, ``failed calling webhook``, warnings) and what
the webhook was sent (AdmissionReview v1: object, oldObject, options, dryRun)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.conftest import Server, eventually, free_port
from tests.e2e.webhook_server import WebhookServer, allow, deny, patch


@pytest.fixture(scope="module")
def hooks() -> Iterator[WebhookServer]:
    s = WebhookServer().start()
    yield s
    s.stop()


def _rule(operations: list[str], resources: list[str], group: str = "",
          version: str = "v1") -> dict[str, Any]:
    return {"operations": operations, "apiGroups": [group], "apiVersions": [version],
            "resources": resources}


class Configs:
    """Webhook configurations a test installs, removed when it ends."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.installed: list[tuple[str, str]] = []

    def install(self, kind: str, webhooks: list[dict[str, Any]]) -> str:
        name = f"test-{uuid.uuid4().hex[:8]}"
        for hook in webhooks:
            hook.setdefault("sideEffects", "None")
            hook.setdefault("admissionReviewVersions", ["v1"])
        doc = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
               "metadata": {"name": name}, "webhooks": webhooks}
        self.server.kubectl("apply", "-f", "-", input=json.dumps(doc))
        self.installed.append((kind.lower() + "s", name))
        self.server.settle()  # every server's watch cache has told admission
        return name

    def remove_all(self) -> None:
        for resource, name in self.installed:
            self.server.kubectl("delete", resource, name, "--ignore-not-found")
        self.server.settle()


@pytest.fixture
def configs(server: Server) -> Iterator[Configs]:
    c = Configs(server)
    yield c
    c.remove_all()


def _in(ns: str) -> dict[str, Any]:
    return {"matchLabels": {"kubernetes.io/metadata.name": ns}}


def _validating(hooks: WebhookServer, name: str, path: str, ns: str,
                rules: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": name, "clientConfig": hooks.client_config(path), "rules": rules,
            "namespaceSelector": _in(ns), **extra}


def test_validating_webhook_denies_create_with_its_message(
        server: Server, ns: str, hooks: WebhookServer, configs: Configs) -> None:
    hooks.handlers["/deny"] = deny("configmaps are not welcome here")
    configs.install("ValidatingWebhookConfiguration", [_validating(
        hooks, "deny.kubegc.test", "/deny", ns, [_rule(["CREATE"], ["configmaps"])])])
    out = server.kubectl("create", "configmap", "c1", "-n", ns, check=False)
    assert out.returncode != 0
    assert ('admission webhook "deny.kubegc.test" denied the request: configmaps are not '
            "welcome here") in out.stderr
    review = hooks.reviews["/deny"][-1]
    assert review["apiVersion"] == "admission.k8s.io/v1"
    request = review["request"]
    assert request["operation"] == "CREATE" and request["namespace"] == ns
    assert request["kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert request["object"]["metadata"]["name"] == "c1"
    assert request["options"]["kind"] == "CreateOptions"
    assert request["userInfo"]["username"]
    # a secret is not in the rules: created
    server.kubectl("create", "secret", "generic", "s1", "-n", ns)


def test_allowed_with_warnings_shown_by_kubectl(
        server: Server, ns: str, hooks: WebhookServer, configs: Configs) -> None:
    hooks.handlers["/warn"] = lambda r: {"allowed": True,
                                         "warnings": ["this configmap is deprecated"]}
    configs.install("ValidatingWebhookConfiguration", [_validating(
        hooks, "warn.kubegc.test", "/warn", ns, [_rule(["CREATE", "UPDATE"], ["configmaps"])])])
    out = server.kubectl("create", "configmap", "c1", "-n", ns)
    assert "Warning: this configmap is deprecated" in out.stderr
    out = server.kubectl("label", "configmap", "c1", "-n", ns, "a=b")
    assert "Warning: this configmap is deprecated" in out.stderr
    assert hooks.reviews["/warn"][-1]["request"]["operation"] == "UPDATE"
    assert hooks.reviews["/warn"][-1]["request"]["oldObject"]["metadata"]["name"] == "c1"


def test_validating_webhook_on_delete_gets_old_object_and_options(
        server: Server, ns: str, hooks: WebhookServer, configs: Configs) -> None:
    server.kubectl("create", "configmap", "keep", "-n", ns)
    hooks.handlers["/nodelete"] = deny("keep it")
    configs.install("ValidatingWebhookConfiguration", [_validating(
        hooks, "nodelete.kubegc.test", "/nodelete", ns, [_rule(["DELETE"], ["configmaps"])])])
    out = server.kubectl("delete", "configmap", "keep", "-n", ns, "--cascade=foreground",
                         check=False)
    assert 'admission webhook "nodelete.kubegc.test" denied the request: keep it' in out.stderr
    server.kubectl("get", "configmap", "keep", "-n", ns)
    request = hooks.reviews["/nodelete"][-1]["request"]
    assert request["operation"] == "DELETE" and request["name"] == "keep"
    assert request["object"] is None
    assert request["oldObject"]["metadata"]["name"] == "keep"
    assert request["options"]["kind"] == "DeleteOptions"
    assert request["options"]["propagationPolicy"] == "Foreground"
    hooks.handlers["/nodelete"] = allow
    server.kubectl("delete", "configmap", "keep", "-n", ns)


def test_mutating_webhook_patches_create(
        server: Server, ns: str, hooks: WebhookServer, configs: Configs) -> None:
    hooks.handlers["/label"] = patch([
        {"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}])
    configs.install("MutatingWebhookConfiguration", [{
        "name": "label.kubegc.test", "clientConfig": hooks.client_config("/label"),
        "rules": [_rule(["CREATE"], ["configmaps"])], "namespaceSelector": _in(ns)}])
    server.kubectl("create", "configmap", "m1", "-n", ns)
    labels = json.loads(server.kubectl("get", "configmap", "m1", "-n", ns, "-o",
                                       "json").stdout)["metadata"].get("labels")
    assert labels == {"mutated": "yes"}


def test_mutating_webhook_patches_an_update_by_kubectl_patch(
        server: Server, ns: str, hooks: WebhookServer, configs: Configs) -> None:
    server.kubectl("create", "configmap", "u1", "-n", ns)
    hooks.handlers["/touch"] = patch([
        {"op": "add", "path": "/data", "value": {"touched": "by-webhook"}}])
    configs.install("MutatingWebhookConfiguration", [{
        "name": "touch.kubegc.test", "clientConfig": hooks.client_config("/touch"),
        "rules": [_rule(["UPDATE"], ["configmaps"])], "namespaceSelector": _in(ns)}])
    server.kubectl("patch", "configmap", "u1", "-n", ns, "--type=merge", "-p",
                   '{"metadata":{"labels":{"a":"b"}}}')
    got = json.loads(server.kubectl("get", "configmap", "u1", "-n", ns, "-o", "json").stdout)
    assert got["metadata"]["labels"] == {"a": "b"}
    assert got["data"] == {"touched": "by-webhook"}
    request = hooks.reviews["/touch"][-1]["request"]
    assert request["operation"] == "UPDATE"
    assert request["object"]["metadata"]["labels"] == {"a": "b"}
    assert "labels" not in request["oldObject"]["metadata"]


def test_unreachable_webhook_fails_closed_or_open(
        server: Server, ns: str, hooks: WebhookServer, configs: Configs) -> None:
    port = free_port()  # nothing listens there
    dead = {"url": f"https://127.0.0.1:{port}/x", "caBundle": hooks.ca_bundle}
    name = configs.install("ValidatingWebhookConfiguration", [{
        "name": "dead.kubegc.test", "clientConfig": dead, "namespaceSelector": _in(ns),
        "rules": [_rule(["CREATE"], ["configmaps"])], "failurePolicy": "Fail"}])
    out = server.kubectl("create", "configmap", "c1", "-n", ns, check=False)
    assert out.returncode != 0
    assert ('Internal error occurred: failed calling webhook "dead.kubegc.test": failed to '
            f'call webhook: Post "https://127.0.0.1:{port}/x?timeout=10s": dial tcp '
            f"127.0.0.1:{port}: connect: connection refused") in out.stderr
    server.kubectl("patch", "validatingwebhookconfiguration", name, "--type=json", "-p",
                   '[{"op":"replace","path":"/webhooks/0/failurePolicy","value":"Ignore"}]')
    server.settle()
    server.kubectl("create", "configmap", "c1", "-n", ns)


def test_timeout(server: Server, ns: str, hooks: WebhookServer, configs: Configs) -> None:
    hooks.handlers["/slow"] = allow
    hooks.delay["/slow"] = 3
    configs.install("ValidatingWebhookConfiguration", [_validating(
        hooks, "slow.kubegc.test", "/slow", ns, [_rule(["CREATE"], ["configmaps"])],
        timeoutSeconds=1)])
    out = server.kubectl("create", "configmap", "c1", "-n", ns, check=False)
    assert ('failed calling webhook "slow.kubegc.test": failed to call webhook: Post '
            f'"{hooks.url("/slow")}?timeout=1s": context deadline exceeded') in out.stderr


def test_object_selector(server: Server, ns: str, hooks: WebhookServer,
                         configs: Configs) -> None:
    hooks.handlers["/sel"] = deny("guarded")
    configs.install("ValidatingWebhookConfiguration", [_validating(
        hooks, "sel.kubegc.test", "/sel", ns, [_rule(["CREATE"], ["configmaps"])],
        objectSelector={"matchLabels": {"guard": "on"}})])
    server.kubectl("create", "configmap", "free", "-n", ns)
    out = server.kubectl("apply", "-n", ns, "-f", "-", check=False, input=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "guarded", "labels": {"guard": "on"}}}))
    assert 'admission webhook "sel.kubegc.test" denied the request: guarded' in out.stderr
    # another namespace is outside the namespaceSelector
    other = f"{ns}-o"
    server.kubectl("create", "namespace", other)
    try:
        server.kubectl("apply", "-n", other, "-f", "-", input=json.dumps({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "guarded", "labels": {"guard": "on"}}}))
    finally:
        server.kubectl("delete", "namespace", other, "--wait=false")


def test_dry_run_and_side_effects(server: Server, ns: str, hooks: WebhookServer,
                                  configs: Configs) -> None:
    hooks.handlers["/fx"] = allow
    hooks.handlers["/nofx"] = allow
    configs.install("ValidatingWebhookConfiguration", [
        _validating(hooks, "nofx.kubegc.test", "/nofx", ns, [_rule(["CREATE"], ["secrets"])],
                    sideEffects="None"),
        _validating(hooks, "fx.kubegc.test", "/fx", ns, [_rule(["CREATE"], ["configmaps"])],
                    sideEffects="NoneOnDryRun"),
    ])
    server.kubectl("create", "secret", "generic", "s1", "-n", ns, "--dry-run=server")
    assert hooks.reviews["/nofx"][-1]["request"]["dryRun"] is True
    server.kubectl("create", "configmap", "c1", "-n", ns, "--dry-run=server")
    assert hooks.reviews["/fx"][-1]["request"]["dryRun"] is True
    assert hooks.reviews["/fx"][-1]["request"]["options"]["dryRun"] == ["All"]
    out = server.kubectl("get", "configmap", "c1", "-n", ns, check=False)
    assert "NotFound" in out.stderr


def test_service_reference_through_endpoints(server: Server, ns: str,
                                             configs: Configs) -> None:
    """``clientConfig.service``: a Service without a selector and its Endpoints listing
    127.0.0.1, the certificate verified as ``<service>.<namespace>.svc``."""
    hooks = WebhookServer([f"hooksvc.{ns}.svc"]).start()
    try:
        hooks.handlers["/svc"] = deny("by service")
        configs.install("ValidatingWebhookConfiguration", [{
            "name": "svc.kubegc.test", "namespaceSelector": _in(ns),
            "rules": [_rule(["CREATE"], ["configmaps"])],
            "clientConfig": {"caBundle": hooks.ca_bundle, "service": {
                "namespace": ns, "name": "hooksvc", "path": "/svc", "port": 8443}}}])
        out = server.kubectl("create", "configmap", "c1", "-n", ns, check=False)
        assert ('failed calling webhook "svc.kubegc.test": failed to call webhook: Post '
                f'"https://hooksvc.{ns}.svc:8443/svc?timeout=10s": services "hooksvc" not '
                "found") in out.stderr
        server.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps({"items": [
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "hooksvc"},
             "spec": {"ports": [{"port": 8443, "targetPort": hooks.port}]}},
            {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "hooksvc"},
             "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                          "ports": [{"port": hooks.port}]}]},
        ], "apiVersion": "v1", "kind": "List"}))
        out = server.kubectl("create", "configmap", "c1", "-n", ns, check=False)
        assert 'admission webhook "svc.kubegc.test" denied the request: by service' in (
            out.stderr)
    finally:
        hooks.stop()



def _doctor(server: Server, ns: str) -> dict[str, Any]:
    report = server.kubegc_json("doctor")
    return next(f for f in report["findings"]
                if f["object"]["kind"] == "Namespace" and f["object"]["name"] == ns)


def _condition(server: Server, ns: str) -> dict[str, Any] | None:
    got = json.loads(server.kubectl("get", "namespace", ns, "-o", "json").stdout)
    return next((c for c in (got.get("status") or {}).get("conditions") or []
                 if c["type"] == "NamespaceDeletionContentFailure" and c["status"] == "True"),
                None)


def test_webhook_refusing_deletes_holds_the_namespace(
        server: Server, hooks: WebhookServer, configs: Configs) -> None:
    ns = f"held-{uuid.uuid4().hex[:6]}"
    server.kubectl("create", "namespace", ns)
    server.kubectl("create", "configmap", "precious", "-n", ns)
    hooks.handlers["/guard"] = deny("precious things stay")
    name = configs.install("ValidatingWebhookConfiguration", [_validating(
        hooks, "guard.kubegc.test", "/guard", ns, [_rule(["DELETE"], ["configmaps"])])])
    # a plan never calls the webhook: it says which webhooks take its DELETEs
    planned = server.kubegc_json("plan", "delete", f"namespace/{ns}")
    assert any(f'ValidatingWebhookConfiguration/{name} (webhook "guard.kubegc.test", '
               "failurePolicy Fail: DELETE of configmaps)" in note for note in planned["notes"])
    assert hooks.reviews.get("/guard", []) == []
    server.kubectl("delete", "namespace", ns, "--wait=false")
    condition = eventually(lambda: _condition(server, ns), what="content failure")
    assert condition["reason"] == "ContentDeletionFailed"
    assert ('admission webhook "guard.kubegc.test" denied the request: precious things stay'
            in condition["message"])
    phase = server.kubectl("get", "namespace", ns, "-o", "jsonpath={.status.phase}").stdout
    assert phase == "Terminating"
    finding = _doctor(server, ns)
    causes = [c for c in finding["causes"] if c["object"]
              and c["object"]["kind"] == "ValidatingWebhookConfiguration"]
    assert causes and causes[0]["object"]["name"] == name
    assert 'admission webhook "guard.kubegc.test" refuses the DELETEs' in causes[0]["cause"]
    assert any(f"kubectl delete validatingwebhookconfiguration {name}" in step
               for step in finding["fix"])
    # the webhook lets DELETEs through: the namespace goes
    hooks.handlers["/guard"] = allow
    eventually(lambda: server.kubectl("get", "namespace", ns, check=False).returncode != 0,
               timeout=60, what="namespace deleted")


def test_unreachable_delete_webhook_holds_the_namespace_until_removed(
        server: Server, configs: Configs) -> None:
    ns = f"held-{uuid.uuid4().hex[:6]}"
    server.kubectl("create", "namespace", ns)
    server.kubectl("create", "configmap", "c", "-n", ns)
    port = free_port()
    name = configs.install("ValidatingWebhookConfiguration", [{
        "name": "gone.kubegc.test", "namespaceSelector": _in(ns),
        "clientConfig": {"url": f"https://127.0.0.1:{port}/gone"},
        "rules": [_rule(["DELETE"], ["configmaps"])]}])
    server.kubectl("delete", "namespace", ns, "--wait=false")
    condition = eventually(lambda: _condition(server, ns), what="content failure")
    assert 'failed calling webhook "gone.kubegc.test"' in condition["message"]
    finding = _doctor(server, ns)
    assert finding["severity"] in ("info", "error")
    assert any(f"https://127.0.0.1:{port}/gone" in step for step in finding["fix"])
    server.kubectl("delete", "validatingwebhookconfiguration", name)
    eventually(lambda: server.kubectl("get", "namespace", ns, check=False).returncode != 0,
               timeout=60, what="namespace deleted")


def test_a_refused_delete_of_the_garbage_collector_is_named_by_settle(
        server: Server, ns: str, hooks: WebhookServer, configs: Configs) -> None:
    """The webhook refuses the GC's DELETE of a dependent (not the user's of its owner):
    the GC retries it for ever, as upstream; the plan (which calls no webhook) ends and
    names the webhook; ``/debug/kubegc/settle`` answers 504 with the item and the refusal,
    at once with ``stuckAfter``; allowed again, the next retry deletes it."""
    hooks.handlers["/keep"] = deny("precious things stay")
    name = configs.install("ValidatingWebhookConfiguration", [_validating(
        hooks, "keep.kubegc.test", "/keep", ns, [_rule(["DELETE"], ["configmaps"])],
        objectSelector={"matchLabels": {"keep": "yes"}})])
    server.kubectl("create", "configmap", "owner", "-n", ns)
    uid = server.kubectl("get", "configmap", "owner", "-n", ns,
                         "-o", "jsonpath={.metadata.uid}").stdout
    server.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {
            "name": "x", "labels": {"keep": "yes"}, "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": uid}]}}))
    server.settle()
    planned = server.kubegc_json("plan", "delete", "configmap/owner", "-n", ns)
    assert {o["name"] for o in planned["deleted"]} == {"owner", "x"}
    assert any(f'ValidatingWebhookConfiguration/{name} (webhook "keep.kubegc.test", '
               "failurePolicy Fail: DELETE of configmaps)" in note for note in planned["notes"])
    server.kubectl("delete", "configmap", "owner", "-n", ns)
    refusal = 'admission webhook "keep.kubegc.test" denied the request: precious things stay'
    item = re.compile(rf"  garbagecollector: \d+ items?(, \d+)? retrying: .*v1/ConfigMap {ns}/x"
                      rf"( \(failed \d+ times in a row\))?: {re.escape(refusal)}")
    status, body = server.http("GET", "/debug/kubegc/settle?timeout=60&stuckAfter=2",
                               timeout=70)
    assert status == 504
    assert body.decode().startswith("cluster is stuck: all it does is retry, each item after "
                                    "failing 2 times or more in a row with the same error:")
    assert any(item.match(line) for line in body.decode().splitlines()[1:])
    status, body = server.http("GET", "/debug/kubegc/settle?timeout=1", timeout=30)
    assert status == 504
    lines = body.decode().splitlines()
    assert lines[0] == "cluster did not settle within 1.0 s; still busy:"
    assert any(item.match(line) for line in lines[1:]), lines
    # the doctor cannot see the refusals (nothing upstream records them on the object); it
    # names the webhooks that may be asked about the DELETE the garbage collector is to send
    finding = next(f for f in server.kubegc_json("doctor", "-n", ns)["findings"]
                   if f["object"]["name"] == "x")
    assert any(f'ValidatingWebhookConfiguration/{name} (webhook "keep.kubegc.test"' in fact
               and "retries it for ever" in fact for fact in finding["facts"]), finding
    status, body = server.http("GET", "/debug/kubegc/settle?stuckAfter=0")
    assert (status, body) == (400, b"stuckAfter: not a positive integer: '0'")
    hooks.handlers["/keep"] = allow
    server.settle()
    assert server.kubectl("get", "configmap", "x", "-n", ns, check=False).returncode != 0
