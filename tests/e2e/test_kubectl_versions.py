"""get / apply / delete with every kubectl version on the machine (1.27–1.33): discovery
negotiation differs (1.27–1.29 accept only aggregated v2beta1) and so does validation
(1.27/1.28 check fieldValidation support in OpenAPI v2, later versions in v3: both are
served, so every version runs with its default validation)."""

from __future__ import annotations

import glob
import json
import os
import re
from pathlib import Path

import pytest

from .conftest import KUBECTL, Server, write


def _versions() -> list[tuple[str, str]]:
    if KUBECTL is None:
        return []
    folder = os.path.dirname(os.path.realpath(KUBECTL))
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "kubectl.1.*"))):
        m = re.search(r"kubectl\.(1\.\d+)$", path)
        if m and 27 <= int(m.group(1).split(".")[1]) <= 33:
            found.append((m.group(1), path))
    return found


VERSIONS = _versions()

pytestmark = pytest.mark.skipif(not VERSIONS, reason="no versioned kubectl binaries found")


@pytest.mark.parametrize(("version", "binary"), VERSIONS, ids=[v for v, _ in VERSIONS])
def test_get_apply_delete(server: Server, ns: str, tmp_path: Path, version: str,
                          binary: str) -> None:
    cache = str(tmp_path / "cache")
    base = ["--cache-dir", cache, "-n", ns]
    manifest = write(tmp_path, "cm.yaml", "apiVersion: v1\nkind: ConfigMap\n"
                     "metadata: {name: c1}\ndata: {a: b}\n")
    out = server.kubectl("apply", "-f", manifest, *base, binary=binary).stdout
    assert "configmap/c1 created" in out
    out = server.kubectl("apply", "-f", manifest, *base, binary=binary).stdout
    assert "configmap/c1 unchanged" in out
    got = json.loads(server.kubectl("get", "cm", "c1", "-o", "json", *base,
                                    binary=binary).stdout)
    assert got["data"] == {"a": "b"}
    table = server.kubectl("get", "cm", *base, binary=binary).stdout
    assert table.split()[:3] == ["NAME", "DATA", "AGE"] and "c1" in table
    out = server.kubectl("delete", "cm", "c1", "--cascade=foreground", *base,
                         binary=binary).stdout
    assert 'configmap "c1" deleted' in out
    assert server.kubectl("get", "cm", "c1", *base, binary=binary, check=False).returncode == 1
