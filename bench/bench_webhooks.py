"""Issue 23's cost of an admission webhook on the request path: POSTs of ConfigMaps to one
``kubegc serve --storage memory`` (pinned to CPU 0) with no webhook, then with one
ValidatingWebhookConfiguration whose webhook allows everything (an aiohttp HTTPS server on
loopback, its own process pinned to CPU 1, a certificate of its own CA in ``caBundle``),
the same requests, the same run; then DELETEs of those ConfigMaps with the webhook also on
DELETE. Prints requests/s with and without, and the ratio.

The load is an aiohttp client (CPU 1, ``--connections`` concurrent requests for
``--duration`` seconds each). Every request with the webhook is one more HTTPS round trip
from the server (kube-apiserver's cost too: on a real cluster a webhook doubles a write's
latency at least).

Usage: python bench/bench_webhooks.py [--quick] [--duration 5] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import datetime
import ipaddress
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp
from _common import child_env, free_port, header, pinned, stop_processes, wait_ready

HERE = Path(__file__).resolve()
SERVER_CPU, CLIENT_CPU = 0, 1
NS = "bench"


def _pki(directory: Path) -> str:
    """A CA and a certificate for 127.0.0.1 in ``directory``; the CA's base64 PEM."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)

    def cert(subject: str, key: Any, issuer: str, issuer_key: Any, ca: bool) -> Any:
        builder = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
                   .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None),
                                  critical=True))
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(issuer_key, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = cert("bench-ca", ca_key, "bench-ca", ca_key, True)
    leaf = cert("webhook", key, "bench-ca", ca_key, False)
    (directory / "tls.crt").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (directory / "tls.key").write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    return base64.b64encode(ca.public_bytes(serialization.Encoding.PEM)).decode()


def serve_webhook(port: int, directory: str) -> None:
    """The allowing webhook (``--serve-webhook``): aiohttp over TLS."""
    import ssl

    from aiohttp import web

    async def review(request: web.Request) -> web.Response:
        body = await request.json()
        return web.json_response({"apiVersion": "admission.k8s.io/v1",
                                  "kind": "AdmissionReview",
                                  "response": {"uid": body["request"]["uid"], "allowed": True}})

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(Path(directory, "tls.crt"), Path(directory, "tls.key"))
    app = web.Application()
    app.router.add_post("/allow", review)
    app.router.add_get("/healthz", healthz)
    web.run_app(app, host="127.0.0.1", port=port, ssl_context=ctx, print=None,
                access_log=None)


async def _load(url: str, duration: float, connections: int, *, method: str,
                names: list[str], prefix: str) -> float:
    """Requests/s of ``connections`` concurrent workers for ``duration`` seconds; POSTs
    create ConfigMaps named ``prefix-<i>`` (appended to ``names``), DELETEs take from it."""
    done = 0
    deadline = time.monotonic() + duration
    counter = iter(range(10**9))
    pending = list(names) if method == "DELETE" else []

    async def worker(session: aiohttp.ClientSession) -> None:
        nonlocal done
        while time.monotonic() < deadline:
            if method == "POST":
                name = f"{prefix}-{next(counter)}"
                async with session.post(f"{url}/api/v1/namespaces/{NS}/configmaps", json={
                        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
                        "data": {"k": "v"}}) as resp:
                    await resp.read()
                    if resp.status != 201:
                        raise SystemExit(f"POST {resp.status}: {await resp.text()}")
                names.append(name)
            else:
                if not pending:
                    return
                name = pending.pop()
                async with session.delete(
                        f"{url}/api/v1/namespaces/{NS}/configmaps/{name}") as resp:
                    await resp.read()
                    if resp.status != 200:
                        raise SystemExit(f"DELETE {resp.status}: {await resp.text()}")
            done += 1

    start = time.monotonic()
    connector = aiohttp.TCPConnector(limit=connections)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*(worker(session) for _ in range(connections)))
    return done / (time.monotonic() - start)


async def _webhook_ready(url: str, proc: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit("the webhook server exited")
            try:
                async with session.get(url, ssl=False) as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
    raise SystemExit(f"{url}: the webhook server is not ready after {timeout} s")


async def _kubectl_apply(url: str, obj: dict[str, Any], path: str) -> None:
    async with aiohttp.ClientSession() as session, session.post(url + path, json=obj) as resp:
        if resp.status not in (200, 201):
            raise SystemExit(f"create {path}: {resp.status} {await resp.text()}")


async def _settle(url: str) -> None:
    async with aiohttp.ClientSession() as session, session.get(
            url + "/debug/kubegc/settle?timeout=30") as resp:
        await resp.read()


def measure(url: str, webhook: str, ca_bundle: str, duration: float, connections: int
            ) -> dict[str, float]:
    async def run() -> dict[str, float]:
        await _kubectl_apply(url, {"metadata": {"name": NS}}, "/api/v1/namespaces")
        plain: list[str] = []
        hooked: list[str] = []
        out = {"create": await _load(url, duration, connections, method="POST", names=plain,
                                     prefix="plain")}
        out["delete"] = await _load(url, duration, connections, method="DELETE",
                                    names=plain, prefix="plain")
        await _kubectl_apply(url, {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "allow"},
            "webhooks": [{"name": "allow.bench.kubegc", "sideEffects": "None",
                          "admissionReviewVersions": ["v1"],
                          "clientConfig": {"url": webhook, "caBundle": ca_bundle},
                          "rules": [{"operations": ["CREATE", "DELETE"], "apiGroups": [""],
                                     "apiVersions": ["v1"], "resources": ["configmaps"]}]}],
        }, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations")
        await _settle(url)
        out["create, webhook"] = await _load(url, duration, connections, method="POST",
                                             names=hooked, prefix="hooked")
        out["delete, webhook"] = await _load(url, duration, connections, method="DELETE",
                                             names=hooked, prefix="hooked")
        return out

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--duration", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--serve-webhook", nargs=2, metavar=("PORT", "DIR"))
    args = parser.parse_args()
    if args.serve_webhook:
        serve_webhook(int(args.serve_webhook[0]), args.serve_webhook[1])
        return
    duration = 2.0 if args.quick else args.duration
    header("bench_webhooks: one allowing admission webhook on the path vs none",
           f"{args.connections} connections, {duration:g} s per measure")
    tmp = tempfile.TemporaryDirectory(prefix="bench-webhooks-")
    directory = Path(tmp.name)
    ca_bundle = _pki(directory)
    server_port, hook_port = free_port(), free_port()
    log = directory / "serve.log"
    with log.open("wb") as out:
        server = subprocess.Popen(pinned(SERVER_CPU, [
            sys.executable, "-m", "kubegc.cli", "serve", "--storage", "memory",
            "--insecure-http", "--controllers", "", "--host", "127.0.0.1", "--port",
            str(server_port), "--data-dir", str(directory / "data")]),
            stdout=out, stderr=subprocess.STDOUT, env=child_env())
        hook = subprocess.Popen(pinned(CLIENT_CPU, [
            sys.executable, str(HERE), "--serve-webhook", str(hook_port), str(directory)]),
            stdout=out, stderr=subprocess.STDOUT, env=child_env())
    url = f"http://127.0.0.1:{server_port}"
    try:
        asyncio.run(wait_ready(url, server, log, path="/version"))
        asyncio.run(_webhook_ready(f"https://127.0.0.1:{hook_port}/healthz", hook))
        rates = measure(url, f"https://127.0.0.1:{hook_port}/allow", ca_bundle, duration,
                        args.connections)
    finally:
        stop_processes([server, hook])
        tmp.cleanup()
    for verb in ("create", "delete"):
        plain, hooked = rates[verb], rates[f"{verb}, webhook"]
        print(f"  {verb:<7} no webhook {plain:8.0f}/s   one allowing webhook {hooked:8.0f}/s"
              f"   ratio {hooked / plain:.2f}")
    print(json.dumps({k: round(v) for k, v in rates.items()}))


if __name__ == "__main__":
    main()
