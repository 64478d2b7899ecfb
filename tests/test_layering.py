"""The layering of docs/architecture.md, checked mechanically (import-linter contracts in
pyproject.toml): layers import downward only; components and tools speak only through the
client protocol; controller packages are independent of each other; no package has an
import cycle."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "contracts"]


def test_import_contracts_hold() -> None:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports (import-linter) is not installed: pip install -e '.[dev]'")
    proc = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken." in proc.stdout


def _cycles(graph: grimp.ImportGraph, package: str) -> list[list[str]]:
    """The import cycles among ``package``'s children (each child with its descendants)."""
    children = sorted(graph.find_children(package))
    edges = {a: [b for b in children if a != b and graph.direct_import_exists(
        importer=a, imported=b, as_packages=True)] for a in children}
    cycles, done = [], set()
    for start in children:
        stack, on_path = [(start, iter(edges[start]))], [start]
        while stack:
            node, successors = stack[-1]
            for succ in successors:
                if succ in on_path:
                    cycles.append([*on_path[on_path.index(succ):], succ])
                elif succ not in done:
                    stack.append((succ, iter(edges[succ])))
                    on_path.append(succ)
                    break
            else:
                stack.pop()
                on_path.pop()
                done.add(node)
    return cycles


def test_no_package_has_an_import_cycle() -> None:
    graph = grimp.build_graph("kubegc")
    packages = sorted(m for m in graph.modules if graph.find_children(m))
    found = {p: c for p in packages if (c := _cycles(graph, p))}
    assert found == {}


def test_every_controller_package_is_in_the_independence_contract() -> None:
    graph = grimp.build_graph("kubegc")
    packages = {m for m in graph.find_children("kubegc.controllers") if graph.find_children(m)}
    [independence] = [c for c in CONTRACTS if c["type"] == "independence"]
    assert set(independence["modules"]) == packages
