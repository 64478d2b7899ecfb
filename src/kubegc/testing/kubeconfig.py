"""Make a test cluster's kubeconfig the one every client of the process finds by default.

Clients look for their kubeconfig at different times: kubectl, kr8s, lightkube and kopf's
own ``login_with_kubeconfig`` read ``$KUBECONFIG`` when they connect, but the official
``kubernetes`` client and ``kubernetes_asyncio`` read it once, when they are imported, into
``kube_config.KUBE_CONFIG_DEFAULT_LOCATION`` (what ``load_kube_config()`` without a path
loads — kopf's default login calls exactly that). A test module that imports ``kubernetes``
before its fixture starts a cluster (every kopf operator does) would otherwise load
``~/.kube/config``, or fail with "neither in-cluster, nor via kubeconfig".
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

#: the modules of the client libraries that read ``$KUBECONFIG`` at import
IMPORT_TIME_READERS = ("kubernetes.config.kube_config", "kubernetes.config",
                       "kubernetes_asyncio.config.kube_config", "kubernetes_asyncio.config")
_ATTRIBUTE = "KUBE_CONFIG_DEFAULT_LOCATION"
#: what those libraries fall back to without ``$KUBECONFIG``
_HOME_KUBECONFIG = "~/.kube/config"


def _loaded_readers() -> list[object]:
    return [m for name in IMPORT_TIME_READERS
            if (m := sys.modules.get(name)) is not None and hasattr(m, _ATTRIBUTE)]


@contextlib.contextmanager
def default_kubeconfig(path: Path | str) -> Iterator[None]:
    """Until exit, ``path`` is ``$KUBECONFIG`` and the default kubeconfig of the client
    libraries already imported; on exit both are put back (a library imported meanwhile
    gets what its import would have read)."""
    before_env = os.environ.get("KUBECONFIG")
    before = {id(m): (m, getattr(m, _ATTRIBUTE)) for m in _loaded_readers()}
    os.environ["KUBECONFIG"] = str(path)
    for module, _ in before.values():
        setattr(module, _ATTRIBUTE, str(path))
    try:
        yield
    finally:
        if before_env is None:
            os.environ.pop("KUBECONFIG", None)
        else:
            os.environ["KUBECONFIG"] = before_env
        for module in _loaded_readers():
            value = before.get(id(module), (module, before_env or _HOME_KUBECONFIG))[1]
            setattr(module, _ATTRIBUTE, value)
