"""``kubegc ui``: the owner-graph page for any cluster or dump, on loopback, read-only.

    kubegc ui [--kubeconfig K] [--context C] [--from FILE] [--port P] [--open]

The first line of the output is the URL to open, with its one-time login token. The
cluster is read as the other tools read it (``session.open_session``); the HTTP server
and the what-if's simulation come from the composition root (``kubegc.cli``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import webbrowser
from collections.abc import Awaitable, Callable
from typing import Protocol, TextIO

import aiohttp

from kubegc.api.errors import StatusError
from kubegc.tools.flags import HelpFormatter, add_now, examples, port
from kubegc.tools.plan import SimulationFactory
from kubegc.tools.session import ToolError, open_session
from kubegc.tools.ui.app import PREFIX, UIApp

LOOPBACK = "127.0.0.1"


class Serving(Protocol):
    async def stop(self, timeout: float = 1.0) -> None: ...


#: (app, host, port) → the running HTTP server (``kubegc.ui_server.serve_ui``)
ServeFn = Callable[..., Awaitable[Serving]]


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("ui", help="a live owner-graph page for any cluster or dump "
                                  "(read-only, on loopback)",
                       formatter_class=HelpFormatter, epilog=examples(
                           "%(prog)s                       the current context's cluster",
                           "%(prog)s --context prod --open",
                           "%(prog)s --from dump.json --port 8080"),
                       description="Serve the owner-graph page (the one kubegc serve has at "
                                   "/ui/) for a cluster or a dump, on 127.0.0.1, read-only. "
                                   "The first line printed is the URL to open; its login "
                                   "token works once.")
    g = p.add_argument_group("where to read")
    g.add_argument("--kubeconfig", default=None, help="kubeconfig file (default $KUBECONFIG "
                   "or ~/.kube/config)")
    g.add_argument("--context", default=None, help="kubeconfig context (default: current)")
    g.add_argument("--from", dest="from_file", metavar="FILE", default=None,
                   help="show a dump (kubectl get -A -o json|yaml ...) instead of a cluster")
    add_now(g)
    p.add_argument("--port", type=port, default=0, help="port on 127.0.0.1 (default: any "
                                                        "free port)")
    p.add_argument("--open", action="store_true", help="open the page in a web browser")


async def run(args: argparse.Namespace, *, serve: ServeFn,
              plan_factory: SimulationFactory | None, stdout: TextIO | None = None,
              stderr: TextIO | None = None) -> int:
    out, err = stdout or sys.stdout, stderr or sys.stderr
    prog = f"{getattr(args, 'prog', 'kubegc')} ui"
    try:
        session = open_session(args, err)
    except ToolError as e:
        err.write(f"{prog}: {e}\n")
        return 1
    try:
        await session.client.discover()  # fail now, in one line, if it cannot be read
    except StatusError as e:
        await session.close()
        err.write(f"{prog}: Error from server ({e.reason}): {e.message}\n")
        return 1
    except (TimeoutError, aiohttp.ClientError, OSError) as e:
        await session.close()
        err.write(f"{prog}: cannot reach the cluster: {e}\n")
        return 1
    app = UIApp(session.client, clock=session.clock, source=session.source,
                plan_factory=plan_factory, follow_cluster_clock=session.follow_cluster_clock)
    try:
        http = await serve(app, host=LOOPBACK, port=args.port)
    except OSError as e:
        await session.close()
        err.write(f"{prog}: cannot serve on {LOOPBACK}:{args.port}: {e.strerror or e}\n")
        return 1
    url = app.login_url()
    out.write(f"{url}\n")
    out.write(f"kubegc ui: {session.source}, read-only, at {app.base_url}{PREFIX}/ (the URL "
              "above logs in once; Ctrl-C stops)\n")
    out.flush()
    if args.open:
        with contextlib.suppress(Exception):
            webbrowser.open(url)
    try:
        await _until_stopped()
    finally:
        await app.close()
        await http.stop()
        await session.close()
    return 0


async def _until_stopped() -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        # a loop without signal handlers (Windows): Ctrl-C raises KeyboardInterrupt instead
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
