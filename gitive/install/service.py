"""``gitive install --service``: the daemon as a user service, one per ``$GITIVE_HOME`` on this machine.

Linux gets a systemd user unit, ``$XDG_CONFIG_HOME/systemd/user/gitive-daemon-<hash>.service``; macOS a
launchd agent, ``~/Library/LaunchAgents/dev.gitive.daemon.<hash>.plist``. ``<hash>`` is derived from the
``$GITIVE_HOME`` the daemon serves, so two homes get two services. The service belongs to the machine, not to
a repository, so what install wrote is recorded in ``$GITIVE_HOME/service.json``; uninstall stops the
service and removes exactly that file and the folders install created for it.

``gitive install --service --anchor`` registers the anchor's loop (``python -m gitive.anchor``) the same way, as
a second :class:`Unit` with its own name (``gitive-anchor-<hash>``), record (``anchor-service.json``) and log.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import plistlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from gitive.core.home import ensure_home, gitive_home
from gitive.errors import GitiveError
from gitive.install import state as st

STATE_FILE = "service.json"
LOG_FILE = "daemon.log"  # the same log `gitive daemon start` writes
DEFAULT_INTERVAL = 30.0
MARKER = "# gitive-daemon: written by `gitive install --service`; `gitive uninstall --service` removes it"
# `systemctl --user is-system-running` answers one of these when a user manager is there to talk to; it
# exits non-zero for "degraded" too, so the answer is read, not the exit code.
_SYSTEMD_UP = frozenset({"running", "degraded", "starting", "initializing", "maintenance", "stopping"})
_TIMEOUT_S = 30.0


class Unit(NamedTuple):
    """What a service runs: ``python -m gitive.<kind> <args> --interval N``, recorded in ``state_file``."""

    kind: str  # "daemon" or "anchor"
    args: tuple[str, ...]
    state_file: str
    log_file: str

    @property
    def marker(self) -> str:
        flag = " --anchor" if self.kind == "anchor" else ""
        return MARKER if self.kind == "daemon" else (
            f"# gitive-{self.kind}: written by `gitive install --service{flag}`; "
            f"`gitive uninstall --service{flag}` removes it")


DAEMON = Unit("daemon", (), STATE_FILE, LOG_FILE)


def anchor_unit(repo: str) -> Unit:
    """The anchor's service, ticking for the repository at ``repo``."""
    return Unit("anchor", ("--repo", repo), "anchor-service.json", "anchor.log")


class ServiceFile(NamedTuple):
    manager: str  # "systemd" or "launchd"
    name: str  # the systemd unit name, or the launchd label
    path: Path
    content: bytes


def manager_for(platform: str | None = None) -> str:
    """``"systemd"`` on Linux, ``"launchd"`` on macOS (``platform`` as in ``sys.platform``).

    Raises:
        GitiveError: any other platform.
    """
    platform = platform or sys.platform
    if platform.startswith("linux"):
        return "systemd"
    if platform == "darwin":
        return "launchd"
    raise GitiveError(f"gitive can register the daemon as a service on Linux (systemd) and macOS (launchd), "
                      f"not on {platform}; run `gitive daemon start` instead")


def validate(python: str, interval: float, platform: str | None = None, unit: Unit = DAEMON) -> None:
    """Refuse what :func:`install` would refuse for its input, before anything else is written.

    Raises:
        GitiveError: an unsupported platform, an interval below 1 s, or an interpreter path a service file
            cannot carry.
    """
    manager_for(platform)
    _check(gitive_home(), python, interval, unit)


def home_key(home: Path) -> str:
    """The 12 hex digits that name the service of the (absolute) ``home``."""
    return hashlib.sha256(str(home).encode()).hexdigest()[:12]


def locate(home: Path, manager: str, unit: Unit = DAEMON) -> tuple[str, Path]:
    """The unit name (or launchd label) and the file path for ``home``'s service."""
    key = home_key(home)
    if manager == "systemd":
        name = f"gitive-{unit.kind}-{key}.service"
        return name, _config_home() / "systemd" / "user" / name
    label = f"dev.gitive.{unit.kind}.{key}"
    return label, Path.home() / "Library" / "LaunchAgents" / f"{label}.plist"


def service_file(home: Path, python: str, interval: float, platform: str | None = None,
                 unit: Unit = DAEMON) -> ServiceFile:
    """What install writes for ``home`` on ``platform``: the daemon run by ``python`` every ``interval`` s.

    Raises:
        GitiveError: an unsupported platform, an interval below 1 s, or a path a service file cannot carry.
    """
    manager = manager_for(platform)
    _check(home, python, interval, unit)
    name, path = locate(home, manager, unit)
    if manager == "systemd":
        return ServiceFile(manager, name, path, systemd_unit(home, python, interval, unit).encode())
    return ServiceFile(manager, name, path, launchd_plist(name, home, python, interval, unit))


def systemd_unit(home: Path, python: str, interval: float, unit: Unit = DAEMON) -> str:
    args = ["-m", f"gitive.{unit.kind}", *unit.args, "--interval", f"{interval:g}"]
    return "\n".join([
        unit.marker,
        "[Unit]",
        f"Description=gitive {unit.kind} for {_specifiers(str(home))}",
        "",
        "[Service]",
        # systemd substitutes $VAR in the arguments but not in the program path (checked with systemd 252).
        "ExecStart=" + " ".join([_word(python), *(_word(a, dollars=True) for a in args)]),
        "Environment=" + _word(f"GITIVE_HOME={home}"),
        "Restart=on-failure",
        "RestartSec=5",
        "",
        "[Install]",
        "WantedBy=default.target",
        "",
    ])


def launchd_plist(label: str, home: Path, python: str, interval: float, unit: Unit = DAEMON) -> bytes:
    log = str(home / unit.log_file)
    return plistlib.dumps({
        "Label": label,
        "ProgramArguments": [python, "-m", f"gitive.{unit.kind}", *unit.args, "--interval", f"{interval:g}"],
        "EnvironmentVariables": {"GITIVE_HOME": str(home)},
        # Like systemd's Restart=on-failure: `gitive daemon stop` (exit 0) stays stopped, a crash restarts.
        "KeepAlive": {"SuccessfulExit": False},
        "RunAtLoad": True,
        "StandardOutPath": log,
        "StandardErrorPath": log,
    }, sort_keys=True)


def install(python: str, interval: float = DEFAULT_INTERVAL, platform: str | None = None,
            unit: Unit = DAEMON) -> dict[str, Any]:
    """Write and record the service file for ``$GITIVE_HOME`` and start it; idempotent.

    An unchanged file is not rewritten. Without a systemd user session (or ``launchctl``) the file is written
    and recorded but not started; ``hint`` says how to start it.

    Raises:
        GitiveError: bad input (see :func:`service_file`), ``service.json`` unreadable, a file gitive did not
            write in the way, or the service manager refused (the file is then written and recorded).
    """
    home = ensure_home().resolve()
    sf = service_file(home, python, interval, platform, unit)
    record = _load(home, unit)
    if record is not None and Path(record["path"]) != sf.path:  # installed under another config dir
        _remove(record, unit)
        record = None
    before = st.read_bytes(sf.path)
    if before is not None and before != sf.content and not _ours(sf.manager, sf.name, before, unit):
        raise GitiveError(f"{sf.path} exists and gitive did not write it; move it away, then run "
                          "`gitive install --service` again")
    created = list(dict.fromkeys([*((record or {}).get("created_dirs") or []), *_make_dirs(sf.path.parent)]))
    changed = before != sf.content
    if changed:
        st.write_atomic(sf.path, sf.content)
    _save(home, {"version": 1, "manager": sf.manager, "name": sf.name, "path": str(sf.path),
                 "sha256": st.sha256(sf.content), "created_dirs": created, "python": python,
                 "interval": interval}, unit)
    start = _start_systemd if sf.manager == "systemd" else _start_launchd
    hint = start(sf, changed, updated=changed and before is not None)
    return {"home": str(home), "manager": sf.manager, "name": sf.name, "path": str(sf.path),
            "outcome": "written" if changed else "unchanged", "started": hint is None, "hint": hint}


def uninstall(unit: Unit = DAEMON) -> dict[str, Any]:
    """Stop and disable the recorded service, remove its file and the folders install created.

    A file changed since install that no longer looks like gitive's is left (``kept``) and its service is not
    touched. Returns ``outcome``: ``removed``, ``missing``, ``kept`` or ``not-installed``.

    Raises:
        GitiveError: ``service.json`` is unreadable.
    """
    home = gitive_home().resolve()
    record = _load(home, unit)
    if record is None:
        return {"home": str(home), "manager": None, "name": None, "path": None, "outcome": "not-installed",
                "stopped": False}
    outcome, stopped = _remove(record, unit)
    (home / unit.state_file).unlink(missing_ok=True)
    return {"home": str(home), "manager": record["manager"], "name": record["name"], "path": record["path"],
            "outcome": outcome, "stopped": stopped}


def status(platform: str | None = None, unit: Unit = DAEMON) -> dict[str, Any]:
    """Whether the service file is there, what the service manager says of it, and whether the daemon answers.

    ``enabled``/``active``/``state`` are None when the service manager cannot be asked. Never raises.
    """
    home = gitive_home().resolve()
    out: dict[str, Any] = {"home": str(home), "supported": True, "manager": None, "name": None, "path": None,
                           "installed": False, "recorded": False, "manager_available": False,
                           "enabled": None, "active": None, "state": None, "problem": None}
    out.update(_daemon() if unit.kind == "daemon" else _anchor())
    try:
        out["manager"] = manager = manager_for(platform)
    except GitiveError:
        out["supported"] = False
        return out
    try:
        record = _load(home, unit)
    except GitiveError as exc:
        record, out["problem"] = None, str(exc)
    name, path = (record["name"], Path(record["path"])) if record else locate(home, manager, unit)
    out.update(name=name, path=str(path), installed=path.exists(), recorded=record is not None)
    out.update(_query_systemd(name) if manager == "systemd" else _query_launchd(name))
    if record and not out["installed"]:
        out["problem"] = f"{path} was installed but is gone; `gitive install --service` writes it again"
    elif record and not os.access(record.get("python") or "", os.X_OK):
        out["problem"] = (f"the service runs {record['python']}, which is gone; run `gitive install --service` "
                          "again with the gitive you use now")
    return out


def systemd_user_available() -> bool:
    """True when ``systemctl --user`` reaches a running user manager (not in a container or bare ssh login)."""
    code, out, _ = _run(["systemctl", "--user", "is-system-running"])
    return code != 127 and out.strip() in _SYSTEMD_UP


# --- starting and stopping --------------------------------------------------------------------------------


def _start_systemd(sf: ServiceFile, changed: bool, updated: bool) -> str | None:
    if not systemd_user_available():
        return (f"no systemd user session here, so it was not started: `systemctl --user daemon-reload && "
                f"systemctl --user enable --now {sf.name}` starts it (or `gitive daemon start` meanwhile)")
    steps = [["daemon-reload"]] if changed else []
    steps.append(["enable", "--now", sf.name])
    if updated:  # enable --now leaves a running daemon on the old command line
        steps.append(["try-restart", sf.name])
    for step in steps:
        _must(["systemctl", "--user", *step], sf.path)
    return None


def _start_launchd(sf: ServiceFile, changed: bool, updated: bool) -> str | None:
    domain = f"gui/{os.getuid()}"
    if shutil.which("launchctl") is None:
        return f"`launchctl` is not on PATH, so it was not loaded: `launchctl bootstrap {domain} {sf.path}` loads it"
    loaded = _run(["launchctl", "print", f"{domain}/{sf.name}"])[0] == 0
    if loaded and changed:  # launchd keeps the job it loaded; reload it to pick up the new file
        _must(["launchctl", "bootout", f"{domain}/{sf.name}"], sf.path)
        loaded = False
    if not loaded:
        _must(["launchctl", "bootstrap", domain, str(sf.path)], sf.path)
    return None


def _remove(record: dict[str, Any], unit: Unit = DAEMON) -> tuple[str, bool]:
    """Stop the recorded service and delete its file (if still gitive's) and the folders install created."""
    path, name, manager = Path(record["path"]), record["name"], record["manager"]
    data = st.read_bytes(path)
    if data is not None and st.sha256(data) != record.get("sha256") and not _ours(manager, name, data, unit):
        return "kept", False
    stopped = _stop_systemd(name) if manager == "systemd" else _stop_launchd(name)
    if data is not None:
        path.unlink()
    if manager == "systemd" and systemd_user_available():
        _run(["systemctl", "--user", "daemon-reload"])
    for folder in reversed(record.get("created_dirs") or []):
        with contextlib.suppress(OSError):  # only when empty: other units may live there by now
            Path(folder).rmdir()
    return ("removed" if data is not None else "missing"), stopped


def _stop_systemd(name: str) -> bool:
    if systemd_user_available():
        return _run(["systemctl", "--user", "disable", "--now", name])[0] == 0
    # Without a user manager, `disable` still removes the default.target.wants link an earlier
    # `systemctl --user enable` made, so no dangling link is left behind.
    _run(["systemctl", "--user", "disable", name])
    return False


def _stop_launchd(label: str) -> bool:
    if shutil.which("launchctl") is None:
        return False
    return _run(["launchctl", "bootout", f"gui/{os.getuid()}/{label}"])[0] == 0


def _query_systemd(name: str) -> dict[str, Any]:
    if shutil.which("systemctl") is None:
        return {}
    # is-enabled reads unit files, so it answers without a user manager too.
    found: dict[str, Any] = {"enabled": _run(["systemctl", "--user", "is-enabled", name])[1].strip() == "enabled"}
    if systemd_user_available():
        state = _run(["systemctl", "--user", "is-active", name])[1].strip()
        found.update(manager_available=True, active=state == "active", state=state or None)
    return found


def _query_launchd(label: str) -> dict[str, Any]:
    if shutil.which("launchctl") is None:
        return {}
    code, out, _ = _run(["launchctl", "print", f"gui/{os.getuid()}/{label}"])
    state = next((ln.split("=", 1)[1].strip() for ln in out.splitlines() if ln.strip().startswith("state =")),
                 None)
    return {"manager_available": True, "enabled": code == 0, "active": state == "running", "state": state}


def _daemon() -> dict[str, Any]:
    from gitive.daemon import control  # the daemon sits above install: load it only when asked

    pid = control.running()
    return {"daemon_running": pid is not None, "daemon_pid": pid}


def _anchor() -> dict[str, Any]:
    from gitive.anchor.runner import holder  # the anchor sits above install: load it only when asked

    pid = holder(gitive_home())
    return {"anchor_running": pid is not None, "anchor_pid": pid}


# --- helpers -----------------------------------------------------------------------------------------------


def _run(argv: list[str]) -> tuple[int, str, str]:
    """Run a service-manager command; 127 when it is not installed or did not answer in time."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 127, "", str(exc)
    return proc.returncode, proc.stdout, proc.stderr


def _must(argv: list[str], path: Path) -> None:
    code, out, err = _run(argv)
    if code != 0:
        last = next((ln.strip() for ln in reversed((err or out).splitlines()) if ln.strip()), "no message")
        raise GitiveError(f"wrote {path}, but `{' '.join(argv)}` failed (exit {code}): {last}")


def _check(home: Path, python: str, interval: float, unit: Unit = DAEMON) -> None:
    if not math.isfinite(interval) or interval < 1:
        raise GitiveError(f"--interval must be a number of seconds, at least 1 (got {interval:g})")
    if not os.path.isabs(python):
        raise GitiveError(f"the {unit.kind}'s interpreter must be an absolute path, not {python!r}")
    for what, text in (("the interpreter path", python), ("GITIVE_HOME", str(home)),
                       *(("the repository path", a) for a in unit.args)):
        if any(ord(c) < 32 or ord(c) == 127 for c in text):
            raise GitiveError(f"{what} {text!r} holds a control character, which a service file cannot carry")


def _specifiers(text: str) -> str:
    return text.replace("%", "%%")  # systemd expands %-specifiers in Description, ExecStart and Environment


def _word(text: str, dollars: bool = False) -> str:
    """One argument of a systemd command line or ``Environment=``: quoted when it needs to be."""
    text = _specifiers(text)
    if dollars:  # ExecStart substitutes $VAR; $$ is a literal dollar
        text = text.replace("$", "$$")
    if text and not any(c in text for c in " \t\"'\\;"):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ours(manager: str, name: str, data: bytes, unit: Unit = DAEMON) -> bool:
    """True for a service file gitive wrote, even if edited since: the marker line, or our launchd label."""
    if manager == "systemd":
        return data.startswith(unit.marker.encode())
    try:
        value = plistlib.loads(data)
    except Exception:  # plistlib raises several unrelated types for garbage
        return False
    return isinstance(value, dict) and value.get("Label") == name


def _config_home() -> Path:
    # The XDG base-directory spec ignores a relative XDG_CONFIG_HOME; systemd does the same.
    value = os.environ.get("XDG_CONFIG_HOME", "")
    return Path(value) if os.path.isabs(value) else Path.home() / ".config"


def _make_dirs(folder: Path) -> list[str]:
    """Create ``folder`` and missing parents; return those created, outermost first."""
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
    return [str(p) for p in reversed(missing)]


def _load(home: Path, unit: Unit = DAEMON) -> dict[str, Any] | None:
    path = home / unit.state_file
    try:
        value = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise GitiveError(f"{path} is unreadable ({exc}); move it away to start over (the service file "
                          "is then left as it is)") from None
    if not isinstance(value, dict) or not {"manager", "name", "path"} <= value.keys():
        raise GitiveError(f"{path} is not a gitive service record; move it away to start over")
    return value


def _save(home: Path, record: dict[str, Any], unit: Unit = DAEMON) -> None:
    st.write_atomic(home / unit.state_file, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())
