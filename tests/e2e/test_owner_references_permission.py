"""OwnerReferencesPermissionEnforcement end to end: ``kubegc serve
--enable-admission-plugins OwnerReferencesPermissionEnforcement`` with users from
``--token-auth-file`` bound to RBAC Roles; the real kubectl and the official Python client
see upstream's 403s (plugin/pkg/admission/gc) for blockOwnerDeletion on a built-in owner
(a Deployment: ``deployments/finalizers``) and on a custom one (``sites/finalizers``), and
for an ownerReferences change without ``delete``; a create may set references freely; the
plugin is off by default; ``--disable-admission-plugins DefaultTolerationSeconds`` stops
that plugin."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import Server, eventually, start_server, stop_server

PLUGIN = "OwnerReferencesPermissionEnforcement"
FINALIZERS_DENIED = ("cannot set blockOwnerDeletion if an ownerReference refers to a resource "
                     "you can't set finalizers on: , <nil>")
DELETE_DENIED = "cannot set an ownerRef on a resource you can't delete: , <nil>"
USERS = {"alice": "alice-token", "bob": "bob-token"}

SITES_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "sites.example.com"},
    "spec": {"group": "example.com", "scope": "Namespaced",
             "names": {"plural": "sites", "singular": "site", "kind": "Site"},
             "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                 "openAPIV3Schema": {"type": "object",
                                     "x-kubernetes-preserve-unknown-fields": True}}}]}}


def _token_file(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tokens.csv"
    path.write_text("".join(f"{token},{user},uid-{user}\n" for user, token in USERS.items()))
    return path


@pytest.fixture(scope="module")
def enforcing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("enforcing")
    s = start_server(data, "--token-auth-file", str(_token_file(data / "auth")),
                     "--enable-admission-plugins", PLUGIN)
    s.kubectl("apply", "-f", "-", input=json.dumps(SITES_CRD))
    s.kubectl("wait", "--for=condition=Established", "crd/sites.example.com")
    yield s
    stop_server(s)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("plain")
    s = start_server(data, "--token-auth-file", str(_token_file(data / "auth")),
                     "--disable-admission-plugins", "DefaultTolerationSeconds")
    yield s
    stop_server(s)


def as_user(server: Server, user: str, *args: str, check: bool = False,
            input: str | None = None) -> Any:
    return server.kubectl("--token", USERS[user], *args, check=check, input=input)


def namespace(server: Server) -> str:
    name = f"t-{uuid.uuid4().hex[:8]}"
    server.kubectl("create", "namespace", name)
    return name


def grant(server: Server, ns: str, user: str, *rules: dict[str, Any]) -> None:
    """A Role ``<user>`` with ``rules`` bound to ``user`` in ``ns`` (replaced if there)."""
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": user, "namespace": ns}, "rules": list(rules)}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": user, "namespace": ns},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                           "name": user},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User",
                             "name": user}]}
    server.kubectl("apply", "-f", "-", input=json.dumps({"apiVersion": "v1", "kind": "List",
                                                         "items": [role, binding]}))


def rule(group: str, resources: str, verbs: str) -> dict[str, Any]:
    return {"apiGroups": [group], "resources": resources.split(), "verbs": verbs.split()}


CONFIGMAPS = rule("", "configmaps", "get list create update patch")


def owner(server: Server, ns: str, kind: str, name: str) -> dict[str, Any]:
    got = json.loads(server.kubectl("get", kind, name, "-n", ns, "-o", "json").stdout)
    return {"apiVersion": got["apiVersion"], "kind": got["kind"], "name": name,
            "uid": got["metadata"]["uid"]}


def configmap(name: str, *refs: dict[str, Any]) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "ownerReferences": list(refs)}})


def deployment(server: Server, ns: str) -> dict[str, Any]:
    server.kubectl("create", "deployment", "web", "--image=nginx", "--replicas=0", "-n", ns)
    return owner(server, ns, "deployment", "web")


def test_blocking_a_deployment_needs_its_finalizers(enforcing: Server) -> None:
    ns = namespace(enforcing)
    web = deployment(enforcing, ns)
    grant(enforcing, ns, "alice", CONFIGMAPS)
    proc = as_user(enforcing, "alice", "create", "-n", ns, "-f", "-",
                   input=configmap("c", {**web, "blockOwnerDeletion": True}))
    assert proc.returncode == 1
    assert proc.stderr.strip() == ('Error from server (Forbidden): error when creating '
                                   f'"STDIN": configmaps "c" is forbidden: {FINALIZERS_DENIED}')
    grant(enforcing, ns, "alice", CONFIGMAPS, rule("apps", "deployments/finalizers", "update"))
    proc = as_user(enforcing, "alice", "create", "-n", ns, "-f", "-", check=True,
                   input=configmap("c", {**web, "blockOwnerDeletion": True}))
    assert proc.stdout.strip() == "configmap/c created"


def test_a_create_may_set_references_that_do_not_block(enforcing: Server) -> None:
    ns = namespace(enforcing)
    web = deployment(enforcing, ns)
    grant(enforcing, ns, "alice", CONFIGMAPS)
    as_user(enforcing, "alice", "create", "-n", ns, "-f", "-", check=True,
            input=configmap("c", {**web, "controller": True, "blockOwnerDeletion": False}))


def test_changing_references_needs_delete(enforcing: Server) -> None:
    ns = namespace(enforcing)
    web = deployment(enforcing, ns)
    grant(enforcing, ns, "alice", CONFIGMAPS)
    as_user(enforcing, "alice", "create", "-n", ns, "-f", "-", check=True,
            input=configmap("c", web))
    as_user(enforcing, "alice", "label", "configmap", "c", "a=b", "-n", ns, check=True)
    for patch in ('{"metadata":{"ownerReferences":null}}',
                  json.dumps({"metadata": {"ownerReferences": [{**web, "controller": True}]}})):
        proc = as_user(enforcing, "alice", "patch", "configmap", "c", "-n", ns, "--type=merge",
                       "-p", patch)
        assert proc.returncode == 1
        assert proc.stderr.strip() == (
            f'Error from server (Forbidden): configmaps "c" is forbidden: {DELETE_DENIED}')
    grant(enforcing, ns, "alice", rule("", "configmaps", "get list create update patch delete"))
    as_user(enforcing, "alice", "patch", "configmap", "c", "-n", ns, "--type=merge",
            "-p", '{"metadata":{"ownerReferences":null}}', check=True)


def _client(server: Server, user: str) -> Any:
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = server.url
    configuration.ssl_ca_cert = str(server.ca_file)
    configuration.api_key = {"authorization": f"Bearer {USERS[user]}"}
    return client.ApiClient(configuration)


def test_blocking_a_custom_resource_needs_its_finalizers(enforcing: Server) -> None:
    from kubernetes import client

    ns = namespace(enforcing)
    enforcing.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(
        {"apiVersion": "example.com/v1", "kind": "Site", "metadata": {"name": "blog"}}))
    site = owner(enforcing, ns, "site", "blog")
    grant(enforcing, ns, "bob", CONFIGMAPS)
    body = json.loads(configmap("blog-config", {**site, "controller": True,
                                                "blockOwnerDeletion": True}))
    with _client(enforcing, "bob") as api:
        core = client.CoreV1Api(api)
        with pytest.raises(client.ApiException) as e:
            core.create_namespaced_config_map(ns, body)
        assert e.value.status == 403
        status = json.loads(e.value.body)
        assert (status["reason"], status["details"]) == (
            "Forbidden", {"name": "blog-config", "kind": "configmaps"})
        assert status["message"] == f'configmaps "blog-config" is forbidden: {FINALIZERS_DENIED}'
        grant(enforcing, ns, "bob", CONFIGMAPS,
              rule("example.com", "sites/finalizers", "update"))
        created = core.create_namespaced_config_map(ns, body)
        assert created.metadata.owner_references[0].block_owner_deletion is True


def test_an_unknown_owner_kind_has_no_rest_mapping(enforcing: Server) -> None:
    ns = namespace(enforcing)
    grant(enforcing, ns, "alice", CONFIGMAPS)
    ghost = {"apiVersion": "example.com/v2", "kind": "Site", "name": "x", "uid": "u-x",
             "blockOwnerDeletion": True}
    proc = as_user(enforcing, "alice", "create", "-n", ns, "-f", "-", input=configmap("c", ghost))
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        'Error from server (Forbidden): error when creating "STDIN": configmaps "c" is '
        "forbidden: cannot set blockOwnerDeletion in this case because cannot find RESTMapping "
        'for APIVersion example.com/v2 Kind Site: no matches for kind "Site" in version '
        '"example.com/v2"')


def test_workloads_and_cascades_work_with_the_plugin_on(enforcing: Server) -> None:
    """The controllers set blockOwnerDeletion on what they create (ReplicaSets, Pods) and
    the garbage collector removes references while orphaning, each under its identity and
    bootstrap role."""
    ns = namespace(enforcing)
    enforcing.kubectl("create", "deployment", "app", "--image=nginx", "--replicas=2", "-n", ns)
    eventually(lambda: len(json.loads(enforcing.kubectl(
        "get", "pods", "-n", ns, "-o", "json").stdout)["items"]) == 2, what="2 pods")
    enforcing.kubectl("delete", "deployment", "app", "-n", ns, "--cascade=orphan")
    eventually(lambda: all(not rs["metadata"].get("ownerReferences") for rs in json.loads(
        enforcing.kubectl("get", "rs", "-n", ns, "-o", "json").stdout)["items"]),
        what="orphaned ReplicaSet")
    enforcing.kubectl("delete", "rs", "--all", "-n", ns, "--cascade=foreground", "--wait=true",
                      "--timeout=60s")
    eventually(lambda: not json.loads(enforcing.kubectl(
        "get", "pods", "-n", ns, "-o", "json").stdout)["items"], what="pods gone")


def test_off_by_default(plain: Server) -> None:
    ns = namespace(plain)
    web = deployment(plain, ns)
    grant(plain, ns, "alice", CONFIGMAPS)
    as_user(plain, "alice", "create", "-n", ns, "-f", "-", check=True,
            input=configmap("c", {**web, "blockOwnerDeletion": True}))
    as_user(plain, "alice", "patch", "configmap", "c", "-n", ns, "--type=merge",
            "-p", '{"metadata":{"ownerReferences":null}}', check=True)
    status, body = plain.http("GET", "/debug/kubegc/access")
    assert status == 200
    access = json.loads(body)
    assert access["authorizationModes"] == ["RBAC"]
    assert "NamespaceLifecycle" in access["admissionPlugins"]
    assert "OwnerReferencesPermissionEnforcement" not in access["admissionPlugins"]


def test_default_toleration_seconds_can_be_disabled(plain: Server) -> None:
    ns = namespace(plain)
    plain.kubectl("run", "p", "--image=nginx", "-n", ns)
    pod = json.loads(plain.kubectl("get", "pod", "p", "-n", ns, "-o", "json").stdout)
    assert "tolerations" not in pod["spec"]


# -- kubegc doctor KIND/NAME --as USER -----------------------------------------------------

def doctor(server: Server, *args: str, kubeconfig: Path | None = None) -> Any:
    proc = subprocess.run(
        [sys.executable, "-m", "kubegc.cli", "doctor", "--kubeconfig",
         str(kubeconfig or server.kubeconfig), *args], capture_output=True, text=True,
        timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if "json" in args else proc.stdout


def user_kubeconfig(server: Server, user: str, directory: Path) -> Path:
    doc = yaml.safe_load(server.kubeconfig.read_text())
    for entry in doc["users"]:
        entry["user"] = {"token": USERS[user]}
    path = directory / f"{user}.kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_doctor_explains_what_is_missing(enforcing: Server) -> None:
    """The doctor asks the cluster (SubjectAccessReviews) the records the plugin would ask,
    and says what the API server would answer and which rule grants it — and, once the rule
    is in, that the same write goes through."""
    ns = namespace(enforcing)
    web = deployment(enforcing, ns)
    enforcing.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(
        {"apiVersion": "example.com/v1", "kind": "Site", "metadata": {"name": "blog"}}))
    site = owner(enforcing, ns, "site", "blog")
    enforcing.kubectl("create", "-n", ns, "-f", "-", input=configmap(
        "c", {**web, "blockOwnerDeletion": True}, {**site, "controller": True}))
    grant(enforcing, ns, "alice", CONFIGMAPS, rule("apps", "deployments/finalizers", "update"))
    report = doctor(enforcing, "configmap/c", "-n", ns, "--as", "alice", "-o", "json")
    assert report["user"] == {"name": "alice", "groups": ["system:authenticated"]}
    assert (report["access"]["ownerReferencesPermissionEnforcement"],
            report["access"]["authorization"], report["enforced"]) == ("on", "on", True)
    change = report["changeOwnerReferences"]
    assert change["allowed"] is False
    assert change["forbiddenMessage"] == f'configmaps "c" is forbidden: {DELETE_DENIED}'
    assert change["rule"]["yaml"] == ('- apiGroups: [""]\n  resources: [configmaps]\n'
                                      "  verbs: [delete]")
    deploy_ref, site_ref = report["ownerReferences"]
    assert deploy_ref["setBlockOwnerDeletion"]["allowed"] is True
    blocking = site_ref["setBlockOwnerDeletion"]
    assert (blocking["allowed"], blocking["missing"]["resource"],
            blocking["missing"]["subresource"], blocking["missing"]["group"],
            blocking["missing"]["name"]) == (False, "sites", "finalizers", "example.com", "blog")
    assert blocking["forbiddenMessage"] == f'configmaps "c" is forbidden: {FINALIZERS_DENIED}'
    assert blocking["rule"]["yaml"] == ("- apiGroups: [example.com]\n  resources: "
                                        "[sites/finalizers]\n  verbs: [update]")
    # what the doctor says is what the API server does
    proc = as_user(enforcing, "alice", "create", "-n", ns, "-f", "-", input=configmap(
        "d", {**site, "blockOwnerDeletion": True}))
    assert blocking["forbiddenMessage"].replace('"c"', '"d"') in proc.stderr
    text = doctor(enforcing, "configmap/c", "-n", ns, "--as", "alice")
    assert ("✖ ownerReferences[1] Site/blog (example.com/v1; blockOwnerDeletion unset): "
            "setting\n    blockOwnerDeletion: true is refused") in text
    assert ("              - apiGroups: [example.com]\n                resources: "
            "[sites/finalizers]\n                verbs: [update]\n") in text
    grant(enforcing, ns, "alice", CONFIGMAPS, rule("apps", "deployments/finalizers", "update"),
          rule("example.com", "sites/finalizers", "update"))
    report = doctor(enforcing, "configmap/c", "-n", ns, "--as", "alice", "-o", "json")
    assert report["ownerReferences"][1]["setBlockOwnerDeletion"]["allowed"] is True
    as_user(enforcing, "alice", "create", "-n", ns, "-f", "-", check=True, input=configmap(
        "d", {**site, "blockOwnerDeletion": True}))


def test_the_doctor_as_a_service_account(enforcing: Server) -> None:
    ns = namespace(enforcing)
    web = deployment(enforcing, ns)
    enforcing.kubectl("create", "-n", ns, "-f", "-", input=configmap("c", web))
    enforcing.kubectl("create", "serviceaccount", "op", "-n", ns)
    enforcing.kubectl("create", "role", "op", "-n", ns, "--resource=configmaps",
                      "--verb=get,create,update,patch,delete")
    enforcing.kubectl("create", "rolebinding", "op", "-n", ns, "--role=op",
                      f"--serviceaccount={ns}:op")
    report = doctor(enforcing, "configmap/c", "-n", ns, "--as",
                    f"system:serviceaccount:{ns}:op", "-o", "json")
    assert report["user"]["groups"] == ["system:serviceaccounts",
                                        f"system:serviceaccounts:{ns}", "system:authenticated"]
    assert report["changeOwnerReferences"]["allowed"] is True  # it may delete configmaps
    # but not update the finalizers of Deployments
    assert report["ownerReferences"][0]["setBlockOwnerDeletion"]["allowed"] is False


def test_the_doctor_is_not_confidently_wrong(enforcing: Server, plain: Server,
                                            tmp_path: Path) -> None:
    """Where the plugin is off, or the user cannot read the cluster's configuration, the
    doctor says so instead of a verdict."""
    ns = namespace(plain)
    web = deployment(plain, ns)
    plain.kubectl("create", "-n", ns, "-f", "-", input=configmap("c", web))
    grant(plain, ns, "alice", CONFIGMAPS)
    report = doctor(plain, "configmap/c", "-n", ns, "--as", "alice", "-o", "json")
    assert (report["access"]["ownerReferencesPermissionEnforcement"], report["enforced"]) == (
        "off", False)
    text = doctor(plain, "configmap/c", "-n", ns, "--as", "alice")
    assert "OwnerReferencesPermissionEnforcement  off: nothing below is checked" in text
    assert ("is not checked (OwnerReferencesPermissionEnforcement is off); refused if it were "
            "on") in text
    # alice asks about herself: she may not read the configuration
    ns = namespace(enforcing)
    web = deployment(enforcing, ns)
    enforcing.kubectl("create", "-n", ns, "-f", "-", input=configmap("c", web))
    grant(enforcing, ns, "alice", CONFIGMAPS)
    mine = doctor(enforcing, "configmap/c", "-n", ns, "-o", "json",
                  kubeconfig=user_kubeconfig(enforcing, "alice", tmp_path))
    assert mine["user"] is None
    assert (mine["access"]["ownerReferencesPermissionEnforcement"], mine["enforced"]) == (
        "unknown", None)
    assert mine["changeOwnerReferences"]["allowed"] is False
    assert "unknown" in doctor(enforcing, "configmap/c", "-n", ns, kubeconfig=user_kubeconfig(
        enforcing, "alice", tmp_path))


def test_the_doctor_on_a_cluster_that_allows_everything(tmp_path: Path) -> None:
    s = start_server(tmp_path / "allow", "--authorization-mode", "AlwaysAllow",
                     "--enable-admission-plugins", PLUGIN)
    try:
        ns = namespace(s)
        web = deployment(s, ns)
        s.kubectl("create", "-n", ns, "-f", "-", input=configmap("c", web))
        report = doctor(s, "configmap/c", "-n", ns, "--as", "nobody", "-o", "json")
        assert (report["access"]["authorization"], report["enforced"]) == ("off", False)
        text = doctor(s, "configmap/c", "-n", ns, "--as", "nobody")
        assert "allowed: this cluster allows every request; under RBAC it needs" in text
        assert "resources: [deployments/finalizers]" in text
    finally:
        stop_server(s)
