"""The controllers ``kubegc serve`` knows, by the names ``--controllers`` uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from kubegc.controllers.gc_controller import GarbageCollectorController

if TYPE_CHECKING:
    from kubegc.controllers.manager import Controller, ControllerManager

Factory = Callable[["ControllerManager"], "Controller"]

CONTROLLERS: dict[str, Factory] = {
    "garbagecollector": GarbageCollectorController,
}
