"""What ``kubegc``'s command line needs beyond parsing: checked values for ``kubegc
serve``'s flags (``--storage``, ``--controllers``, ``--data-dir``, ``--kubeconfig``), errors
in one line, shell completion (argcomplete) and how long the process has run.

A module of its own beside ``kubegc.cli`` so that the command's definitions stay short;
the value types the tools share (ports, durations, ``--now``) are in
``kubegc.tools.flags``. Nothing heavy is imported until a check needs it.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import argcomplete
from argcomplete.shell_integration import shellcode

if TYPE_CHECKING:
    from kubegc.storage import StorageEndpoint

#: ``time.monotonic()`` when this module was imported: the start of the process where the
#: OS does not say (``process_started``)
_IMPORTED_AT = time.monotonic()
SHELLS = ("bash", "zsh", "fish")


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line with the way to the help (and its
    subcommands' parsers, which argparse makes of the same class).

    An unrecognized argument is reported by the top parser once every subparser has
    parsed (``parse_args``): it is blamed on the subcommand given (``kubegc doctor:
    error: unrecognized arguments: --bogus``), with the nearest of its flags."""

    _parsed: argparse.Namespace | None = None

    def parse_known_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                         namespace: argparse.Namespace | None = None
                         ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        self._parsed = parsed
        return parsed, extras

    def error(self, message: str) -> NoReturn:
        parser: argparse.ArgumentParser = self
        hint = ""
        if message.startswith("unrecognized arguments: "):
            parser = self._subcommand() or self
            flags = [o for a in parser._actions for o in a.option_strings]
            unknown = message.split(": ", 1)[1].split()
            near = [m for u in unknown if u.startswith("-")
                    for m in difflib.get_close_matches(u.split("=")[0], flags, n=1,
                                                          cutoff=0.8)]
            hint = f"did you mean {near[0]}? " if near else ""
        self.exit(2, f"{parser.prog}: error: {message} ({hint}see '{parser.prog} --help')\n")

    def _subcommand(self) -> argparse.ArgumentParser | None:
        """The parser of the subcommand the last parse chose (None: no subcommand)."""
        command = getattr(self._parsed, "command", None)
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction) and command in action.choices:
                found: argparse.ArgumentParser = action.choices[command]
                return found
        return None


# -- kubegc serve's values -------------------------------------------------------------


def storage(text: str) -> StorageEndpoint:
    """``--storage``: the storage layer's one grammar (``kubegc.storage.parse_storage``);
    etcd only with its extra installed."""
    from kubegc.storage import StorageEndpointError, parse_storage, require_driver

    try:
        endpoint = parse_storage(text)
        require_driver(endpoint)
    except StorageEndpointError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return endpoint


_GO_DURATION = re.compile(r"(?:(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))")
_GO_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def go_duration(text: str) -> float:
    """Seconds of a Go duration (``15s``, ``1m30s``, ``500ms``), as kube-controller-manager's
    duration flags take them; a bare number is seconds, as kubegc's other flags."""
    try:
        return float(text)
    except ValueError:
        pass
    if text and _GO_DURATION.sub("", text) == "":
        return sum(float(n) * _GO_UNITS[u] for n, u in _GO_DURATION.findall(text))
    raise argparse.ArgumentTypeError(f"invalid duration {text!r} (e.g. 15s, 1m30s, 500ms)")


def bool_flag(text: str) -> bool:
    """``--flag=true|false`` as Go's flag package reads a boolean."""
    value = text.lower()
    if value in ("1", "t", "true"):
        return True
    if value in ("0", "f", "false"):
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean {text!r} (true or false)")


def emulated_version(text: str) -> str:
    """``--emulated-version``: a version (its range is checked with the feature gates,
    ``serve_options.feature_gate_config``)."""
    from kubegc.api.version import parse_emulated_version

    try:
        parse_emulated_version(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e
    return text


def feature_gates(text: str) -> str:
    """``--feature-gates``: ``Name=bool,...`` (``featureGate.Set``'s parsing; names and
    locks are checked at the emulated version, ``serve_options.feature_gate_config``)."""
    from kubegc.api.features import parse_feature_gates

    try:
        parse_feature_gates(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from e
    return text


def controllers(text: str) -> str:
    """``--controllers``: a list the controller manager can resolve (``selected``)."""
    from kubegc.controllermanager import CONTROLLERS
    from kubegc.controllermanager.manager import selected

    try:
        selected(list(CONTROLLERS), [c.strip() for c in text.split(",") if c.strip()])
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _nearest_existing(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _check_writable_dir(path: Path, flag: str) -> None:
    """``path`` is a directory this process may write in, or can be made one."""
    existing = _nearest_existing(path)
    if existing != path and not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{path}: {existing} is a file, not a directory")
    if existing.is_dir() and not os.access(existing, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(
            f"{path}: no permission to write in {existing}; choose another {flag}")


def data_dir(text: str) -> Path:
    """``--data-dir``: a directory kubegc can create or write in."""
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a file, not a directory")
    _check_writable_dir(path, "--data-dir (or $KUBEGC_DATA_DIR)")
    return path


def kubeconfig_path(text: str) -> Path:
    """``--kubeconfig``: a file kubegc can write (not a directory)."""
    path = Path(text).expanduser()
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is a directory; name the file to write")
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"{path}: no permission to write it")
    _check_writable_dir(path.parent, "--kubeconfig")
    return path


def join_option_values(argv: list[str], options: tuple[str, ...]) -> list[str]:
    """``--now -5m`` as ``--now=-5m``: argparse takes a value that starts with ``-`` (and
    is not a plain negative number) for an option and refuses it."""
    out: list[str] = []
    at = 0
    while at < len(argv):
        arg = argv[at]
        if arg in options and at + 1 < len(argv) and argv[at + 1].startswith("-") and (
                argv[at + 1] != "--"):
            out.append(f"{arg}={argv[at + 1]}")
            at += 2
            continue
        out.append(arg)
        at += 1
    return out


# -- shell completion ------------------------------------------------------------------


def _complete_controllers(prefix: str, **_: Any) -> list[str]:
    """Completes the last name of a ``--controllers`` list (``*,-kube`` → ``*,-kubelet``)."""
    from kubegc.controllermanager import CONTROLLERS

    head, _comma, last = prefix.rpartition(",")
    lead = "-" if last.startswith("-") else ""
    before = f"{head}," if head else ""
    names = ["*", *CONTROLLERS] if not lead else list(CONTROLLERS)
    return [f"{before}{lead}{n}" for n in names if n.startswith(last.lstrip("-"))]


def completers(parser: argparse.ArgumentParser) -> None:
    """Attach the completers argcomplete cannot guess (controller names)."""
    for action in _all_actions(parser):
        if "--controllers" in action.option_strings:
            action.completer = _complete_controllers  # type: ignore[attr-defined]


def _all_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    actions = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                actions.extend(_all_actions(sub))
    return actions


def autocomplete(parser: argparse.ArgumentParser) -> None:
    """Answer the shell and exit when it asks for completions (argcomplete's protocol:
    ``_ARGCOMPLETE`` in the environment); otherwise return at once."""
    if "_ARGCOMPLETE" in os.environ:
        completers(parser)
        argcomplete.autocomplete(parser)


def add_completion_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser],
                          formatter: type[argparse.HelpFormatter]) -> None:
    from kubegc.tools.flags import examples

    p = sub.add_parser("completion", help="print the shell completion script (bash, zsh, fish)",
                       formatter_class=formatter,
                       description="Print a script that makes the shell complete kubegc's "
                                   "subcommands, flags and values; load it from the shell's "
                                   "start-up file.",
                       epilog=examples(
                           'eval "$(%(prog)s bash)"                      # in ~/.bashrc',
                           'eval "$(%(prog)s zsh)"                       # in ~/.zshrc',
                           "%(prog)s fish > ~/.config/fish/completions/kubegc.fish"))
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")


def completion_script(shell: str) -> str:
    return shellcode(["kubegc"], shell=shell)


# -- the process ------------------------------------------------------------------------


def process_started() -> float:
    """``time.monotonic()`` at the start of this process: from the OS where it says
    (Linux: ``/proc``), else when kubegc's command line was imported."""
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            fields = stat.read().rpartition(")")[2].split()
            since_boot = float(uptime.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        age = since_boot - int(fields[19]) / ticks  # field 22, starttime, in clock ticks
    except (OSError, ValueError, IndexError, AttributeError):
        return _IMPORTED_AT
    now = time.monotonic()
    return min(now - max(age, 0.0), _IMPORTED_AT)


def version() -> str:
    from kubegc import __version__

    return f"kubegc {__version__} (Python {sys.version.split()[0]})"


# -- authentication, authorization, admission ------------------------------------------

#: --authorization-mode's authorizers kubegc has (upstream's Node, ABAC and Webhook: no)
AUTHORIZATION_MODES = ("RBAC", "AlwaysAllow", "AlwaysDeny")


def authorization_mode(text: str) -> str:
    """``--authorization-mode``: a comma-separated list of ``AUTHORIZATION_MODES``, each
    once (kube-apiserver's ``BuiltInAuthorizationOptions.Validate``)."""
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes:
        raise argparse.ArgumentTypeError("at least one authorization-mode must be passed")
    for mode in modes:
        if mode not in AUTHORIZATION_MODES:
            raise argparse.ArgumentTypeError(
                f"authorization-mode {mode!r} is not a valid mode: use "
                f"{', '.join(AUTHORIZATION_MODES)}")
    if len(set(modes)) != len(modes):
        raise argparse.ArgumentTypeError(
            f"authorization-mode {text!r} has mode specified more than once")
    return ",".join(modes)


def token_auth_file(text: str) -> Path:
    """``--token-auth-file``: a file that reads as one (checked now, not at first use)."""
    from kubegc.server.authn.tokenfile import TokenFileError, read_token_file

    path = Path(text).expanduser()
    try:
        read_token_file(path)
    except TokenFileError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return path


def pem_file(text: str) -> Path:
    """A certificate or key file (``--proxy-client-cert-file``, ...): readable and PEM
    (checked now, as kube-apiserver loads them at start)."""
    path = Path(text).expanduser()
    try:
        content = path.read_bytes()
    except OSError as e:
        raise argparse.ArgumentTypeError(f"{text}: {e.strerror or e}") from None
    if b"-----BEGIN " not in content:
        raise argparse.ArgumentTypeError(f"{text}: no PEM data found")
    return path


def string_slice(text: str) -> tuple[str, ...]:
    """A comma-separated list, as pflag's ``StringSlice`` (empty: none)."""
    return tuple(item.strip() for item in text.split(",") if item.strip())


def audit_policy_file(text: str) -> Path:
    """``--audit-policy-file``: a policy that loads (checked now, as kube-apiserver does
    at start)."""
    from kubegc.server.audit import PolicyError, load_policy

    path = Path(text).expanduser()
    try:
        load_policy(path)
    except PolicyError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return path


def _admission_plugins(flag: str, *, enable: bool) -> Callable[[str], str]:
    """``--enable-admission-plugins`` / ``--disable-admission-plugins``: upstream's names
    (kube-apiserver's ``AdmissionOptions.Validate`` message for a name it does not know).
    A kube-apiserver plugin kubegc does not have may be disabled (it never runs) but not
    enabled (kubegc would not enforce what the flag asks)."""

    def check(text: str) -> str:
        from kubegc.registry.admission import PLUGINS, UPSTREAM_ONLY

        has = ", ".join(PLUGINS)
        for name in (n.strip() for n in text.split(",")):
            if not name or name in PLUGINS or (name in UPSTREAM_ONLY and not enable):
                continue
            if name in UPSTREAM_ONLY:
                raise argparse.ArgumentTypeError(
                    f'{flag} plugin "{name}" is kube-apiserver\'s but kubegc does not have '
                    f"it; kubegc has {has}")
            raise argparse.ArgumentTypeError(
                f'{flag} plugin "{name}" is unknown; kubegc has {has}')
        return text

    return check


enable_admission_plugins = _admission_plugins("enable-admission-plugins", enable=True)
disable_admission_plugins = _admission_plugins("disable-admission-plugins", enable=False)


def admission_plugins_overlap(enable: str, disable: str) -> str | None:
    """The error for names in both flags (kube-apiserver's), or None."""
    from kubegc.registry.admission import overlapping

    def names(text: str) -> list[str]:
        return [n.strip() for n in text.split(",") if n.strip()]

    return overlapping(names(enable), names(disable))
