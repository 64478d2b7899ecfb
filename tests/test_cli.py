"""``kubegc serve --loop``: which event loop runs the server."""

from __future__ import annotations

import asyncio
import sys

import pytest

from kubegc.cli import build_parser, run_loop


async def _loop_module() -> int:
    return 1 if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else 0


def test_asyncio_loop_when_asked_for() -> None:
    assert run_loop(_loop_module(), "asyncio") == 0


def test_uvloop_by_default_when_installed() -> None:
    pytest.importorskip("uvloop")
    assert build_parser().parse_args(["serve"]).loop == "auto"
    assert run_loop(_loop_module(), "auto") == 1
    assert run_loop(_loop_module(), "uvloop") == 1


def test_uvloop_asked_for_but_missing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import fails
    assert run_loop(_loop_module(), "auto") == 0
    with pytest.raises(SystemExit, match="uvloop is not installed"):
        run_loop(_loop_module(), "uvloop")
