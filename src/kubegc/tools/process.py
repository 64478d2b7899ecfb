"""A tool's own process (``kubegc doctor``, ``plan``, ... as a command, not in a caller's
test): what ``cli`` does differently there for ``kubegc doctor --from FILE``."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from typing import NoReturn


def reads_a_dump_file(args: argparse.Namespace) -> bool:
    """``kubegc doctor --from FILE``: a dump read in one go, then only read."""
    return args.command == "doctor" and bool(getattr(args, "from_file", None))


def exit_without_freeing(code: int) -> NoReturn:
    """Exit now, the output flushed, without freeing what the command read: a 1M-object
    dump is millions of containers, each freed one by one at the end of the command and of
    the interpreter (issue 27: the doctor on a 1M-object dump); the operating system takes
    the memory back at once."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more to say
            stream.flush()
    logging.shutdown()
    os._exit(code)
