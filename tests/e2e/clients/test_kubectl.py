"""The deletion story with every kubectl on the machine (1.27–1.33): ``create -f``,
``get -l`` and ``get -w --output-watch-events``, ``patch --type json|merge|strategic``,
``apply --server-side``, ``delete --cascade=background|foreground|orphan`` and
``wait --for=delete``. The versions run concurrently, each in its own namespace, against
this module's one server."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Server
from ..test_kubectl_versions import VERSIONS
from .adapters import Event, ThreadWatch
from .story import Kind, Obj, PatchType, Story

pytestmark = [pytest.mark.kubectl,
              pytest.mark.skipif(not VERSIONS, reason="no versioned kubectl binaries found")]


class KubectlDriver:
    def __init__(self, server: Server, binary: str, namespace: str, cache_dir: Path) -> None:
        self.server = server
        self.binary = binary
        self.namespace = namespace
        self.cache_dir = cache_dir

    def kubectl(self, *args: str, kind: Kind | None = None, input: str | None = None,
                timeout: float = 60) -> str:
        ns = ["-n", self.namespace] if kind is None or kind.namespaced else []
        return self.server.kubectl("--cache-dir", str(self.cache_dir), *ns, *args,
                                   binary=self.binary, input=input, timeout=timeout).stdout

    def create(self, obj: Obj) -> Obj:
        return _json(self.kubectl("create", "-f", "-", "-o", "json", kind=_kind(obj),
                                  input=json.dumps(obj)))

    def get(self, kind: Kind, name: str) -> Obj | None:
        out = self.kubectl("get", _resource(kind), name, "-o", "json", "--ignore-not-found",
                           kind=kind)
        return _json(out) if out.strip() else None

    def list(self, kind: Kind, *, label_selector: str) -> list[Obj]:
        items: list[Obj] = _json(self.kubectl("get", _resource(kind), "-l", label_selector,
                                              "-o", "json", kind=kind))["items"]
        return items

    def patch(self, kind: Kind, name: str, patch: Any, patch_type: PatchType) -> Obj:
        return _json(self.kubectl("patch", _resource(kind), name, "--type", patch_type.value,
                                  "-p", json.dumps(patch), "-o", "json", kind=kind))

    def apply(self, obj: Obj, *, field_manager: str) -> Obj:
        return _json(self.kubectl("apply", "--server-side", "--force-conflicts",
                                  f"--field-manager={field_manager}", "-f", "-", "-o", "json",
                                  kind=_kind(obj), input=json.dumps(obj)))

    def delete(self, kind: Kind, name: str, *, propagation_policy: str) -> None:
        out = self.kubectl("delete", _resource(kind), name,
                           f"--cascade={propagation_policy.lower()}", "--wait=false", kind=kind)
        assert f'"{name}" deleted' in out

    def wait_deleted(self, kind: Kind, name: str, *, timeout: float) -> None:
        self.kubectl("wait", "--for=delete", f"{_resource(kind)}/{name}",
                     f"--timeout={int(timeout)}s", kind=kind, timeout=timeout + 30)

    def watch(self, kind: Kind, *, label_selector: str) -> ThreadWatch:
        cmd = [self.binary, "--kubeconfig", str(self.server.kubeconfig), "--cache-dir",
               str(self.cache_dir), "-n", self.namespace, "get", _resource(kind), "-l",
               label_selector, "--watch", "--output-watch-events", "-o", "json"]
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                text=True)
        return ThreadWatch(_watch_events(proc), close=proc.kill)


def _watch_events(proc: subprocess.Popen[str]) -> Iterator[Event]:
    """``kubectl get -w --output-watch-events -o json`` prints one JSON document per event
    (on one line or indented over several, depending on the version)."""
    assert proc.stdout is not None
    decoder, buffer = json.JSONDecoder(), ""
    try:
        for line in proc.stdout:
            buffer += line
            try:
                event, _ = decoder.raw_decode(buffer.strip())
            except json.JSONDecodeError:
                continue
            buffer = ""
            yield event["type"], event["object"]
    finally:
        proc.kill()
        proc.wait()


def _resource(kind: Kind) -> str:
    return f"{kind.plural}.{kind.group}" if kind.group else kind.plural


def _kind(obj: Obj) -> Kind:
    from .story import KINDS

    return KINDS[obj["kind"]]


def _json(text: str) -> Any:
    return json.loads(text)


@pytest.fixture(scope="module")
def outcomes(server: Server, tmp_path_factory: pytest.TempPathFactory
             ) -> dict[str, BaseException | None]:
    """Every version's story, run side by side once for the module (a kubectl run is
    mostly process start-up: together the seven stories take little more than one)."""
    cache = tmp_path_factory.mktemp("kubectl-cache")

    def story(version: str, binary: str) -> BaseException | None:
        namespace = f"story-kubectl-{version.replace('.', '-')}"
        try:
            Story(KubectlDriver(server, binary, namespace, cache / version)).run()
        except BaseException as e:
            return e
        return None

    with ThreadPoolExecutor(len(VERSIONS)) as pool:
        futures = {v: pool.submit(story, v, binary) for v, binary in VERSIONS}
        return {v: f.result() for v, f in futures.items()}


@pytest.mark.parametrize("version", [v for v, _ in VERSIONS])
def test_deletion_story(outcomes: dict[str, BaseException | None], version: str) -> None:
    error = outcomes[version]
    if error is not None:
        raise error
