"""The command line's first five minutes: ``--version``; every bad flag value refused in
one line that says what is accepted (no traceback, nothing created); examples in every
``--help``; shell completion in bash, zsh and fish; the ready line counted from launch.
Each runs ``python -m kubegc`` as a user's shell would."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kubegc import __version__
from kubegc.cli import build_parser

BIN = Path(sys.executable).parent  # where the kubegc script is installed


def kubegc(*args: str, cwd: Path | None = None, prelude: str = "",
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = f"{prelude}\nimport sys\nfrom kubegc.cli import main\nsys.exit(main({list(args)!r}))"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=cwd, timeout=120, env=env)


def test_version() -> None:
    proc = kubegc("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"kubegc {__version__} ")


BAD = [
    pytest.param(("serve", "--controllers", "garbagecolector"),
                 "unknown controller 'garbagecolector'; known: garbagecollector, namespace",
                 id="controllers-typo"),
    pytest.param(("serve", "--controllers", "*,-kubelt"), "unknown controller 'kubelt'",
                 id="controllers-typo-after-star"),
    pytest.param(("serve", "--storage", "bogus"), "'bogus' is not a storage: use sqlite",
                 id="storage-bogus"),
    pytest.param(("serve", "--storage", "etcd://"), "expected etcd://HOST:PORT",
                 id="storage-etcd-without-host"),
    pytest.param(("serve", "--storage", "etcd://127.0.0.1:port"), "expected etcd://HOST:PORT",
                 id="storage-etcd-bad-port"),
    pytest.param(("serve", "--port", "99999"), "'99999' is not a port (0-65535",
                 id="port-too-big"),
    pytest.param(("serve", "--port", "-1"), "'-1' is not a port", id="port-negative"),
    pytest.param(("serve", "--nodes", "x"), "'x' is not a whole number", id="nodes-not-number"),
    pytest.param(("serve", "--concurrent-gc-syncs", "0"), "'0' is not a positive whole",
                 id="gc-workers-zero"),
    pytest.param(("serve", "--gc-sync-period", "nan"), "'nan' is not a positive number",
                 id="sync-period-nan"),
    pytest.param(("serve", "--time-scale", "0"), "'0' is not a positive number",
                 id="time-scale-zero"),
    pytest.param(("serve", "--pod-exit-delay", "-3"), "'-3' is not a number of seconds",
                 id="exit-delay-negative"),
    pytest.param(("doctor", "--now", "around noon"), "not a time: 'around noon'; use RFC 3339",
                 id="now-unknown"),
    pytest.param(("ui", "--port", "70000"), "'70000' is not a port", id="ui-port"),
    pytest.param(("serve", "--loop", "fast"), "invalid choice: 'fast'", id="choice"),
    pytest.param(("serve", "--enable-admission-plugins", "OwnerReferencesPermission"),
                 'enable-admission-plugins plugin "OwnerReferencesPermission" is unknown; '
                 "kubegc has NamespaceLifecycle, DefaultTolerationSeconds, "
                 "OwnerReferencesPermissionEnforcement", id="admission-unknown"),
    pytest.param(("serve", "--enable-admission-plugins", "NamespaceLifecycle,NodeRestriction"),
                 'enable-admission-plugins plugin "NodeRestriction" is kube-apiserver\'s but '
                 "kubegc does not have it", id="admission-upstream-only"),
    pytest.param(("serve", "--disable-admission-plugins", "Bogus"),
                 'disable-admission-plugins plugin "Bogus" is unknown', id="admission-disable"),
]


def test_admission_plugins_in_both_flags(tmp_path: Path) -> None:
    """kube-apiserver's ``AdmissionOptions.Validate``; a kube-apiserver plugin kubegc does
    not have may be disabled (it never runs)."""
    proc = kubegc("serve", "--enable-admission-plugins", "OwnerReferencesPermissionEnforcement",
                  "--disable-admission-plugins",
                  "ResourceQuota,OwnerReferencesPermissionEnforcement", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == ("kubegc: [OwnerReferencesPermissionEnforcement] in "
                           "enable-admission-plugins and disable-admission-plugins overlapped\n")


@pytest.mark.parametrize(("args", "message"), BAD)
def test_a_bad_value_is_one_line_with_what_is_accepted(tmp_path: Path, args: tuple[str, ...],
                                                       message: str) -> None:
    proc = kubegc(*args, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr
    assert proc.stderr.rstrip().endswith(f"(see 'kubegc {args[0]} --help')")
    assert list(tmp_path.iterdir()) == []  # --storage bogus once created ./bogus


def test_a_data_dir_that_is_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("")
    for data_dir, message in ((afile, "is a file, not a directory"),
                              (afile / "sub", f"{afile} is a file, not a directory")):
        proc = kubegc("serve", "--data-dir", str(data_dir))
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert message in proc.stderr


def test_a_kubeconfig_that_is_a_directory(tmp_path: Path) -> None:
    proc = kubegc("serve", "--kubeconfig", str(tmp_path))
    assert proc.returncode == 2 and "is a directory; name the file" in proc.stderr


def test_etcd_without_its_extra_names_the_install() -> None:
    proc = kubegc("serve", "--storage", "etcd://127.0.0.1:2379",
                  prelude="import sys; sys.modules['aetcd'] = None  # not installed")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "pip install 'kubegc[etcd]'" in proc.stderr


def _subcommands(parser: object) -> list[object]:
    import argparse

    assert isinstance(parser, argparse.ArgumentParser)
    found: list[object] = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found.extend(_subcommands(sub))
    return found


@pytest.mark.parametrize("plugin", [False, True], ids=["kubegc", "kubectl-gc"])
def test_every_help_has_examples(plugin: bool) -> None:
    for parser in _subcommands(build_parser(plugin=plugin)):
        text = parser.format_help()  # type: ignore[attr-defined]
        prog = parser.prog  # type: ignore[attr-defined]
        assert "\nexamples:\n" in text, prog
        lines = text.split("\nexamples:\n", 1)[1].splitlines()
        assert lines and all(line.startswith(("  kubegc", "  eval", f"  {prog}"))
                             for line in lines if line.strip()), (prog, lines)


# -- --now ------------------------------------------------------------------------------


LAB_DUMP = Path(__file__).parent / "tools" / "testdata" / "lab-dump.yaml"
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


@pytest.mark.parametrize(("now", "offset"), [
    ("yesterday", -86400), ("-5m", -300), ("5 minutes ago", -300), ("in 2 hours", 7200),
    ("now", 0)])
def test_now_takes_what_date_users_type(now: str, offset: float) -> None:
    from kubegc.api.clock import parse_time

    before = time.time()
    proc = kubegc("doctor", "--from", str(LAB_DUMP), "--now", now)
    assert proc.returncode == 0, proc.stderr
    stamp = STAMP.search(proc.stdout.splitlines()[0])
    assert stamp is not None, proc.stdout
    judged = parse_time(stamp.group()).timestamp()
    assert before + offset - 2 <= judged <= time.time() + offset + 1


def test_now_takes_a_date_and_time_with_a_space() -> None:
    proc = kubegc("doctor", "--from", str(LAB_DUMP), "--now", "2026-01-01 00:10")
    assert proc.returncode == 0, proc.stderr
    assert "2026-01-01T00:10:00Z" in proc.stdout.splitlines()[0]


# -- shell completion -------------------------------------------------------------------


def _env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def _shell(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed (.ci/run installs it)")
    return path


def test_bash_completes_subcommands_flags_and_controller_names() -> None:
    script = r'''eval "$(kubegc completion bash)"
complete_line() {
  COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< "$1"
  [[ "$1" == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()
  _python_argcomplete kubegc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
  echo "${COMPREPLY[*]}"
}
complete_line "kubegc se"
complete_line "kubegc serve --stor"
complete_line "kubegc serve --controllers garbage"
complete_line "kubegc completion "
'''
    proc = subprocess.run([_shell("bash"), "-c", script], capture_output=True, text=True,
                          env=_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert [line.split() for line in proc.stdout.splitlines()] == [
        ["serve"], ["--storage"], ["garbagecollector"], ["-h", "--help", "bash", "zsh", "fish"]]


def test_fish_completes_subcommands_flags_and_controller_names() -> None:
    script = ('kubegc completion fish | source; complete -C "kubegc se"; '
              'complete -C "kubegc serve --controllers \'*,-kube\'"')
    proc = subprocess.run([_shell("fish"), "-c", script], capture_output=True, text=True,
                          env=_env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("serve\t") and "*,-kubelet" in lines[1:], lines


def test_zsh_loads_the_completion_and_gets_answers(tmp_path: Path) -> None:
    load = ('autoload -U compinit; compinit -u; eval "$(kubegc completion zsh)"; '
            'print -r -- $_comps[kubegc]')
    proc = subprocess.run([_shell("zsh"), "-c", load], capture_output=True, text=True,
                          env=_env(), timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "_python_argcomplete", proc.stderr
    # what that function asks the command (argcomplete's protocol, in zsh's form)
    answers = tmp_path / "answers"
    line = "kubegc se"
    subprocess.run([str(BIN / "kubegc")], env={
        **_env(), "_ARGCOMPLETE": "1", "_ARGCOMPLETE_SHELL": "zsh",
        "_ARGCOMPLETE_SUPPRESS_SPACE": "1", "COMP_LINE": line,
        "COMP_POINT": str(len(line)), "_ARGCOMPLETE_STDOUT_FILENAME": str(answers)},
        timeout=60, check=True)
    assert answers.read_text() == "serve:run the API server and the controllers"


# -- the ready line ---------------------------------------------------------------------


def test_the_ready_line_counts_from_launch(tmp_path: Path) -> None:
    """A process that spends 1 s before kubegc's code even runs is not ready in 0.1 s."""
    code = ("import time; time.sleep(1.0)\nfrom kubegc.cli import main\n"
            f"main(['serve', '--port', '0', '--storage', 'memory', '--no-ui', "
            f"'--data-dir', {str(tmp_path)!r}])")
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 60
        for line in process.stdout:
            if line.startswith("kubegc: ready"):
                break
            assert time.monotonic() < deadline, "never ready"
        else:
            raise AssertionError("exited before it was ready")
    finally:
        process.terminate()
        process.wait(timeout=20)
    seconds = float(re.search(r"ready \((\d+\.\d+) s after start\)", line).group(1))  # type: ignore[union-attr]
    assert seconds >= 1.0, line
