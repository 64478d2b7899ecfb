"""kubegc's aggregation proxy as kube-aggregator's ``proxyHandler``: a remote group's watch
streamed (each event reaches the client as the backend writes it; the client's disconnect
closes the backend's connection; the backend's end of the stream ends the client's: real
kubectl get --watch and the official Python client's watch), and the front-proxy client
certificate presented to a backend that trusts requestheader identities only from it, as
the ``extension-apiserver-authentication`` ConfigMap says (and kubegc, as a backend,
believing requestheaders from that certificate only); the backend's OpenAPI merged into
``/openapi/v2`` and ``/openapi/v3`` (kubectl explain, kubectl apply's client-side
validation) and downloaded again when its APIService changes."""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from kubegc.server.tls import client_certificate, load_ca
from tests.e2e.aggregated_api import GROUP, VERSION, WIDGET, AggregatedAPI
from tests.e2e.aggregation_setup import (
    API_SERVICE,
    agg_server,
    authentication_config,
    backend,
    registered,
)
from tests.e2e.conftest import KUBECTL, Server, eventually

__all__ = ["agg_server", "backend", "registered"]  # module fixtures


def lines_of(process: subprocess.Popen[str]) -> list[str]:
    """The lines ``process`` prints, collected by a thread as they come."""
    seen: list[str] = []

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line.strip())

    threading.Thread(target=read, daemon=True).start()
    return seen


def test_kubectl_watch_of_a_remote_kind_is_streamed_and_its_end_closes_the_backend(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    agg_server.kubectl("create", "namespace", "watching")
    backend.add_widget("watching", "before")
    assert KUBECTL is not None
    kubectl = subprocess.Popen(
        [KUBECTL, "--kubeconfig", str(agg_server.kubeconfig), "--cache-dir",
         str(agg_server.cache_dir), "get", f"widgets.{GROUP}", "-n", "watching", "--watch",
         "-o", "name"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        printed = lines_of(kubectl)
        eventually(lambda: backend.watches_in("watching") == 1,
                   what="the backend's watch opened")
        backend.add_widget("watching", "during")
        eventually(lambda: f"widget.{GROUP}/during" in printed,
                   what="the event printed while the watch is open")
        assert printed[0] == f"widget.{GROUP}/before"
        assert kubectl.poll() is None  # still watching: the event came streamed
        watch = [r for r in backend.requests if "watch=true" in r["path"]][-1]
        me = json.loads(agg_server.kubectl("auth", "whoami", "-o", "json").stdout)["status"]
        assert watch["user"] == me["userInfo"]["username"]  # sent as requestheader
    finally:
        kubectl.terminate()
        kubectl.wait(timeout=10)
    eventually(lambda: backend.watches_in("watching") == 0,
               what="the backend's connection closed")


def test_python_client_watch_ends_when_the_backend_ends_it(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    from kubernetes import client, config, watch

    configuration = client.Configuration()
    config.load_kube_config(config_file=str(agg_server.kubeconfig),
                            client_configuration=configuration)
    api = client.CustomObjectsApi(client.ApiClient(configuration))
    agg_server.kubectl("create", "namespace", "py-watching")
    events: list[dict[str, Any]] = []
    ended = threading.Event()

    failures: list[BaseException] = []

    def run() -> None:
        try:
            for event in watch.Watch().stream(api.list_namespaced_custom_object, GROUP,
                                              VERSION, "py-watching", "widgets"):
                events.append(event)
        except Exception as e:  # shown by the assertions below
            failures.append(e)
        ended.set()

    threading.Thread(target=run, daemon=True).start()
    eventually(lambda: backend.watches_in("py-watching") == 1 or failures,
               what="the backend's watch opened")
    assert not failures
    backend.add_widget("py-watching", "w1")
    eventually(lambda: events, what="the ADDED event")
    assert (events[0]["type"], events[0]["object"]["metadata"]["name"]) == ("ADDED", "w1")
    assert not ended.is_set()
    # the widgets carry no resourceVersion: the client does not watch again once it ends
    backend.end_watches()
    assert ended.wait(timeout=30), "the client's watch ended with the backend's"
    eventually(lambda: backend.watches_in("py-watching") == 0,
               what="the backend's watch gone")


def test_a_protocol_upgrade_is_refused(agg_server: Server, registered: str) -> None:
    """kubectl exec's upgrade: refused as upstream's responder answers an upgrade it cannot
    make (503, plain text), never passed to the backend."""
    host, _, port = agg_server.url.removeprefix("https://").partition(":")
    connection = http.client.HTTPSConnection(host, int(port), context=ssl.create_default_context(
        cafile=str(agg_server.ca_file)), timeout=30)
    path = f"/apis/{GROUP}/{VERSION}/namespaces/default/widgets/w/exec"
    connection.request("POST", path, headers={
        "Authorization": f"Bearer {agg_server.token}", "Connection": "Upgrade",
        "Upgrade": "SPDY/3.1"})
    response = connection.getresponse()
    assert response.status == 503
    assert b"protocol upgrades are not proxied" in response.read()
    connection.close()


def test_the_authentication_configmap_publishes_the_front_proxy_trust(
        agg_server: Server) -> None:
    """As kube-apiserver's clusterauthenticationtrust controller writes it, with kubeadm's
    front-proxy names (kubegc made the CA and certificate in its data directory)."""
    data = authentication_config(agg_server)
    pki = agg_server.data_dir / "pki"
    assert data == {
        "client-ca-file": agg_server.ca_file.read_text(),
        "requestheader-client-ca-file": (pki / "front-proxy-ca.crt").read_text(),
        "requestheader-allowed-names": '["front-proxy-client"]',
        "requestheader-username-headers": '["X-Remote-User"]',
        "requestheader-group-headers": '["X-Remote-Group"]',
        "requestheader-extra-headers-prefix": '["X-Remote-Extra-"]'}
    done = subprocess.run(["openssl", "verify", "-CAfile", str(pki / "front-proxy-ca.crt"),
                           str(pki / "front-proxy-client.crt")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_backend_believes_the_requestheader_user_only_from_the_front_proxy(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    path = f"/apis/{GROUP}/{VERSION}/namespaces/default/widgets"
    context = ssl.create_default_context(cadata=backend.cert_pem.decode())
    context.check_hostname = False
    forged = urllib.request.Request(f"https://127.0.0.1:{backend.port}{path}",
                                    headers={"X-Remote-User": "system:admin",
                                             "X-Remote-Group": "system:masters"})
    try:
        urllib.request.urlopen(forged, context=context, timeout=30)
        raise AssertionError("the backend believed headers without the front-proxy certificate")
    except urllib.error.HTTPError as e:
        assert e.code == 401
    backend.requests.clear()
    agg_server.kubectl("get", f"widgets.{GROUP}", "-n", "default")
    (sent,) = [r for r in backend.requests if r["path"].startswith(path)]
    assert sent["front_proxy"] == "front-proxy-client"
    checks = [r for r in backend.requests if r["path"] == f"/apis/{GROUP}/{VERSION}"]
    assert all(r["front_proxy"] == "front-proxy-client" for r in checks)


def explained(server: Server, field: str, text: str) -> str | None:
    done = server.kubectl("explain", f"widgets.{GROUP}{field}", check=False)
    return done.stdout if done.returncode == 0 and text in done.stdout else None


def test_the_backends_openapi_is_merged_into_kubegcs(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    gv = f"apis/{GROUP}/{VERSION}"
    out = eventually(lambda: explained(agg_server, "", "A Widget is what the test backend"),
                     what="kubectl explain of the remote kind")
    assert f"GROUP:      {GROUP}\nKIND:       Widget\nVERSION:    {VERSION}" in out
    assert explained(agg_server, ".spec.size", "How big the widget is.")
    index = json.loads(agg_server.kubectl("get", "--raw", "/openapi/v3").stdout)
    url = index["paths"][gv]["serverRelativeURL"]
    assert url.startswith(f"/openapi/v3/{gv}?hash=")
    assert "apis/apps/v1" in index["paths"]  # beside kubegc's own
    document = json.loads(agg_server.kubectl("get", "--raw", url).stdout)
    assert document == backend.openapi[f"/openapi/v3/{gv}"]
    v2 = json.loads(agg_server.kubectl("get", "--raw", "/openapi/v2").stdout)
    assert v2["definitions"][WIDGET] == backend.openapi["/openapi/v2"]["definitions"][WIDGET]
    assert "io.k8s.api.apps.v1.Deployment" in v2["definitions"]
    assert any(p.startswith(f"/{gv}/") for p in v2["paths"])


def test_kubectl_apply_validates_a_remote_kind_client_side(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    """The remote kind declares no fieldValidation: kubectl validates it against the
    merged /openapi/v2 itself (``--validate=strict``, its default)."""
    eventually(lambda: explained(agg_server, "", "Widget"), what="the merged OpenAPI")
    widget = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget",
              "metadata": {"name": "checked", "namespace": "default"},
              "spec": {"size": 3}}
    done = agg_server.kubectl("apply", "--dry-run=client", "-f", "-", input=json.dumps(widget))
    assert f"widget.{GROUP}/checked created (dry run)" in done.stdout
    widget["spec"] = {"size": 3, "colour": "red"}
    done = agg_server.kubectl("apply", "--dry-run=client", "-f", "-",
                              input=json.dumps(widget), check=False)
    assert done.returncode != 0
    assert 'unknown field "colour"' in done.stderr, done.stderr


def test_the_openapi_is_downloaded_again_when_the_apiservice_changes(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    eventually(lambda: explained(agg_server, "", "A Widget is what"), what="the merged OpenAPI")
    for path in ("/openapi/v2", f"/openapi/v3/apis/{GROUP}/{VERSION}"):
        document = backend.openapi[path]
        schemas = document["definitions"] if "definitions" in document else (
            document["components"]["schemas"])
        schemas[WIDGET] = {**schemas[WIDGET], "description": "A Widget, described again."}
    try:
        agg_server.kubectl("label", "apiservice", API_SERVICE, "openapi=again")
        eventually(lambda: explained(agg_server, "", "A Widget, described again."),
                   what="the new OpenAPI")
    finally:
        agg_server.kubectl("label", "apiservice", API_SERVICE, "openapi-")


def test_the_gc_watches_a_remote_kind_and_collects_the_dependents_of_one_deleted(
        agg_server: Server, backend: AggregatedAPI, registered: str) -> None:
    """The GC's monitor of a deletable remote kind is a watch streamed through the proxy
    (as kube-controller-manager's over HTTP): the backend's DELETED event of an owner is
    what makes the GC look at its dependents (without it, the owner was seen present once
    and its dependent would stay)."""
    ns = "gc-watching"
    agg_server.kubectl("create", "namespace", ns)
    eventually(lambda: backend.watches_in("") >= 1, timeout=60,
               what="the GC's monitor of widgets watching")
    owner = backend.add_widget(ns, "owner")
    reference = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Widget", "name": "owner",
                 "uid": owner["metadata"]["uid"]}
    agg_server.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "of-widget", "ownerReferences": [reference]}}))
    assert agg_server.kubectl("get", "cm", "of-widget", "-n", ns).returncode == 0
    backend.delete_widget(ns, "owner")
    eventually(lambda: agg_server.kubectl("get", "cm", "of-widget", "-n", ns,
                                          check=False).returncode != 0,
               timeout=60, what="the dependent of the deleted widget collected")


def whoami(server: Server, cert: tuple[Path, Path] | None,
           headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    """A SelfSubjectReview sent with ``cert`` (or none) and ``headers``."""
    context = ssl.create_default_context(cafile=str(server.ca_file))
    if cert is not None:
        context.load_cert_chain(*cert)
    request = urllib.request.Request(
        server.url + "/apis/authentication.k8s.io/v1/selfsubjectreviews", method="POST",
        data=json.dumps({"apiVersion": "authentication.k8s.io/v1",
                         "kind": "SelfSubjectReview"}).encode(),
        headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_kubegc_as_a_backend_believes_requestheaders_from_the_front_proxy_only(
        agg_server: Server, tmp_path: Path) -> None:
    """kube-apiserver's requestheader authenticator: the front-proxy certificate (signed by
    the requestheader CA, an allowed name) makes the headers the user; kubegc's own client
    certificates and tokens do not, and the front-proxy certificate alone names nobody."""
    pki = agg_server.data_dir / "pki"
    proxy = (pki / "front-proxy-client.crt", pki / "front-proxy-client.key")
    asserted = {"X-Remote-User": "alice", "X-Remote-Group": "devs",
                "X-Remote-Extra-Scopes": "read"}
    status, review = whoami(agg_server, proxy, asserted)
    assert status == 201, review
    assert review["status"]["userInfo"] == {
        "username": "alice", "groups": ["devs", "system:authenticated"],
        "extra": {"scopes": ["read"]}}
    token = {"Authorization": f"Bearer {agg_server.token}"}
    status, review = whoami(agg_server, None, {**asserted, **token})
    assert review["status"]["userInfo"]["username"] != "alice"
    made = client_certificate(load_ca(agg_server.data_dir), "bob")  # type: ignore[arg-type]
    (tmp_path / "bob.crt").write_bytes(made.cert_pem)
    (tmp_path / "bob.key").write_bytes(made.key_pem)
    status, review = whoami(agg_server, (tmp_path / "bob.crt", tmp_path / "bob.key"), asserted)
    assert review["status"]["userInfo"]["username"] == "bob"
    status, review = whoami(agg_server, proxy, token)  # no username header: the token's
    assert review["status"]["userInfo"]["username"] not in ("front-proxy-client", "alice")
    status, review = whoami(agg_server, proxy, {})  # the certificate alone: refused
    assert (status, review["reason"]) == (401, "Unauthorized")
