"""The page's answers as blocks (cause, blocking chain, the one action, the evidence
folded) and the timeline of a deletion, in headless Chromium against a real
``kubegc serve``; the copied action is run with the real kubectl."""

from __future__ import annotations

import shlex
from typing import Any

import pytest

from ..conftest import Server, eventually
from .conftest import find, login_url, new_page, open_page, wait_for, wait_text
from .test_page import HOLD, apply, configmap, ref

pytestmark = pytest.mark.kubectl


def steps(page: Any) -> list[str]:
    """The timeline's steps, oldest first (``data-step`` of each item)."""
    found: list[str] = page.eval_on_selector_all(
        "#details ol.timeline li", "items => items.map(li => li.dataset.step)")
    return found


def timeline_has(page: Any, *wanted: str) -> list[str]:
    return eventually(lambda: (lambda s: s if set(wanted) <= set(s) else None)(steps(page)),
                      what=f"timeline steps {wanted}")


def test_a_stuck_foreground_deletion_as_blocks_and_its_copied_fix(
        server: Server, ns: str, browser: Any) -> None:
    apply(server, configmap("boss", ns))
    apply(server, configmap("leaf", ns, ref(server, "boss", ns), finalizers=(HOLD,)))
    page = new_page(browser)
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    try:
        open_page(page, login_url(server), ns)
        server.kubectl("delete", "configmap", "boss", "-n", ns, "--cascade=foreground",
                       "--wait=false")
        eventually(lambda: server.kubectl("get", "cm", "leaf", "-n", ns, "-o",
                                          "jsonpath={.metadata.deletionTimestamp}").stdout)
        find(page, "configmap/boss")
        wait_for(page, "return document.querySelector('#details [data-command]')")
        finding = "#details section.finding"
        blocks = page.eval_on_selector_all(f"{finding} > .block",
                                           "bs => bs.map(b => b.dataset.block)")
        assert blocks[:3] == ["cause", "chain", "action"], blocks
        cause = page.inner_text(f"{finding} .block.cause")
        assert HOLD in cause and "leaf" in cause, cause
        chain = page.inner_text(f"{finding} .block.chain")
        assert "ConfigMap/boss ← ConfigMap/leaf" in chain, chain
        assert f"its own finalizer {HOLD} is still there" in chain, chain
        # the evidence is folded: there, but not shown until opened
        evidence = f"{finding} > details.evidence"
        assert page.eval_on_selector(evidence, "d => d.open") is False
        assert not page.is_visible(f"{evidence} pre")
        page.click(f"{evidence} > summary")
        assert page.is_visible(f"{evidence} pre")
        # the panel follows the object: redrawn on its next change, the fold stays open
        page.eval_on_selector(evidence, "d => { d.dataset.before = '1'; }")
        server.kubectl("annotate", "cm", "boss", "-n", ns, "seen=yes")
        wait_for(page, "const d = document.querySelector(arg); "
                       "return d && d.dataset.before !== '1'", evidence)
        assert page.eval_on_selector(evidence, "d => d.open") is True
        # the one action: a command, copied by its button
        command = page.get_attribute(f"{finding} .block.action [data-command]", "data-command")
        assert command and command.startswith("kubectl ") and "leaf" in command, command
        page.click(f"{finding} .block.action button.copy")
        wait_text(page, f"{finding} .block.action button.copy", lambda t: t == "copied")
        assert page.evaluate("() => navigator.clipboard.readText()") == command
        # running what was copied ends the deletion
        args = shlex.split(command)
        assert args[0] == "kubectl"
        server.kubectl(*args[1:])
        eventually(lambda: server.kubectl("get", "cm", "boss", "-n", ns,
                                          check=False).returncode != 0)
        wait_for(page, "return document.querySelector('#details').innerText"
                       ".includes('gone from the cluster')")
        order = timeline_has(page, "requested", "dependent deleted", "dependents gone", "gone")
        assert order.index("requested") < order.index("dependent deleted") \
            < order.index("dependents gone") < order.index("gone"), order
        assert page.js_errors == []
    finally:
        server.kubectl("patch", "cm", "leaf", "-n", ns, "--type=merge", "-p",
                       '{"metadata":{"finalizers":null}}', check=False)
        page.context.close()


def test_a_finished_deletion_timeline(server: Server, ns: str, browser: Any) -> None:
    """An owner held by its own finalizer, deleted in the background: requested, then its
    finalizer removed, then it goes, then the garbage collector deletes its dependent."""
    apply(server, configmap("boss", ns, finalizers=(HOLD,)))
    apply(server, configmap("kid", ns, ref(server, "boss", ns, block=False)))
    page = new_page(browser)
    try:
        open_page(page, login_url(server), ns)
        find(page, "configmap/kid")
        find(page, "configmap/boss")
        server.kubectl("delete", "configmap", "boss", "-n", ns, "--wait=false")
        timeline_has(page, "requested")
        server.kubectl("patch", "cm", "boss", "-n", ns, "--type=merge", "-p",
                       '{"metadata":{"finalizers":null}}')
        eventually(lambda: server.kubectl("get", "cm", "kid", "-n", ns,
                                          check=False).returncode != 0)
        order = timeline_has(page, "requested", "finalizer removed", "gone",
                             "dependent deleted", "dependents gone")
        assert order == ["requested", "finalizer removed", "gone", "dependent deleted",
                         "dependents gone"], order
        text = page.inner_text("#details ol.timeline")
        assert f"finalizer {HOLD} removed" in text and "ConfigMap/kid" in text, text
        assert "deleted by the garbage collector" in text, text
        assert page.js_errors == []
    finally:
        page.context.close()
