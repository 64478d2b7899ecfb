"""ServiceAccount tokens end to end: ``kubectl create token`` (the TokenRequest API),
tokens used with kubectl and the official Python client, TokenReview, revocation by
deleting what a token names, legacy token Secrets, expiry on a scaled clock, and the key
kept across a restart.

Until RBAC, a ServiceAccount may do almost nothing: its identity is read from the
TokenReview answers (made by the admin), and a valid token is told from a refused one by
403 (authenticated, not allowed) versus 401.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from .conftest import Server, eventually, start_server, stop_server, write

API_AUDIENCE = "https://kubernetes.default.svc.cluster.local"


def create_token(server: Server, ns: str, *args: str, account: str = "default") -> str:
    return server.kubectl("create", "token", account, "-n", ns, *args).stdout.strip()


def review(server: Server, token: str, audiences: list[str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"token": token}
    if audiences is not None:
        spec["audiences"] = audiences
    status, body = server.http("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec},
        headers={"Content-Type": "application/json"})
    assert status == 201, body
    answer = json.loads(body)
    assert answer["spec"]["token"] == token
    return dict(answer["status"])


def status_with(server: Server, token: str, path: str) -> tuple[int, dict[str, Any]]:
    """The answer to a GET made with ``token`` (not the admin's)."""
    request = urllib.request.Request(server.url + path)
    request.add_header("Authorization", f"Bearer {token}")
    context = ssl.create_default_context(cafile=str(server.ca_file))
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def authenticated_as(server: Server, token: str, ns: str, account: str = "default") -> bool:
    """The token is the ServiceAccount's: a request with it is forbidden, not refused."""
    code, body = status_with(server, token, f"/api/v1/namespaces/{ns}/pods")
    if code == 401:
        return False
    assert code == 403, body
    assert body["message"] == (f'pods is forbidden: User "system:serviceaccount:{ns}:'
                               f'{account}" cannot list resource "pods" in API group "" in '
                               f'the namespace "{ns}"')
    return True


def refused(server: Server, token: str) -> bool:
    code, body = status_with(server, token, "/api/v1/namespaces/default/pods")
    if code != 401:
        return False
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                    "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized",
                    "code": 401}
    return True


def test_a_requested_token_is_its_service_account(server: Server, ns: str) -> None:
    token = create_token(server, ns)
    sa = json.loads(server.kubectl("get", "sa", "default", "-n", ns, "-o", "json").stdout)
    status = review(server, token)
    jti = json.loads(_payload(token))["jti"]
    assert status == {
        "authenticated": True,
        "user": {"username": f"system:serviceaccount:{ns}:default",
                 "uid": sa["metadata"]["uid"],
                 "groups": ["system:serviceaccounts", f"system:serviceaccounts:{ns}",
                            "system:authenticated"],
                 "extra": {"authentication.kubernetes.io/credential-id": [f"JTI={jti}"]}},
        "audiences": [API_AUDIENCE]}
    assert authenticated_as(server, token, ns)
    # kubectl with the token: authenticated, not allowed (no RBAC grants it anything yet)
    proc = server.kubectl("--token", token, "get", "configmaps", "-n", ns, check=False)
    assert proc.returncode == 1
    assert (f'User "system:serviceaccount:{ns}:default" cannot list resource "configmaps"'
            in proc.stderr)


def test_the_official_client_with_a_token_is_authenticated_or_refused(server: Server,
                                                                       ns: str) -> None:
    from kubernetes import client

    def core_with(token: str) -> Any:
        configuration = client.Configuration()
        configuration.host = server.url
        configuration.ssl_ca_cert = str(server.ca_file)
        configuration.api_key = {"authorization": f"Bearer {token}"}
        return client.CoreV1Api(client.ApiClient(configuration))

    token = create_token(server, ns)
    with pytest.raises(client.ApiException) as caught:
        core_with(token).list_namespaced_config_map(ns)
    assert caught.value.status == 403
    with pytest.raises(client.ApiException) as caught:
        core_with(token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB")
                  ).list_namespaced_config_map(ns)
    assert caught.value.status == 401


def _payload(token: str) -> str:
    part = token.split(".")[1]
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode()


def test_a_token_for_another_audience_is_not_the_apis(server: Server, ns: str) -> None:
    token = create_token(server, ns, "--audience", "vault", "--duration", "15m")
    claims = json.loads(_payload(token))
    assert claims["aud"] == ["vault"] and claims["exp"] - claims["iat"] == 900
    assert refused(server, token)
    assert review(server, token) == {
        "user": {}, "error": '[invalid bearer token, token audiences ["vault"] is invalid for '
                             f'the target audiences ["{API_AUDIENCE}"]]'}
    vault = review(server, token, ["vault", "other"])
    assert vault["authenticated"] is True and vault["audiences"] == ["vault"]
    # the admin's token names no audience: it is the API's only
    assert "authenticated" not in review(server, server.token, ["vault"])


def test_a_tampered_token_is_refused(server: Server, ns: str) -> None:
    token = create_token(server, ns)
    head, _, signature = token.split(".")
    claims = json.loads(_payload(token))
    claims["sub"] = "system:serviceaccount:kube-system:default"
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    forged = f"{head}.{forged_payload}.{signature}"
    assert refused(server, forged)
    assert review(server, forged) == {
        "user": {}, "error": "[invalid bearer token, go-jose/go-jose: error in cryptographic "
                             "primitive]"}
    proc = server.kubectl("--token", forged, "get", "pods", check=False)
    assert "error: You must be logged in to the server (Unauthorized)" in proc.stderr
    assert review(server, "not-a-token") == {"user": {}, "error": "invalid bearer token"}


def test_deleting_or_recreating_the_service_account_revokes_its_tokens(server: Server,
                                                                        ns: str) -> None:
    server.kubectl("create", "serviceaccount", "robot", "-n", ns)
    token = create_token(server, ns, account="robot")
    assert authenticated_as(server, token, ns, "robot")
    server.kubectl("delete", "serviceaccount", "robot", "-n", ns)
    assert refused(server, token)
    assert review(server, token)["error"] == (
        '[invalid bearer token, serviceaccounts "robot" not found]')
    server.kubectl("create", "serviceaccount", "robot", "-n", ns)
    assert refused(server, token)
    assert "does not match claim" in review(server, token)["error"]


def test_a_pod_bound_token_lives_as_long_as_the_pod(server: Server, ns: str,
                                                    tmp_path: Path) -> None:
    server.kubectl("apply", "-n", ns, "-f", write(tmp_path, "pod.yaml", """
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  serviceAccountName: default
  terminationGracePeriodSeconds: 0
  containers: [{name: c, image: nginx}]
"""))
    eventually(lambda: server.kubectl("get", "pod", "web", "-n", ns, "-o",
                                      "jsonpath={.spec.nodeName}").stdout)
    pod = json.loads(server.kubectl("get", "pod", "web", "-n", ns, "-o", "json").stdout)
    token = create_token(server, ns, "--bound-object-kind", "Pod", "--bound-object-name",
                         "web")
    extra = review(server, token)["user"]["extra"]
    assert extra["authentication.kubernetes.io/pod-name"] == ["web"]
    assert extra["authentication.kubernetes.io/pod-uid"] == [pod["metadata"]["uid"]]
    assert extra["authentication.kubernetes.io/node-name"] == [pod["spec"]["nodeName"]]
    assert authenticated_as(server, token, ns)
    server.kubectl("delete", "pod", "web", "-n", ns)
    assert refused(server, token)
    assert review(server, token)["error"] == (
        "[invalid bearer token, service account token has been invalidated]")
    proc = server.kubectl("create", "token", "default", "-n", ns, "--bound-object-kind", "Pod",
                          "--bound-object-name", "web", check=False)
    assert proc.stderr.strip() == 'error: failed to create token: pods "web" not found'


def test_a_legacy_token_secret_works_until_it_is_deleted(server: Server, ns: str,
                                                         tmp_path: Path) -> None:
    server.kubectl("apply", "-n", ns, "-f", write(tmp_path, "secret.yaml", """
apiVersion: v1
kind: Secret
metadata:
  name: default-token
  annotations: {kubernetes.io/service-account.name: default}
type: kubernetes.io/service-account-token
"""))

    def filled() -> dict[str, Any] | None:
        secret = json.loads(server.kubectl("get", "secret", "default-token", "-n", ns, "-o",
                                           "json").stdout)
        return secret if "token" in (secret.get("data") or {}) else None

    secret = eventually(filled)
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert data["namespace"] == ns and data["ca.crt"] == server.ca_file.read_text()
    assert json.loads(_payload(data["token"]))["iss"] == "kubernetes/serviceaccount"
    assert authenticated_as(server, data["token"], ns)
    assert review(server, data["token"])["user"]["username"] == (
        f"system:serviceaccount:{ns}:default")
    labels = eventually(lambda: json.loads(server.kubectl(
        "get", "secret", "default-token", "-n", ns, "-o", "json").stdout)["metadata"].get(
        "labels"))
    assert set(labels) == {"kubernetes.io/legacy-token-last-used"}
    server.kubectl("delete", "secret", "default-token", "-n", ns)
    assert refused(server, data["token"])
    assert review(server, data["token"])["error"] == (
        "[invalid bearer token, Token has been invalidated]")


def test_a_token_secret_for_a_missing_account_is_deleted(server: Server, ns: str,
                                                         tmp_path: Path) -> None:
    server.kubectl("apply", "-n", ns, "-f", write(tmp_path, "secret.yaml", """
apiVersion: v1
kind: Secret
metadata:
  name: nobodys
  annotations: {kubernetes.io/service-account.name: nobody}
type: kubernetes.io/service-account-token
"""))
    eventually(lambda: server.kubectl("get", "secret", "nobodys", "-n", ns,
                                      check=False).returncode == 1)


def test_token_requests_refused_as_upstream_refuses_them(server: Server, ns: str) -> None:
    proc = server.kubectl("create", "token", "default", "-n", ns, "--duration", "1m",
                          check=False)
    assert proc.stderr.strip() == (
        'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: '
        "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 "
        "minutes")
    proc = server.kubectl("create", "token", "ghost", "-n", ns, check=False)
    assert proc.stderr.strip() == 'error: failed to create token: serviceaccounts "ghost" not found'


def test_discovery_serves_the_token_subresource_and_tokenreviews(server: Server) -> None:
    resources = {r["name"]: r for r in json.loads(server.kubectl(
        "get", "--raw", "/api/v1").stdout)["resources"]}
    assert resources["serviceaccounts/token"] == {
        "name": "serviceaccounts/token", "singularName": "", "namespaced": True,
        "group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest",
        "verbs": ["create"]}
    lines = server.kubectl("api-resources", "--api-group", "authentication.k8s.io").stdout
    assert "tokenreviews" in lines and "TokenReview" in lines


def test_tokens_expire_on_the_clusters_clock(tmp_path: Path) -> None:
    """At --time-scale 600, a 10-minute token has expired a little over a real second
    after it was issued (plus the minute of leeway, a tenth of a second)."""
    scaled = start_server(tmp_path / "scaled", "--time-scale", "600")
    try:
        token = create_token(scaled, "default", "--duration", "10m")
        assert eventually(lambda: refused(scaled, token), timeout=30)
        assert review(scaled, token)["error"] == (
            "[invalid bearer token, service account token has expired]")
    finally:
        stop_server(scaled)


def test_the_signing_key_is_kept_private_and_reused_after_a_restart(tmp_path: Path) -> None:
    directory = tmp_path / "kept"
    first = start_server(directory)
    try:
        token = create_token(first, "default")
    finally:
        stop_server(first)
    key = directory / "pki" / "sa.key"
    assert key.stat().st_mode & 0o777 == 0o600
    assert (directory / "pki" / "sa.pub").stat().st_mode & 0o777 == 0o644
    again = start_server(directory)
    try:
        assert review(again, token)["authenticated"] is True
    finally:
        stop_server(again)
