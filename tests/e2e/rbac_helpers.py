"""A ``kubegc serve`` with users from a ``--token-auth-file``, and the ways the RBAC tests
talk to it as one of them: the real kubectl (``--token``), raw HTTP, the official client."""

from __future__ import annotations

import json
import subprocess
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import Server, start_server, stop_server

#: user -> (token, groups); every one is also in system:authenticated
USERS = {
    "alice": ("alice-token", ()),
    "bob": ("bob-token", ("devs",)),
    "carol": ("carol-token", ()),
    "dave": ("dave-token", ("escalators",)),
    "erin": ("erin-token", ()),
    "frank": ("frank-token", ()),
}


def token_file(directory: Path) -> Path:
    path = directory / "tokens.csv"
    lines = []
    for name, (token, groups) in USERS.items():
        line = f"{token},{name},uid-{name}"
        if groups:
            line += ',"' + ",".join(groups) + '"'
        lines.append(line)
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass
class RBACServer:
    """The server, and calls made as one of its users (``None``: anonymous, "" the admin)."""

    server: Server

    def kubectl(self, user: str, *args: str, check: bool = True,
                input: str | None = None) -> subprocess.CompletedProcess[str]:
        """kubectl as ``user`` ("": the admin of the kubeconfig)."""
        extra = ("--token", USERS[user][0]) if user else ()
        return self.server.kubectl(*extra, *args, check=check, input=input)

    def http(self, user: str | None, method: str, path: str, body: Any = None, *,
             content_type: str = "application/json") -> tuple[int, Any]:
        """(status, decoded JSON body or text) of a request as ``user`` (None: anonymous,
        "": the admin)."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server.url + path, data=data, method=method)
        req.add_header("Content-Type", content_type)
        token = self.server.token if user == "" else USERS[user][0] if user else None
        if token:
            req.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(req, context=self.server._ssl(), timeout=30) as resp:
                raw, status = resp.read(), resp.status
        except urllib.error.HTTPError as e:
            raw, status = e.read(), e.code
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, raw.decode()

    def apply(self, manifest: dict[str, Any] | list[dict[str, Any]]) -> None:
        """Create objects as the admin."""
        items = manifest if isinstance(manifest, list) else [manifest]
        self.kubectl("", "apply", "-f", "-", input=json.dumps(
            {"apiVersion": "v1", "kind": "List", "items": items}))

    def namespace(self) -> str:
        name = f"r-{uuid.uuid4().hex[:8]}"
        self.kubectl("", "create", "namespace", name)
        return name


def role(namespace: str, name: str, *rules: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": namespace}, "rules": list(rules)}


def cluster_role(name: str, *rules: dict[str, Any], labels: dict[str, str] | None = None
                 ) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": meta, "rules": list(rules)}


def binding(namespace: str, name: str, role_kind: str, role_name: str,
            *subjects: dict[str, str]) -> dict[str, Any]:
    kind = "RoleBinding" if namespace else "ClusterRoleBinding"
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind,
                        "name": role_name},
            "subjects": list(subjects)}


def user(name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}


def rule(verbs: str, groups: str, resources: str, names: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"verbs": verbs.split(), "apiGroups": [
        "" if g == '""' else g for g in groups.split()] or [""],
                           "resources": resources.split()}
    if names:
        out["resourceNames"] = names.split()
    return out


def rbac_server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RBACServer]:
    directory = tmp_path_factory.mktemp("kubegc-rbac")
    server = start_server(directory, "--token-auth-file", str(token_file(directory)))
    yield RBACServer(server)
    stop_server(server)
