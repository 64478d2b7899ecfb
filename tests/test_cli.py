"""``kubegc serve``: which event loop runs the server; its flags' defaults are the
configuration's (``kubegc.cluster_config``, ``kubegc.component.config``), and ``--help``
shows them."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kubegc.cli import build_parser, run_loop
from kubegc.cluster_config import ClusterConfig
from kubegc.component.config import ControllerManagerConfiguration
from kubegc.serve_options import serve_config


async def _loop_module() -> int:
    return 1 if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else 0


def test_asyncio_loop_when_asked_for() -> None:
    assert run_loop(_loop_module(), "asyncio") == 0


def test_uvloop_by_default_when_installed() -> None:
    pytest.importorskip("uvloop")
    assert build_parser().parse_args(["serve"]).loop == "auto"
    assert run_loop(_loop_module(), "auto") == 1
    assert run_loop(_loop_module(), "uvloop") == 1


def test_uvloop_asked_for_but_missing_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import fails
    assert run_loop(_loop_module(), "auto") == 0
    with pytest.raises(SystemExit, match="uvloop is not installed"):
        run_loop(_loop_module(), "uvloop")


def test_serve_without_flags_runs_the_default_configuration() -> None:
    config = serve_config(build_parser().parse_args(["serve"]))
    defaults = ClusterConfig()
    assert config.controller_manager == ControllerManagerConfiguration()
    assert (config.host, config.port, config.storage, config.tls, config.time_scale) == (
        defaults.host, defaults.port, defaults.storage, defaults.tls, defaults.time_scale)


def test_serve_help_shows_the_defaults() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    text = " ".join(out.getvalue().split("options:")[1].split())
    for flag, default in (("--concurrent-gc-syncs", "20"), ("--gc-sync-period", "30.0"),
                          ("--event-ttl", "3600.0"), ("--decision-ttl", "604800.0"),
                          ("--node-max-pods", "110"), ("--port", "6443")):
        section = text[text.index(f"{flag} "):]
        assert f"(default: {default})" in section[:400], flag


def test_serve_flags_fill_their_sections() -> None:
    config = serve_config(build_parser().parse_args([
        "serve", "--controllers", "*,-kubelet", "--concurrent-gc-syncs", "3",
        "--nodes", "4", "--event-ttl", "60", "--pod-ignore-term"]))
    manager = config.controller_manager
    assert manager.controllers == ["*", "-kubelet"]
    assert manager.garbage_collector.concurrent_gc_syncs == 3
    assert (manager.kubelet.nodes, manager.kubelet.pod_ignore_term) == (4, True)
    assert manager.event_ttl.event_ttl == 60.0


def test_the_ephemeral_volume_workers_flag() -> None:
    config = serve_config(build_parser().parse_args([
        "serve", "--concurrent-ephemeralvolume-syncs", "2"]))
    assert config.controller_manager.ephemeral_volume.concurrent_ephemeral_volume_syncs == 2
    default = serve_config(build_parser().parse_args(["serve"]))
    assert default.controller_manager.ephemeral_volume.concurrent_ephemeral_volume_syncs == 5


def test_compaction_flags_take_kube_apiservers_and_kines_names() -> None:
    config = serve_config(build_parser().parse_args([
        "serve", "--etcd-compaction-interval", "1m30s", "--compact-min-retain", "1000"]))
    assert (config.compaction_interval, config.compaction_keep) == (90.0, 1000)
    default = serve_config(build_parser().parse_args(["serve"]))
    assert (default.compaction_interval, default.compaction_keep) == (
        ClusterConfig.compaction_interval, ClusterConfig.compaction_keep)


def test_the_informer_cache_interval_flag() -> None:
    config = serve_config(build_parser().parse_args([
        "serve", "--informer-cache-interval", "2m"]))
    assert config.informer_cache_interval == 120.0
    assert serve_config(build_parser().parse_args([
        "serve", "--informer-cache-interval", "0"])).informer_cache_interval == 0.0
    default = serve_config(build_parser().parse_args(["serve"]))
    assert default.informer_cache_interval == ClusterConfig.informer_cache_interval == 60.0


def test_leader_election_flags_take_kube_controller_managers_names_and_durations() -> None:
    config = serve_config(build_parser().parse_args([
        "serve", "--leader-elect-lease-duration", "1m30s", "--leader-elect-renew-deadline",
        "20s", "--leader-elect-retry-period", "500ms", "--leader-elect-resource-name", "gc",
        "--leader-elect-resource-namespace", "ops"]))
    election = config.controller_manager.leader_election
    assert (election.lease_duration, election.renew_deadline, election.retry_period) == (
        90.0, 20.0, 0.5)
    assert (election.resource_name, election.resource_namespace) == ("gc", "ops")
    assert election.leader_elect
    off = serve_config(build_parser().parse_args(["serve", "--leader-elect=false"]))
    assert not off.controller_manager.leader_election.leader_elect


@pytest.mark.parametrize(("flags", "message"), [
    pytest.param(["--leader-elect-lease-duration", "5s"],
                 "leaseDuration must be greater than renewDeadline", id="lease-too-short"),
    pytest.param(["--leader-elect-retry-period", "9s"],
                 "renewDeadline must be greater than retryPeriod*JitterFactor", id="retry"),
])
def test_leader_election_durations_that_cannot_work_are_one_line_errors(
        flags: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from kubegc.cli import main

    assert main(["serve", "--storage", "memory", *flags]) == 2
    assert capsys.readouterr().err == f"kubegc: --leader-elect-*: {message}\n"


def test_a_duration_that_is_not_one_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--leader-elect-retry-period", "2 seconds"])
    assert "invalid duration '2 seconds'" in capsys.readouterr().err


# -- errors in one line, blamed on the subcommand, with the fix ---------------------------

@pytest.mark.parametrize(("argv", "blamed", "hint"), [
    pytest.param(["doctor", "--bogus"], "kubegc doctor", "", id="doctor"),
    pytest.param(["doctor", "--fail-onn", "error"], "kubegc doctor", "did you mean --fail-on? ",
                 id="doctor-near-miss"),
    pytest.param(["why", "cm/x", "--bogus"], "kubegc why", "", id="why"),
    pytest.param(["tree", "cm/x", "--bogus"], "kubegc tree", "", id="tree"),
    pytest.param(["plan", "delete", "cm/x", "--bogus"], "kubegc plan", "", id="plan"),
    pytest.param(["serve", "--bogus"], "kubegc serve", "", id="serve"),
    pytest.param(["ui", "--bogus"], "kubegc ui", "", id="ui"),
])
def test_an_unknown_flag_blames_the_subcommand(capsys: pytest.CaptureFixture[str],
                                               argv: list[str], blamed: str, hint: str) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    unknown = argv[-2] if hint else argv[-1]
    assert err == (f"{blamed}: error: unrecognized arguments: {unknown} ({hint}see "
                   f"'{blamed} --help')\n")


def _serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kubegc", "serve", "--port", "0", *args],
                          capture_output=True, text=True, timeout=120)


def test_serve_with_no_etcd_there_is_one_line_with_the_fix(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    done = _serve("--storage", f"etcd://127.0.0.1:{port}", "--data-dir", str(tmp_path / "d"))
    assert done.returncode == 1
    assert done.stderr == (f"kubegc: cannot reach etcd at 127.0.0.1:{port} (Connection "
                           "refused): start etcd there or point --storage at a running "
                           "member, or leave --storage out to keep the data in --data-dir "
                           "(sqlite)\n")


def test_serve_on_a_damaged_data_dir_is_one_line_with_the_fix(tmp_path: Path) -> None:
    data = tmp_path / "d"
    data.mkdir(mode=0o700)
    (data / "kubegc.db").write_bytes(b"not a database, " * 512)
    done = _serve("--data-dir", str(data))
    assert done.returncode == 1
    assert done.stderr == (f"kubegc: cannot open the database {data / 'kubegc.db'} (file is "
                           "not a database): move it aside to start with an empty cluster, "
                           "or pass another --data-dir\n")


class _Settling:
    """A cluster whose ``settle`` ends as told (returns, or times out)."""

    def __init__(self, settles: bool) -> None:
        self.settles = settles
        self.asked: list[float] = []
        self.server = None

    async def settle(self, timeout: float) -> None:
        self.asked.append(timeout)
        if not self.settles:
            raise TimeoutError("not settled")


@pytest.mark.parametrize("settles", [True, False])
def test_the_cyclic_gc_held_off_while_serve_starts_comes_back_tuned(settles: bool) -> None:
    """``kubegc serve`` starts with Python's cyclic GC off (its caches fill: issue 27) and
    turns it back on, tuned, once the cluster settled — or after the hold, if it never
    does."""
    import asyncio
    import gc

    from kubegc.cli import CYCLIC_GC_THRESHOLDS, collect_once_settled

    thresholds, enabled = gc.get_threshold(), gc.isenabled()
    cluster = _Settling(settles)
    try:
        gc.disable()
        asyncio.run(collect_once_settled(cluster, hold=7.0))  # type: ignore[arg-type]
        assert gc.isenabled()
        assert gc.get_threshold() == CYCLIC_GC_THRESHOLDS
        assert cluster.asked == [7.0]
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        (gc.enable if enabled else gc.disable)()


@pytest.mark.parametrize(("argv", "enabled"), [
    (["doctor", "--from", "dump.json"], False),
    (["doctor"], True),
    (["plan", "delete", "configmap/c", "--from", "dump.json"], True),
])
def test_a_tool_tunes_the_cyclic_gc_and_the_doctor_on_a_dump_holds_it_off(
        argv: list[str], enabled: bool) -> None:
    """Issue 27: the doctor reading a dump (trees, no cycles) runs without the cyclic
    collector; every other tool keeps it on, tuned (``tune_cyclic_gc``)."""
    import gc

    from kubegc.cli import CYCLIC_GC_THRESHOLDS, build_parser, tune_tool_cyclic_gc

    thresholds, was_enabled = gc.get_threshold(), gc.isenabled()
    try:
        gc.enable()
        tune_tool_cyclic_gc(build_parser().parse_args(argv))
        assert gc.isenabled() is enabled
        assert gc.get_threshold() == CYCLIC_GC_THRESHOLDS
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
        (gc.enable if was_enabled else gc.disable)()


@pytest.mark.parametrize("fail_on", [None, "warning"])
def test_the_doctor_on_a_dump_exits_without_freeing_and_says_everything(
        fail_on: str | None) -> None:
    """Issue 27: ``kubegc doctor --from FILE`` as its own process exits without freeing
    what it read (``tools.process.exit_without_freeing``): its whole report still reaches
    a pipe, and its exit code is the command's (3 for ``--fail-on``), as in-process."""
    from tests.tools.conftest import LAB_DUMP
    from tests.tools.lab import kubegc

    args = ["doctor", "--from", str(LAB_DUMP), "--now", "2026-12-06T12:00:00Z",
            *(["--fail-on", fail_on] if fail_on else [])]
    code, out, err = kubegc(*args)
    src = Path(__file__).resolve().parents[1] / "src"
    done = subprocess.run([sys.executable, "-m", "kubegc", *args], capture_output=True,
                          text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONPATH": str(src)})
    assert (done.returncode, done.stdout, done.stderr) == (code, out, err)
    assert code == (3 if fail_on else 0) and out.count("\n") > 20
