"""Which custom resources are served (cf. apiextensions-apiserver's ``crdHandler`` and its
finalizer controller): a CRD written — by this server's CRD storage or, seen in the watch
cache, by another server — serves its custom resources (a storage built by
``custom_resource``), serves them anew when its names or schemas change, stops serving them
when it is gone, and while it is being deleted has its instances deleted
(``finalizer.finalize``).

Ownership: the registry's storage table and catalog are written only through the
``install`` / ``uninstall`` callables it is given; ``crds`` is written only here, on the
loop.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable

from kubegc.api import errors
from kubegc.api.meta import is_being_deleted
from kubegc.api.types import Obj
from kubegc.registry.generic.rest import Resource
from kubegc.registry.generic.standard import StorageContext
from kubegc.registry.generic.target import Target
from kubegc.registry.groups.apiextensions import custom_resource
from kubegc.registry.groups.apiextensions import finalizer as crd_finalizer
from kubegc.registry.groups.apiextensions.crd import resource_info_for, served_subresources

log = logging.getLogger(__name__)


class CRDHandler:
    def __init__(self, ctx: StorageContext, *, install: Callable[[Resource], None],
                 uninstall: Callable[[str, str], None],
                 served: Callable[[str, str], Resource | None],
                 crd_target: Callable[[], Target], changed: Callable[[], None]) -> None:
        """``install``/``uninstall``: serve or stop serving a resource; ``served``: what is
        served as (group, resource); ``crd_target``: the CRDs' own; ``changed``: called
        after the served resources changed."""
        self.ctx = ctx
        self.install, self.uninstall, self.served = install, uninstall, served
        self.crd_target = crd_target
        self.changed = changed
        #: every CRD as last written, by name
        self.crds: dict[str, Obj] = {}
        self._cleanups: dict[str, asyncio.Task[None]] = {}
        self._stopping = False

    def written(self, crd: Obj, removed: bool) -> None:
        """A CRD was written (``removed``: deleted)."""
        if removed:
            self._forget(crd)
        else:
            self._sync(crd)

    async def stop(self) -> None:
        self._stopping = True  # no cleanup starts, or goes round again, from now on
        tasks = list(self._cleanups.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._cleanups.clear()

    def _sync(self, crd: Obj) -> None:
        name = crd["metadata"]["name"]
        info = resource_info_for(crd)
        old = self.crds.get(name)
        self.crds[name] = crd
        if info is None:
            return
        served = self.served(info.group, info.resource)
        if served is None or served.info != info or (
                old is not None and served_subresources(old) != served_subresources(crd)):
            old_info = None if old is None else resource_info_for(old)
            if old_info is not None and (old_info.group, old_info.resource) != (
                    info.group, info.resource):
                self.uninstall(old_info.group, old_info.resource)
            self.install(custom_resource(self.ctx, crd, info,
                                         current=lambda: self.crds.get(name)))
            self.changed()
        if is_being_deleted(crd) and name not in self._cleanups and not self._stopping:
            # the apiserver's own work, not the request's that deleted the CRD: a new
            # context, so no request user (``api.auth.request_user``) is inherited
            self._cleanups[name] = asyncio.create_task(
                self._cleanup(crd), name=f"crd-{name}", context=contextvars.Context())

    def _forget(self, crd: Obj) -> None:
        self.crds.pop(crd["metadata"]["name"], None)
        info = resource_info_for(crd)
        if info is None:
            return
        served = self.served(info.group, info.resource)
        if served is not None and served.info.custom:
            self.uninstall(info.group, info.resource)
            self.changed()

    async def _cleanup(self, crd: Obj) -> None:
        """Finalize a deleted CRD: its instances, its Terminating condition and the cleanup
        finalizer."""
        name = crd["metadata"]["name"]
        info = resource_info_for(crd)
        custom = None if info is None else self.served(info.group, info.resource)
        try:
            result, removed = await crd_finalizer.finalize(
                self.ctx.store, self.ctx.cache, self.crd_target(), name, custom=custom,
                stopping=lambda: self._stopping)
            if not self._stopping:
                self.written(result, removed)
        except errors.StatusError as e:
            if not errors.is_not_found(e):
                log.warning("CRD %s cleanup failed: %s", name, e)
        finally:
            self._cleanups.pop(name, None)
