"""Where a tool reads the cluster from, once per command: ``--from FILE`` (a dump, ``-``
for stdin) or ``--kubeconfig``/``--context`` (default ``$KUBECONFIG`` or
``~/.kube/config``), read-only either way; the clock its ages are judged on (``--now``, a
dump's time, or the real one) and its progress line. Shared by ``kubegc doctor | plan |
tree | why`` (commands.py) and ``kubegc ui`` (ui/command.py).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from kubegc.api.clock import Clock, ManualClock, RealClock
from kubegc.api.interning import intern_common
from kubegc.client.dump import DumpClient, Prepare
from kubegc.client.interface import Client
from kubegc.client.kubeconfig import KubeconfigError, load_kubeconfig
from kubegc.client.rest import RestClient
from kubegc.tools.inventory import Inventory, read_inventory
from kubegc.tools.progress import Progress


class ToolError(Exception):
    """A failure to report on stderr (exit code 1)."""


@dataclass
class Session:
    """One command's connection, clock, namespace default and progress line. Without
    ``--now``, ages are judged on the cluster's clock when it is ahead of ours
    (``read_inventory``'s ``follow_cluster_clock``)."""

    client: Client
    source: str
    clock: Clock
    default_namespace: str
    progress: Progress
    follow_cluster_clock: bool = True
    #: the inventories read, held as long as the session (``commands.run``'s ``keep``)
    read: list[Inventory] = field(default_factory=list)

    async def inventory(self, namespace: str = "") -> Inventory:
        try:
            inv = await read_inventory(self.client, clock=self.clock, namespace=namespace,
                                       source=self.source, progress=self.progress,
                                       follow_cluster_clock=self.follow_cluster_clock)
        finally:
            self.progress.done()
        self.read.append(inv)
        return inv

    async def close(self) -> None:
        if isinstance(self.client, RestClient):
            await self.client.close()


def _one_line(error: Exception) -> str:
    """An error's message on one line (a YAML parser's spans several, with a caret)."""
    return " ".join(str(error).replace("^", "").split())


def open_session(args: argparse.Namespace, stderr: TextIO, *,
                 prepare: Prepare = intern_common) -> Session:
    """``prepare``: what is kept of each object of a dump (``client.dump.Prepare``)."""
    progress = Progress(stderr)
    if args.from_file:
        if args.from_file == "-":
            try:
                client = DumpClient.from_text(sys.stdin.read(), source="stdin",
                                              prepare=prepare)
            except ValueError as e:
                raise ToolError(f"cannot read dump from stdin: {_one_line(e)}") from e
            when = datetime.now(UTC)
        else:
            path = Path(args.from_file)
            try:
                client = DumpClient.from_file(path, prepare=prepare)
            except (OSError, ValueError) as e:
                raise ToolError(f"cannot read dump {path}: {_one_line(e)}") from e
            when = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        clock: Clock = ManualClock(args.now or when)
        return Session(client, f"dump {client.source}", clock, "default", progress,
                       follow_cluster_clock=not args.now)
    try:
        config = load_kubeconfig(args.kubeconfig, args.context)
    except (OSError, KubeconfigError) as e:
        raise ToolError(f"cannot load kubeconfig: {e}") from e
    clock = ManualClock(args.now) if args.now else RealClock()
    return Session(RestClient(config), f"context {config.context} ({config.server})", clock,
                   config.namespace, progress, follow_cluster_clock=not args.now)
