"""Who a request is, as kubectl and the official client see it: users of a
``--token-auth-file`` and of client certificates (``kubegc kubeconfig --user``),
``kubectl auth whoami`` (SelfSubjectReview), impersonation (``--as``, ``--as-group``,
``--as-uid``) allowed and refused with upstream's 403, upstream's 401 for a bad token and,
with ``--anonymous-auth=false``, for none.

The users here have no RBAC grant but what the bootstrap policy gives every
authenticated user (``system:basic-user``, ``system:discovery``) unless a test grants one
(``impersonator``)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from .conftest import Server, start_server, stop_server

pytestmark = pytest.mark.kubectl

#: token → (user, uid, groups), as the --token-auth-file below lists them
ROOT_TOKEN = "root-token-0123456789"
JANE_TOKEN = "jane-token-0123456789"
TOKEN_FILE = (f'{ROOT_TOKEN},root,uid-root,"system:masters,ops"\n'
              f"{JANE_TOKEN},jane,uid-jane,dev\n")
LOGGED_OUT = "error: You must be logged in to the server (Unauthorized)"


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server with the users of ``TOKEN_FILE`` (anonymous requests allowed)."""
    root = tmp_path_factory.mktemp("users")
    token_file = root / "tokens.csv"
    token_file.write_text(TOKEN_FILE)
    server = start_server(root / "kubegc", "--token-auth-file", str(token_file))
    yield server
    stop_server(server)


def whoami(server: Server, *args: str) -> dict[str, Any]:
    """``kubectl auth whoami -o json``'s userInfo."""
    out = server.kubectl("auth", "whoami", "-o", "json", *args).stdout
    review = json.loads(out)
    assert review["kind"] == "SelfSubjectReview" and review["apiVersion"] == (
        "authentication.k8s.io/v1")
    info: dict[str, Any] = review["status"]["userInfo"]
    return info


def kubeconfig_for(server: Server, tmp_path: Path, user: str, *groups: str,
                   expiration: str | None = None) -> Path:
    """``kubegc kubeconfig --user USER --group G... -o FILE`` on the server's data dir."""
    path = tmp_path / f"{user.replace(':', '_')}.kubeconfig"
    args = [sys.executable, "-m", "kubegc.cli", "kubeconfig", "--user", user,
            "--data-dir", str(server.data_dir), "-o", str(path)]
    for group in groups:
        args += ["--group", group]
    if expiration:
        args += ["--expiration", expiration]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    return path


def kubectl_as(server: Server, kubeconfig: Path, *args: str,
               check: bool = False) -> subprocess.CompletedProcess[str]:
    """kubectl with another kubeconfig than the admin's."""
    cmd = ["kubectl", "--kubeconfig", str(kubeconfig), "--cache-dir", str(server.cache_dir),
           *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    if check:
        assert done.returncode == 0, done.stderr
    return done


# -- who am I -------------------------------------------------------------------------


def test_whoami_of_the_admin(users: Server) -> None:
    assert whoami(users) == {"username": "kubernetes-admin",
                             "groups": ["system:masters", "system:authenticated"]}
    table = users.kubectl("auth", "whoami").stdout.splitlines()
    assert table[0].split() == ["ATTRIBUTE", "VALUE"]
    assert table[1].split() == ["Username", "kubernetes-admin"]


def test_whoami_of_a_token_file_user(users: Server) -> None:
    assert whoami(users, "--token", ROOT_TOKEN) == {
        "username": "root", "uid": "uid-root",
        "groups": ["system:masters", "ops", "system:authenticated"]}


def test_whoami_of_a_client_certificate(users: Server, tmp_path: Path) -> None:
    config = kubeconfig_for(users, tmp_path, "carol", "system:masters", "team a")
    doc = yaml.safe_load(config.read_text())
    assert doc["current-context"] == "carol@kubegc" and doc["users"][0]["name"] == "carol"
    assert doc["clusters"][0]["cluster"]["server"] == users.url
    assert oct(config.stat().st_mode & 0o777) == "0o600"
    der = ssl.PEM_cert_to_DER_cert(base64.b64decode(
        doc["users"][0]["user"]["client-certificate-data"]).decode())
    done = kubectl_as(users, config, "auth", "whoami", "-o", "json", check=True)
    assert json.loads(done.stdout)["status"]["userInfo"] == {
        "username": "carol", "groups": ["system:masters", "team a", "system:authenticated"],
        "extra": {"authentication.kubernetes.io/credential-id": [
            f"X509SHA256={hashlib.sha256(der).hexdigest()}"]}}
    done = kubectl_as(users, config, "create", "configmap", "by-carol", "-n", "default")
    assert done.returncode == 0, done.stderr


def test_a_client_certificate_user_without_rights_is_refused_as_that_user(
        users: Server, tmp_path: Path) -> None:
    config = kubeconfig_for(users, tmp_path, "dave", "dev")
    done = kubectl_as(users, config, "get", "--raw", "/api/v1/namespaces/default/secrets")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        'Error from server (Forbidden): secrets is forbidden: User "dave" cannot list '
        'resource "secrets" in API group "" in the namespace "default"')


def official_client(server: Server, token: str | None = None) -> Any:
    """The official client for ``server``: its admin's kubeconfig, or ``token``."""
    from kubernetes import client, config

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(server.kubeconfig),
                            client_configuration=configuration)
    if token is not None:
        configuration.refresh_api_key_hook = None  # it would put the kubeconfig's back
        configuration.api_key = {"BearerToken": f"Bearer {token}"}
    return client.ApiClient(configuration)


def test_the_official_client_creates_a_self_subject_review(users: Server) -> None:
    from kubernetes import client

    kube = official_client(users)
    review = client.AuthenticationV1Api(kube).create_self_subject_review(
        client.V1SelfSubjectReview())
    assert review.status.user_info.username == "kubernetes-admin"
    assert review.metadata.creation_timestamp is not None
    kube.set_default_header("Impersonate-User", "system:serviceaccount:kube-system:gc")
    review = client.AuthenticationV1Api(kube).create_self_subject_review(
        client.V1SelfSubjectReview())
    assert (review.status.user_info.username, review.status.user_info.groups) == (
        "system:serviceaccount:kube-system:gc",
        ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"])


def test_self_subject_reviews_are_create_only_and_discovered(users: Server) -> None:
    out = users.kubectl("api-resources", "--api-group", "authentication.k8s.io", "-o",
                        "wide").stdout.splitlines()
    assert [line.split() for line in out[1:]] == [
        ["selfsubjectreviews", "authentication.k8s.io/v1", "false", "SelfSubjectReview",
         "create"],
        ["tokenreviews", "authentication.k8s.io/v1", "false", "TokenReview", "create"]]
    done = users.kubectl("get", "selfsubjectreviews", check=False)
    assert done.returncode == 1 and "(MethodNotAllowed)" in done.stderr
    status, body = users.http("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                              {"kind": "Pod", "apiVersion": "authentication.k8s.io/v1"},
                              headers={"Content-Type": "application/json"})
    assert (status, json.loads(body)["message"]) == (
        400, "the kind in the data (Pod) does not match the expected kind (SelfSubjectReview)")


# -- impersonation --------------------------------------------------------------------


def test_the_admin_impersonates_a_user_with_groups_and_a_uid(users: Server) -> None:
    assert whoami(users, "--as", "jane", "--as-group", "dev", "--as-group", "a,b",
                  "--as-uid", "7") == {"username": "jane", "uid": "7",
                                       "groups": ["dev", "a,b", "system:authenticated"]}
    assert whoami(users, "--as", "jane") == {"username": "jane",
                                             "groups": ["system:authenticated"]}
    assert whoami(users, "--as", "system:serviceaccount:default:op")["groups"] == [
        "system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]


def test_the_impersonated_user_is_authorized_and_admitted_as_itself(users: Server) -> None:
    ns = "impersonated"
    users.kubectl("create", "namespace", ns)
    done = users.kubectl("get", "--raw", f"/api/v1/namespaces/{ns}/pods", "--as", "jane",
                         check=False)
    assert done.stderr.strip() == (
        f'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource '
        f'"pods" in API group "" in the namespace "{ns}"')
    done = users.kubectl("create", "configmap", "as-root", "-n", ns, "--as", "root",
                         "--as-group", "system:masters")
    assert done.returncode == 0


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--as", "bob"],
                 'users "bob" is forbidden: User "jane" cannot impersonate resource "users" in '
                 'API group "" at the cluster scope', id="user"),
    pytest.param(["--as", "system:serviceaccount:kube-system:default"],
                 'serviceaccounts "default" is forbidden: User "jane" cannot impersonate '
                 'resource "serviceaccounts" in API group "" in the namespace "kube-system"',
                 id="service-account"),
])
def test_a_plain_user_may_not_impersonate(users: Server, args: list[str], message: str) -> None:
    done = users.kubectl("get", "--raw", "/api/v1/namespaces/default/pods", "--token",
                         JANE_TOKEN, *args, check=False)
    assert done.returncode == 1
    assert done.stderr.strip() == f"Error from server (Forbidden): {message}"


def _raw(server: Server, path: str, headers: dict[str, str], *, method: str = "GET",
         body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(server.url + path, headers=headers, method=method,
                                     data=body)
    try:
        with urllib.request.urlopen(request, context=server._ssl(), timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_groups_without_a_user_is_upstreams_internal_error(users: Server) -> None:
    done = users.kubectl("get", "--raw", "/api", "--as-group", "dev", check=False)
    assert done.returncode == 1 and "without impersonating a user" in done.stderr  # kubectl's
    status, headers, body = _raw(users, "/api/v1/namespaces?limit=1", {
        "Authorization": f"Bearer {users.token}", "Impersonate-Group": "dev"})
    assert (status, headers["Content-Type"]) == (500, "text/plain; charset=utf-8")
    assert body == (b'Internal Server Error: "/api/v1/namespaces?limit=1": requested '
                    b"[{Group  dev    }] without impersonating a user\n")


# -- 401 ------------------------------------------------------------------------------


def test_a_bad_bearer_token_is_401(users: Server) -> None:
    for args in (["get", "--raw", "/api"], ["auth", "whoami"]):
        done = users.kubectl(*args, "--token", "not-a-token", check=False)
        assert (done.returncode, done.stderr.strip()) == (1, LOGGED_OUT)
    status, _, body = _raw(users, "/version", {"Authorization": "Bearer not-a-token"})
    assert status == 401 and json.loads(body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    with pytest.raises(ApiException) as refused:
        client.CoreV1Api(official_client(users, "not-a-token")).list_namespace()
    assert refused.value.status == 401 and json.loads(refused.value.body)["reason"] == (
        "Unauthorized")


def test_no_credential_is_anonymous(users: Server, tmp_path: Path) -> None:
    config = _no_credential(users, tmp_path)
    assert json.loads(kubectl_as(users, config, "get", "--raw", "/version",
                                 check=True).stdout)["major"] == "1"
    done = kubectl_as(users, config, "get", "--raw", "/api")
    assert done.stderr.strip() == ('Error from server (Forbidden): forbidden: User '
                                   '"system:anonymous" cannot get path "/api"')


def _no_credential(server: Server, tmp_path: Path) -> Path:
    """The admin kubeconfig without its token. kubectl asks for a user name and a password
    when a kubeconfig has no credential at all; a password is none to kubegc, as to
    kube-apiserver (basic authentication is gone since 1.19): the request is
    uncredentialed."""
    doc = yaml.safe_load(server.kubeconfig.read_text())
    doc["users"][0]["user"] = {"username": "nobody", "password": "nothing"}
    path = tmp_path / "anonymous.kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_without_anonymous_auth_no_credential_is_401(tmp_path: Path) -> None:
    server = start_server(tmp_path / "kubegc", "--anonymous-auth=false")
    try:
        config = _no_credential(server, tmp_path)
        for path in ("/version", "/healthz", "/api"):
            done = kubectl_as(server, config, "get", "--raw", path)
            assert (done.returncode, done.stderr.strip()) == (1, LOGGED_OUT), path
        assert whoami(server)["username"] == "kubernetes-admin"  # credentials still work
    finally:
        stop_server(server)


# -- client certificates the CA did not sign ------------------------------------------


def test_a_certificate_of_another_ca_cannot_connect(users: Server, tmp_path: Path) -> None:
    """kube-apiserver answers 401 for a client certificate it cannot verify; Python's ssl
    verifies during the handshake and closes the connection, so kubectl cannot connect
    (and retries what it sees as a dropped connection, for GETs of discovery)."""
    other = start_server(tmp_path / "other", "--storage", "memory", "--no-ui")
    try:
        config = kubeconfig_for(other, tmp_path, "mallory", "system:masters")
    finally:
        stop_server(other)
    doc = yaml.safe_load(config.read_text())
    ours = yaml.safe_load(users.kubeconfig.read_text())
    doc["clusters"] = ours["clusters"]  # the right server and its CA; a foreign certificate
    config.write_text(yaml.safe_dump(doc))
    done = kubectl_as(users, config, "get", "--raw", "/api")
    assert done.returncode == 1
    # EOF, or a reset when the request was already on its way as the server closed
    assert re.fullmatch(r"Unable to connect to the server: (EOF|.*connection reset by peer)",
                        done.stderr.strip()), done.stderr


# -- with RBAC's grants -----------------------------------------------------------------

IMPERSONATOR = """
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: impersonate-bob}
rules:
- {apiGroups: [""], resources: [users], verbs: [impersonate], resourceNames: [bob]}
- {apiGroups: [""], resources: [groups], verbs: [impersonate], resourceNames: [dev]}
- {apiGroups: [authentication.k8s.io], resources: [uids], verbs: [impersonate],
   resourceNames: ["7"]}
- {apiGroups: [authentication.k8s.io], resources: [userextras/scopes], verbs: [impersonate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: jane-impersonates-bob}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: impersonate-bob}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: jane}]
---
apiVersion: v1
kind: Namespace
metadata: {name: operators}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: impersonate-sa, namespace: operators}
rules:
- {apiGroups: [""], resources: [serviceaccounts], verbs: [impersonate]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: jane-impersonates-sa, namespace: operators}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: impersonate-sa}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: jane}]
"""


@pytest.fixture(scope="module")
def impersonator(users: Server) -> Server:
    """``users`` where jane may impersonate bob, the group dev, the uid 7, any ``scopes``
    extra, and the ServiceAccounts of namespace ``operators``."""
    users.kubectl("apply", "-f", "-", input=IMPERSONATOR)
    return users


def test_whoami_of_a_plain_user(users: Server) -> None:
    """RBAC's system:basic-user lets every authenticated user ask who it is."""
    assert whoami(users, "--token", JANE_TOKEN) == {
        "username": "jane", "uid": "uid-jane", "groups": ["dev", "system:authenticated"]}


def test_a_user_granted_impersonate_impersonates_what_it_names(impersonator: Server) -> None:
    as_jane = ("--token", JANE_TOKEN)
    assert whoami(impersonator, *as_jane, "--as", "bob", "--as-group", "dev", "--as-uid",
                  "7") == {"username": "bob", "uid": "7",
                           "groups": ["dev", "system:authenticated"]}
    assert whoami(impersonator, *as_jane, "--as", "system:serviceaccount:operators:op") == {
        "username": "system:serviceaccount:operators:op",
        "groups": ["system:serviceaccounts", "system:serviceaccounts:operators",
                   "system:authenticated"]}
    status, _, body = _raw(impersonator, "/apis/authentication.k8s.io/v1/selfsubjectreviews", {
        "Authorization": f"Bearer {JANE_TOKEN}", "Impersonate-User": "bob",
        "Impersonate-Extra-Scopes": "view", "Content-Type": "application/json"}, method="POST",
        body=b"{}")
    assert status == 201 and json.loads(body)["status"]["userInfo"]["extra"] == {
        "scopes": ["view"]}


@pytest.mark.parametrize(("args", "message"), [
    pytest.param(["--as", "alice"],
                 'users "alice" is forbidden: User "jane" cannot impersonate resource "users" '
                 'in API group "" at the cluster scope', id="another-user"),
    pytest.param(["--as", "bob", "--as-group", "system:masters"],
                 'groups "system:masters" is forbidden: User "jane" cannot impersonate '
                 'resource "groups" in API group "" at the cluster scope', id="another-group"),
    pytest.param(["--as", "bob", "--as-uid", "8"],
                 'uids.authentication.k8s.io "8" is forbidden: User "jane" cannot impersonate '
                 'resource "uids" in API group "authentication.k8s.io" at the cluster scope',
                 id="another-uid"),
    pytest.param(["--as", "system:serviceaccount:kube-system:default"],
                 'serviceaccounts "default" is forbidden: User "jane" cannot impersonate '
                 'resource "serviceaccounts" in API group "" in the namespace "kube-system"',
                 id="a-service-account-elsewhere"),
])
def test_what_the_grant_does_not_name_is_refused(impersonator: Server, args: list[str],
                                                 message: str) -> None:
    done = impersonator.kubectl("get", "--raw", "/api", "--token", JANE_TOKEN, *args,
                                check=False)
    assert (done.returncode, done.stderr.strip()) == (1, f"Error from server (Forbidden): "
                                                         f"{message}")


def test_the_impersonated_service_account_has_its_own_rights(impersonator: Server) -> None:
    sa = ("--token", JANE_TOKEN, "--as", "system:serviceaccount:operators:op")
    done = impersonator.kubectl("get", "configmaps", "-n", "operators", *sa, check=False)
    assert done.stderr.strip() == (
        'Error from server (Forbidden): configmaps is forbidden: User '
        '"system:serviceaccount:operators:op" cannot list resource "configmaps" in API group '
        '"" in the namespace "operators"')
    impersonator.kubectl("create", "role", "cm-reader", "-n", "operators", "--verb", "list",
                         "--resource", "configmaps")
    impersonator.kubectl("create", "rolebinding", "op-reads", "-n", "operators", "--role",
                         "cm-reader", "--serviceaccount", "operators:op")
    assert impersonator.kubectl("get", "configmaps", "-n", "operators", *sa).returncode == 0


# -- the owner-graph page, as a user ----------------------------------------------------------


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def page_session(server: Server, *kubectl_args: str) -> str:
    """A session cookie of the page for whoever ``kubectl get --raw /ui/api/login`` runs as."""
    url = server.kubectl("get", "--raw", "/ui/api/login", *kubectl_args).stdout.strip()
    opener = urllib.request.build_opener(_NoRedirect(), urllib.request.HTTPSHandler(
        context=server._ssl()))
    with pytest.raises(urllib.error.HTTPError) as redirect:
        opener.open(url, timeout=30)
    assert redirect.value.code == 303
    return str(redirect.value.headers["Set-Cookie"]).split(";")[0]


def page_snapshot(server: Server, cookie: str, namespace: str) -> set[str]:
    """``Kind/name`` of the objects the page's first event shows in ``namespace``."""
    request = urllib.request.Request(
        f"{server.url}/ui/api/stream?namespace={namespace}", headers={"Cookie": cookie})
    with urllib.request.urlopen(request, context=server._ssl(), timeout=30) as resp:
        lines: list[bytes] = []
        while not lines or lines[-1] != b"\n":
            lines.append(resp.readline())
    event, data = lines[0].decode().strip(), lines[1].decode().removeprefix("data: ")
    assert event == "event: snapshot"
    return {f"{n['kind']}/{n['name']}" for n in json.loads(data)["nodes"]
            if n["namespace"] == namespace}


def test_the_page_shows_a_user_what_it_may_list(users: Server) -> None:
    """The page reads as the session's user: jane may list configmaps in ``shown``, not
    pods; the admin's page shows both."""
    ns = "shown"
    users.kubectl("create", "namespace", ns)
    users.kubectl("create", "configmap", "settings", "-n", ns)
    users.kubectl("apply", "-n", ns, "-f", "-", input=(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
        "spec: {containers: [{name: c, image: nginx}]}\n"))
    users.kubectl("create", "role", "cm-watcher", "-n", ns, "--verb", "list,watch",
                  "--resource", "configmaps")
    users.kubectl("create", "rolebinding", "jane-watches", "-n", ns, "--role", "cm-watcher",
                  "--user", "jane")
    admin = page_snapshot(users, page_session(users), ns)
    assert {"ConfigMap/settings", "Pod/web"} <= admin
    jane = page_snapshot(users, page_session(users, "--token", JANE_TOKEN), ns)
    assert "ConfigMap/settings" in jane and not any(n.startswith("Pod/") for n in jane)
    assert page_snapshot(users, page_session(users, "--as", "jane"), ns) == jane
    assert page_snapshot(users, page_session(users, "--as", "bob"), ns) == set()


def test_a_login_url_needs_a_credential(users: Server, tmp_path: Path) -> None:
    done = kubectl_as(users, _no_credential(users, tmp_path), "get", "--raw", "/ui/api/login")
    assert (done.returncode, done.stderr.strip()) == (
        1, "error: You must be logged in to the server (a login URL is for an authenticated "
           "user: send a credential (a bearer token or a client certificate))")
    done = users.kubectl("get", "--raw", "/ui/api/login", "--token", "not-a-token",
                         check=False)
    assert (done.returncode, done.stderr.strip()) == (1, LOGGED_OUT)
    done = users.kubectl("get", "--raw", "/ui/api/login", "--token", JANE_TOKEN, "--as",
                         "alice", check=False)
    assert done.stderr.strip() == (
        'Error from server (Forbidden): users "alice" is forbidden: User "jane" cannot '
        'impersonate resource "users" in API group "" at the cluster scope')


def test_the_registry_sees_the_impersonated_user(users: Server) -> None:
    """RBAC's escalation check (in the registry, as admission would) judges the user
    impersonated, not the admin who impersonates."""
    users.kubectl("create", "clusterrole", "role-maker", "--verb", "create",
                  "--resource", "clusterroles.rbac.authorization.k8s.io")
    users.kubectl("create", "clusterrolebinding", "jane-makes-roles", "--clusterrole",
                  "role-maker", "--user", "jane")
    done = users.kubectl("create", "clusterrole", "secret-reader", "--verb", "get",
                         "--resource", "secrets", "--as", "jane", check=False)
    assert done.returncode == 1
    assert done.stderr == (
        'Error from server (Forbidden): clusterroles.rbac.authorization.k8s.io '
        '"secret-reader" is forbidden: user "jane" (groups=["system:authenticated"]) is '
        "attempting to grant RBAC permissions not currently held:\n"
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}\n')
    users.kubectl("create", "clusterrole", "secret-reader", "--verb", "get", "--resource",
                  "secrets")  # the admin itself may


#: kube-apiserver's refusal (``responsewriters.Forbidden`` of ``WithImpersonation``)
REFUSED = ('users "alice" is forbidden: User "jane" cannot impersonate resource "users" in '
           'API group "" at the cluster scope')


def test_an_impersonation_refusal_is_upstreams_status(users: Server, tmp_path: Path) -> None:
    """A user who may not impersonate gets kube-apiserver's 403 Status, its message read
    by every client that reads a Status: raw HTTP, ``kubectl get --raw``, the official
    client and kr8s. ``kubectl get configmaps --as`` prints ``unknown`` in its discovery
    lines and last line, against kube-apiserver as here: client-go's discovery reads the
    answer to ``GET /api`` with ``Result.Raw()``, which keeps no message of a JSON error
    body (``newUnstructuredResponseError``, client-go rest/request.go; the same output
    against kube-apiserver 1.32 in TremoloSecurity/kube-oidc-proxy#71)."""
    status, headers, body = _raw(users, "/api/v1/namespaces/default/configmaps", {
        "Authorization": f"Bearer {JANE_TOKEN}", "Impersonate-User": "alice"})
    assert (status, headers["Content-Type"]) == (403, "application/json")
    assert json.loads(body) == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": REFUSED, "reason": "Forbidden", "details": {"name": "alice",
                                                               "kind": "users"},
        "code": 403}
    done = users.kubectl("get", "--raw", "/api/v1/namespaces/default/configmaps", "--token",
                         JANE_TOKEN, "--as", "alice", check=False)
    assert (done.returncode, done.stderr.strip()) == (1, f"Error from server (Forbidden): "
                                                         f"{REFUSED}")
    # discovery not cached yet: client-go's discovery keeps no message (as upstream)
    cache = str(tmp_path / "kube-cache")
    done = users.kubectl("get", "configmaps", "--token", JANE_TOKEN, "--as=alice", "-v=8",
                         "--cache-dir", cache, check=False)
    assert done.returncode == 1
    assert done.stderr.strip().endswith("Error from server (Forbidden): unknown")
    assert REFUSED.replace('"', '\\"') in done.stderr  # the body kubectl logs at -v=8
    # discovery cached (by jane's own request): the GET's refusal is printed whole
    users.kubectl("get", "configmaps", "--token", JANE_TOKEN, "--cache-dir", cache,
                  check=False)
    done = users.kubectl("get", "configmaps", "--token", JANE_TOKEN, "--as=alice",
                         "--cache-dir", cache, check=False)
    assert (done.returncode, done.stderr.strip()) == (
        1, f"Error from server (Forbidden): {REFUSED}")

    from kubernetes import client
    from kubernetes.client.rest import ApiException

    api = official_client(users, JANE_TOKEN)
    api.set_default_header("Impersonate-User", "alice")
    with pytest.raises(ApiException) as refused:
        client.CoreV1Api(api).list_namespaced_config_map("default")
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"] == REFUSED

    import kr8s
    import kr8s.asyncio

    doc = yaml.safe_load(users.kubeconfig.read_text())
    doc["users"][0]["user"] = {"token": JANE_TOKEN}
    config = tmp_path / "jane.kubeconfig"
    config.write_text(yaml.safe_dump(doc))

    async def list_as_alice() -> None:
        api = await kr8s.asyncio.api(kubeconfig=str(config))
        async with api.call_api("GET", version="v1", url="configmaps", namespace="default",
                                headers={"Impersonate-User": "alice"}):
            pass

    with pytest.raises(kr8s.ServerError) as kr8s_refused:
        asyncio.run(list_as_alice())
    assert str(kr8s_refused.value) == REFUSED
    assert kr8s_refused.value.status["reason"] == "Forbidden"
