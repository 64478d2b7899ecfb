"""The storage endpoint: the one grammar of ``kubegc serve --storage``, ``open_kv`` and
``kubegc.testing.Cluster(storage=...)``, parsed once into a ``StorageEndpoint`` (as kine
parses its ``--endpoint`` once, ``ParseStorageEndpoint`` in pkg/endpoint/endpoint.go)::

    sqlite                            the store of the data directory (``kubegc.db``)
    memory                            nothing persists (also ``memory://``)
    sqlite://FILE[?synchronous=MODE]  a SQLite file: ``sqlite:///abs/kubegc.db``, or
                                      ``sqlite://rel.db`` relative to the working directory;
                                      MODE is FULL (the default), NORMAL or EXTRA
    etcd://HOST[:PORT][/PREFIX]       etcd (port 2379 by default); keys are stored under
                                      ``/PREFIX``, so several clusters can share one etcd

Anything else, a bare file path included, is refused with ``StorageEndpointError`` (a
``ValueError``) saying what is accepted: ``--storage bogus`` must not create ``./bogus``.
``str()`` of an endpoint is its canonical form, which parses back to the same endpoint.
May import: the standard library, ``kubegc.storage.data_dir`` and the SQLite schema's
modes (no backend).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from kubegc.storage.data_dir import DataDir
from kubegc.storage.sqlite_schema import SYNCHRONOUS_MODES

#: What ``--storage`` accepts, as every refusal lists it (README's ``--storage`` row)
STORAGE_FORMS = "sqlite (in --data-dir), memory, etcd://HOST:PORT[/PREFIX] or sqlite:///FILE"
ETCD_DEFAULT_PORT = 2379

_SQLITE_FORM = ("expected sqlite:///FILE[?synchronous=FULL|NORMAL|EXTRA], "
                "e.g. sqlite:///var/lib/kubegc/kubegc.db")
_ETCD_FORM = "expected etcd://HOST:PORT[/PREFIX], e.g. etcd://127.0.0.1:2379"


class StorageEndpointError(ValueError):
    """A storage endpoint that is not one (the message says what is accepted)."""


class StorageKind(enum.Enum):
    MEMORY = "memory"
    SQLITE = "sqlite"
    ETCD = "etcd"


@dataclass(frozen=True, slots=True)
class StorageEndpoint:
    """One parsed storage endpoint (``parse_storage``); ``str()`` prints it back."""

    kind: StorageKind
    #: sqlite: the database file; None: the data directory's (``in_data_dir``)
    path: Path | None = None
    #: sqlite: ``?synchronous=`` (upper case); None: the opener's default
    synchronous: str | None = None
    #: etcd: a member's host and client port
    host: str = ""
    port: int = ETCD_DEFAULT_PORT
    #: etcd: every key is stored under it ("" or ``/PREFIX``, no trailing slash)
    prefix: str = ""

    @property
    def etcd_url(self) -> str:
        """etcd: the member's client URL (``http://HOST:PORT``)."""
        return f"http://{self._address}"

    @property
    def _address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 address
        return f"{host}:{self.port}"

    @property
    def durable(self) -> bool:
        """What is written outlives the process."""
        return self.kind is not StorageKind.MEMORY

    def in_data_dir(self, data_dir: Path | None) -> StorageEndpoint:
        """This endpoint with ``sqlite`` resolved to the absolute path of ``data_dir``'s
        store; without a data directory, ``sqlite`` keeps nothing (``memory``), as
        ``kubegc.testing.Cluster(storage="sqlite")`` without a ``data_dir`` does."""
        if self.kind is not StorageKind.SQLITE or self.path is not None:
            return self
        if data_dir is None:
            return MEMORY
        return replace(self, path=DataDir(data_dir.resolve()).store)

    def __str__(self) -> str:
        if self.kind is StorageKind.MEMORY:
            return "memory"
        if self.kind is StorageKind.ETCD:
            return f"etcd://{self._address}{self.prefix}"
        if self.path is None:
            return "sqlite"
        query = f"?synchronous={self.synchronous}" if self.synchronous else ""
        return f"sqlite://{self.path}{query}"


MEMORY = StorageEndpoint(StorageKind.MEMORY)
#: ``sqlite``: the data directory's store (``kubegc serve``'s default)
DATA_DIR_SQLITE = StorageEndpoint(StorageKind.SQLITE)


def parse_storage(text: str) -> StorageEndpoint:
    """The endpoint ``text`` names (see the module docstring); ``StorageEndpointError``
    otherwise."""
    spec = text.strip()
    if spec in ("memory", "memory://"):
        return MEMORY
    if spec == "sqlite":
        return DATA_DIR_SQLITE
    if spec.startswith("sqlite://"):
        return _sqlite(text, spec.removeprefix("sqlite://"))
    if spec.startswith("etcd://"):
        return _etcd(text, spec)
    raise StorageEndpointError(f"{text!r} is not a storage: use {STORAGE_FORMS}")


def etcd_storage(client_url: str, prefix: str = "") -> StorageEndpoint:
    """The endpoint of the etcd member at ``client_url`` (``etcd_client_address``), its
    keys under ``prefix`` (``/PREFIX``)."""
    host, port = etcd_client_address(client_url)
    return parse_storage(f"{StorageEndpoint(StorageKind.ETCD, host=host, port=port)}{prefix}")


def etcd_client_address(url: str) -> tuple[str, int]:
    """``http://HOST:PORT`` or ``HOST:PORT`` (an etcd member's client URL, as
    ``--advertise-client-urls`` gives it) -> (host, port); the host defaults to
    127.0.0.1, the port to 2379. ``ValueError`` for another scheme (TLS: not supported)."""
    parts = urlsplit(url if "//" in url else f"//{url}")
    if parts.scheme not in ("", "http"):
        raise ValueError(f"unsupported etcd endpoint scheme: {url!r} (use http://)")
    return parts.hostname or "127.0.0.1", parts.port or ETCD_DEFAULT_PORT


def _sqlite(text: str, rest: str) -> StorageEndpoint:
    path, _, query = rest.partition("?")
    if not path:
        raise StorageEndpointError(f"{text!r}: {_SQLITE_FORM}")
    synchronous = None
    try:
        options = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        options = [("", "")]
    for name, value in options:
        if name != "synchronous" or value.upper() not in SYNCHRONOUS_MODES:
            raise StorageEndpointError(f"{text!r}: {_SQLITE_FORM}")
        synchronous = value.upper()
    return StorageEndpoint(StorageKind.SQLITE, path=Path(path), synchronous=synchronous)


def _etcd(text: str, spec: str) -> StorageEndpoint:
    try:
        parts = urlsplit(spec)
        port = parts.port
    except ValueError:  # a port that is not one
        raise StorageEndpointError(f"{text!r}: {_ETCD_FORM}") from None
    if (not parts.hostname or port == 0 or parts.username is not None or parts.query
            or parts.fragment):
        raise StorageEndpointError(f"{text!r}: {_ETCD_FORM}")
    return StorageEndpoint(StorageKind.ETCD, host=parts.hostname,
                           port=port or ETCD_DEFAULT_PORT, prefix=parts.path.rstrip("/"))
