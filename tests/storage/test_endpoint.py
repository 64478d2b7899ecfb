"""The storage endpoint's one grammar (``parse_storage``): every form it accepts, what it
means, how it prints; every form it refuses, and what the refusal says."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kubegc.storage import (
    StorageEndpoint,
    StorageEndpointError,
    StorageKind,
    etcd_storage,
    parse_storage,
    require_driver,
)
from kubegc.storage.endpoint import STORAGE_FORMS, etcd_client_address

MEMORY, SQLITE, ETCD = StorageKind.MEMORY, StorageKind.SQLITE, StorageKind.ETCD


@pytest.mark.parametrize(("text", "endpoint", "printed"), [
    pytest.param("memory", StorageEndpoint(MEMORY), "memory", id="memory"),
    pytest.param("memory://", StorageEndpoint(MEMORY), "memory", id="memory-url"),
    pytest.param(" memory\n", StorageEndpoint(MEMORY), "memory", id="blanks-around"),
    pytest.param("sqlite", StorageEndpoint(SQLITE), "sqlite", id="sqlite-in-the-data-dir"),
    pytest.param("sqlite:///var/lib/kubegc.db",
                 StorageEndpoint(SQLITE, path=Path("/var/lib/kubegc.db")),
                 "sqlite:///var/lib/kubegc.db", id="sqlite-absolute"),
    pytest.param("sqlite://data/kubegc.db", StorageEndpoint(SQLITE, path=Path("data/kubegc.db")),
                 "sqlite://data/kubegc.db", id="sqlite-relative"),
    pytest.param("sqlite:///k.db?synchronous=normal",
                 StorageEndpoint(SQLITE, path=Path("/k.db"), synchronous="NORMAL"),
                 "sqlite:///k.db?synchronous=NORMAL", id="sqlite-synchronous"),
    pytest.param("sqlite:///k.db?", StorageEndpoint(SQLITE, path=Path("/k.db")),
                 "sqlite:///k.db", id="sqlite-empty-query"),
    pytest.param("etcd://127.0.0.1:2379", StorageEndpoint(ETCD, host="127.0.0.1", port=2379),
                 "etcd://127.0.0.1:2379", id="etcd"),
    pytest.param("etcd://etcd.local", StorageEndpoint(ETCD, host="etcd.local", port=2379),
                 "etcd://etcd.local:2379", id="etcd-default-port"),
    pytest.param("etcd://10.1.2.3:2390/kubegc/one/",
                 StorageEndpoint(ETCD, host="10.1.2.3", port=2390, prefix="/kubegc/one"),
                 "etcd://10.1.2.3:2390/kubegc/one", id="etcd-prefix"),
    pytest.param("etcd://h:1/", StorageEndpoint(ETCD, host="h", port=1),
                 "etcd://h:1", id="etcd-root-prefix"),
    pytest.param("etcd://[::1]:2379/p", StorageEndpoint(ETCD, host="::1", port=2379, prefix="/p"),
                 "etcd://[::1]:2379/p", id="etcd-ipv6"),
])
def test_an_accepted_form(text: str, endpoint: StorageEndpoint, printed: str) -> None:
    assert parse_storage(text) == endpoint
    assert str(endpoint) == printed
    assert parse_storage(printed) == endpoint  # what is printed reads back the same


NOT_A_STORAGE = f"is not a storage: use {STORAGE_FORMS}"
SQLITE_FORM = ("expected sqlite:///FILE[?synchronous=FULL|NORMAL|EXTRA], "
               "e.g. sqlite:///var/lib/kubegc/kubegc.db")
ETCD_FORM = "expected etcd://HOST:PORT[/PREFIX], e.g. etcd://127.0.0.1:2379"


@pytest.mark.parametrize(("text", "message"), [
    pytest.param("", f"'' {NOT_A_STORAGE}", id="empty"),
    pytest.param("bogus", f"'bogus' {NOT_A_STORAGE}", id="a-word"),
    pytest.param("/var/lib/kubegc.db", f"'/var/lib/kubegc.db' {NOT_A_STORAGE}",
                 id="a-bare-path"),
    pytest.param("kubegc.db", f"'kubegc.db' {NOT_A_STORAGE}", id="a-bare-file-name"),
    pytest.param("redis://localhost", f"'redis://localhost' {NOT_A_STORAGE}",
                 id="another-scheme"),
    pytest.param("Memory", f"'Memory' {NOT_A_STORAGE}", id="capitalised"),
    pytest.param("memory://x", f"'memory://x' {NOT_A_STORAGE}", id="memory-with-more"),
    pytest.param("sqlite://", f"'sqlite://': {SQLITE_FORM}", id="sqlite-without-path"),
    pytest.param("sqlite://?synchronous=FULL", f"'sqlite://?synchronous=FULL': {SQLITE_FORM}",
                 id="sqlite-only-a-query"),
    pytest.param("sqlite:///k.db?synchronous=FAST", f"'sqlite:///k.db?synchronous=FAST': "
                 f"{SQLITE_FORM}", id="sqlite-unknown-mode"),
    pytest.param("sqlite:///k.db?mode=ro", f"'sqlite:///k.db?mode=ro': {SQLITE_FORM}",
                 id="sqlite-unknown-option"),
    pytest.param("sqlite:///k.db?synchronous", f"'sqlite:///k.db?synchronous': {SQLITE_FORM}",
                 id="sqlite-option-without-value"),
    pytest.param("etcd://", f"'etcd://': {ETCD_FORM}", id="etcd-without-host"),
    pytest.param("etcd:///prefix", f"'etcd:///prefix': {ETCD_FORM}", id="etcd-only-a-prefix"),
    pytest.param("etcd://127.0.0.1:port", f"'etcd://127.0.0.1:port': {ETCD_FORM}",
                 id="etcd-port-not-a-number"),
    pytest.param("etcd://h:99999", f"'etcd://h:99999': {ETCD_FORM}", id="etcd-port-too-big"),
    pytest.param("etcd://h:0", f"'etcd://h:0': {ETCD_FORM}", id="etcd-port-zero"),
    pytest.param("etcd://u:p@h:1", f"'etcd://u:p@h:1': {ETCD_FORM}", id="etcd-credentials"),
    pytest.param("etcd://h:1/p?x=1", f"'etcd://h:1/p?x=1': {ETCD_FORM}", id="etcd-query"),
])
def test_a_refused_form_says_what_is_accepted(text: str, message: str) -> None:
    with pytest.raises(StorageEndpointError) as info:
        parse_storage(text)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)


def test_sqlite_in_a_data_directory_is_its_store_by_absolute_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    resolved = parse_storage("sqlite").in_data_dir(Path("data"))
    assert resolved == StorageEndpoint(SQLITE, path=tmp_path / "data" / "kubegc.db")
    assert str(resolved) == f"sqlite://{tmp_path}/data/kubegc.db"


def test_sqlite_without_a_data_directory_keeps_nothing() -> None:
    assert parse_storage("sqlite").in_data_dir(None) == StorageEndpoint(MEMORY)


@pytest.mark.parametrize("text", ["memory", "sqlite:///k.db", "etcd://h:1/p"])
def test_other_forms_do_not_depend_on_the_data_directory(text: str) -> None:
    assert parse_storage(text).in_data_dir(Path("/d")) == parse_storage(text)


@pytest.mark.parametrize(("text", "durable"), [
    ("memory", False), ("sqlite", True), ("sqlite:///k.db", True), ("etcd://h:1", True)])
def test_what_outlives_the_process(text: str, durable: bool) -> None:
    assert parse_storage(text).durable is durable


def test_an_etcd_members_client_url_and_a_prefix() -> None:
    endpoint = etcd_storage("http://127.0.0.1:23790", "/kubegc-test/1")
    assert str(endpoint) == "etcd://127.0.0.1:23790/kubegc-test/1"
    assert (endpoint.etcd_url, endpoint.prefix) == ("http://127.0.0.1:23790", "/kubegc-test/1")


@pytest.mark.parametrize(("url", "expected"), [
    pytest.param("http://10.0.0.1:2381", ("10.0.0.1", 2381), id="url"),
    pytest.param("etcd.local:2390", ("etcd.local", 2390), id="host-port"),
    pytest.param("http://etcd.local", ("etcd.local", 2379), id="default-port"),
])
def test_etcd_client_address(url: str, expected: tuple[str, int]) -> None:
    assert etcd_client_address(url) == expected


def test_etcd_client_address_rejects_tls() -> None:
    with pytest.raises(ValueError, match="scheme"):
        etcd_client_address("https://etcd.local:2379")


def test_etcd_without_its_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "aetcd", None)  # import fails
    require_driver(parse_storage("sqlite:///k.db"))
    with pytest.raises(StorageEndpointError) as info:
        require_driver(parse_storage("etcd://127.0.0.1:2379"))
    assert str(info.value) == ("'etcd://127.0.0.1:2379': the etcd backend is not installed: "
                               "pip install 'kubegc[etcd]'")
