"""YAML loading that stops at a nesting depth, as the scanner reads it.

PyYAML's scanner slows down faster than quadratically with nesting (each token revisits the
possible simple keys of every open level): 1,500 nested ``[`` take ~11 s, 5,000 ~40 s,
before any walk of the result could refuse them. ``DepthLimitedLoader`` stops as soon as a
flow collection or a block indentation opens past ``SCAN_LIMIT`` levels with ``TooDeep``,
a ``RecursionError``, so that callers answer it as they answer Python's own (Go's "exceeded
max depth"); the exact bound (``api.limits.MAX_NESTING``) is checked on the loaded value.
May import: stdlib, yaml, ``kubegc.api``.
"""

from __future__ import annotations

from typing import Any

import yaml

from kubegc.api.limits import MAX_NESTING

#: past any body ``MAX_NESTING`` admits (flow and block levels are counted apart), and
#: still cheap for the scanner (~0.1 s at 400 levels)
SCAN_LIMIT = 2 * MAX_NESTING


class TooDeep(RecursionError):
    """A YAML document opened more than ``SCAN_LIMIT`` levels."""


class DepthLimitedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a document once it nests past ``SCAN_LIMIT``."""

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        if self.flow_level >= SCAN_LIMIT:
            raise TooDeep("YAML flow collections nested too deeply")
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        if len(self.indents) >= SCAN_LIMIT:
            raise TooDeep("YAML blocks nested too deeply")
        return bool(super().add_indent(column))


def safe_load(body: bytes | str) -> Any:
    """``yaml.safe_load`` with the depth limit (raises ``TooDeep``)."""
    return yaml.load(body, Loader=DepthLimitedLoader)
