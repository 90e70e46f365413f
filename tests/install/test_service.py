"""``gitive install --service``: the unit and plist files exactly, the no-session path with the real systemctl,
the session path with a recording stand-in, exact uninstall, and the service in ``gitive status``.

``HOME`` and ``XDG_CONFIG_HOME`` point at temp dirs in every test, so no real user unit is touched (except in
the one test that needs a real systemd user session, skipped without one).
"""

from __future__ import annotations

import hashlib
import json
import os
import plistlib
import pwd
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gitive.errors import GitiveError
from gitive.install import service
from testing.machines import Result, run_cli
from tests.install.support import snapshot

PY = "/opt/py/bin/python3"

FAKE_SYSTEMCTL = """#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_LOG"
shift
case "$1" in
  is-system-running) echo "$FAKE_SYSTEMD"; [ "$FAKE_SYSTEMD" = running ]; exit $? ;;
  is-enabled) if [ -e "$FAKE_LOG.enabled" ]; then echo enabled; exit 0; fi; echo disabled; exit 1 ;;
  is-active) if [ -e "$FAKE_LOG.enabled" ]; then echo active; exit 0; fi; echo inactive; exit 3 ;;
  enable) if [ -n "$FAKE_FAIL" ]; then echo "$FAKE_FAIL" >&2; exit 1; fi; touch "$FAKE_LOG.enabled" ;;
  disable) rm -f "$FAKE_LOG.enabled" ;;
esac
exit 0
"""

FAKE_LAUNCHCTL = """#!/bin/sh
printf '%s\\n' "$*" >> "$FAKE_LOG"
case "$1" in
  print) if [ -e "$FAKE_LOG.loaded" ]; then printf '%s = {\\n\\tstate = running\\n}\\n' "$2"; exit 0; fi
         echo "Could not find service" >&2; exit 113 ;;
  bootstrap) touch "$FAKE_LOG.loaded" ;;
  bootout) [ -e "$FAKE_LOG.loaded" ] || exit 3; rm -f "$FAKE_LOG.loaded" ;;
esac
exit 0
"""


@pytest.fixture(autouse=True)
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``HOME`` and ``XDG_CONFIG_HOME`` in this test's temp dir (neither ``.config`` nor ``systemd`` exists)."""
    home = tmp_path / "user"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    return home


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Callable[[], list[str]]]:
    """``fake("systemctl", systemd="running")`` puts a recording stand-in first on PATH; returns its calls."""
    folder = tmp_path / "fake-bin"
    folder.mkdir(exist_ok=True)
    log = tmp_path / "fake.log"
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_LOG", str(log))

    def make(tool: str, systemd: str = "offline") -> Callable[[], list[str]]:
        (folder / tool).write_text(FAKE_SYSTEMCTL if tool == "systemctl" else FAKE_LAUNCHCTL)
        (folder / tool).chmod(0o755)
        monkeypatch.setenv("FAKE_SYSTEMD", systemd)
        return lambda: [ln for ln in log.read_text().splitlines() if "is-system-running" not in ln] \
            if log.exists() else []

    return make


def home_of(gitive_home: Path) -> Path:
    return gitive_home.resolve()


def unit_path(user_home: Path, gitive_home: Path) -> Path:
    key = hashlib.sha256(str(home_of(gitive_home)).encode()).hexdigest()[:12]
    return user_home / ".config/systemd/user" / f"gitive-daemon-{key}.service"


def expected_unit(gitive_home: Path, python: str = PY, interval: str = "30") -> str:
    home = home_of(gitive_home)
    return (
        f"{service.MARKER}\n"
        "[Unit]\n"
        f"Description=gitive daemon for {home}\n"
        "\n"
        "[Service]\n"
        f"ExecStart={python} -m gitive.daemon --interval {interval}\n"
        f"Environment=GITIVE_HOME={home}\n"
        "Restart=on-failure\n"
        "RestartSec=5\n"
        "\n"
        "[Install]\n"
        "WantedBy=default.target\n"
    )


def gitive(cwd: Path, *argv: str, env: dict[str, str | None] | None = None) -> Result:
    return run_cli(list(argv), cwd, env or {})


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    """A directory outside any repository: --service needs none."""
    folder = tmp_path / "plain"
    folder.mkdir()
    return folder


# --- the files ---------------------------------------------------------------------------------------------


def test_service_file_linux_is_the_exact_unit_under_xdg_config_home(user_home: Path, gitive_home: Path) -> None:
    sf = service.service_file(home_of(gitive_home), PY, 30.0, platform="linux")
    assert sf.manager == "systemd" and sf.path == unit_path(user_home, gitive_home)
    assert sf.name == sf.path.name
    assert sf.content.decode() == expected_unit(gitive_home)


def test_service_file_linux_interval_is_written_as_given(gitive_home: Path) -> None:
    sf = service.service_file(home_of(gitive_home), PY, 2.5, platform="linux")
    assert sf.content.decode() == expected_unit(gitive_home, interval="2.5")


def test_service_file_linux_quotes_spaces_and_escapes_percent_and_dollar(tmp_path: Path) -> None:
    home = tmp_path / 'my "home" 100%'
    text = service.service_file(home, "/opt/my py/$bin/python", 30.0, platform="linux").content.decode()
    lines = text.splitlines()
    # The program path gets no $-substitution from systemd, the arguments and Environment do not need it.
    assert 'ExecStart="/opt/my py/$bin/python" -m gitive.daemon --interval 30' in lines
    escaped = str(home).replace("%", "%%").replace('"', '\\"')
    assert f'Environment="GITIVE_HOME={escaped}"' in lines
    assert f"Description=gitive daemon for {str(home).replace('%', '%%')}" in lines


def test_service_file_linux_without_xdg_config_home_uses_dot_config(user_home: Path, gitive_home: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME")
    assert service.service_file(gitive_home, PY, 30.0, "linux").path.parent == user_home / ".config/systemd/user"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/config")  # the XDG spec says to ignore a relative value
    assert service.service_file(gitive_home, PY, 30.0, "linux").path.parent == user_home / ".config/systemd/user"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user_home / "elsewhere"))
    assert service.service_file(gitive_home, PY, 30.0, "linux").path.parent == user_home / "elsewhere/systemd/user"


def test_service_file_darwin_is_the_exact_plist_in_launch_agents(user_home: Path, gitive_home: Path) -> None:
    home = home_of(gitive_home)
    sf = service.service_file(home, PY, 45.0, platform="darwin")
    label = f"dev.gitive.daemon.{service.home_key(home)}"
    assert sf.manager == "launchd" and sf.name == label
    assert sf.path == user_home / "Library/LaunchAgents" / f"{label}.plist"
    assert sf.content.startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist')
    assert plistlib.loads(sf.content) == {
        "Label": label,
        "ProgramArguments": [PY, "-m", "gitive.daemon", "--interval", "45"],
        "EnvironmentVariables": {"GITIVE_HOME": str(home)},
        "KeepAlive": {"SuccessfulExit": False},
        "RunAtLoad": True,
        "StandardOutPath": str(home / "daemon.log"),
        "StandardErrorPath": str(home / "daemon.log"),
    }


def test_home_key_names_one_service_per_gitive_home(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    assert service.home_key(a) != service.home_key(b) and len(service.home_key(a)) == 12
    assert service.locate(a, "systemd")[0] != service.locate(b, "systemd")[0]


@pytest.mark.parametrize(("python", "interval", "message"), [
    (PY, 0.5, "--interval must be a number of seconds, at least 1 (got 0.5)"),
    (PY, float("nan"), "--interval must be a number of seconds, at least 1 (got nan)"),
    ("python3", 30.0, "the daemon's interpreter must be an absolute path, not 'python3'"),
    ("/opt/py\n/python", 30.0, "holds a control character"),
])
def test_service_file_refuses_bad_input(gitive_home: Path, python: str, interval: float, message: str) -> None:
    with pytest.raises(GitiveError, match=message.replace("(", r"\(").replace(")", r"\)")):
        service.service_file(gitive_home, python, interval, "linux")


def test_manager_for_an_unsupported_platform_is_one_line() -> None:
    with pytest.raises(GitiveError) as info:
        service.manager_for("win32")
    assert "not on win32" in str(info.value) and "\n" not in str(info.value)
    assert service.manager_for("linux") == "systemd" and service.manager_for("darwin") == "launchd"


# --- install without a user session ----------------------------------------------------------------------


def _no_real_session() -> str | None:
    """Why the real-systemctl no-session test cannot run here, or None when it can."""
    if shutil.which("systemctl") is None:
        return "systemctl is not installed"
    if service.systemd_user_available():
        return "a systemd user session is running here; the stand-in tests cover the no-session path"
    return None


@pytest.mark.skipif(_no_real_session() is not None, reason=str(_no_real_session()))
def test_install_service_without_a_user_session_writes_the_unit_and_says_how_to_start_it(
        plain: Path, user_home: Path, gitive_home: Path) -> None:
    result = gitive(plain, "install", "--service")
    assert result.code == 0, str(result)
    path = unit_path(user_home, gitive_home)
    assert result.out == (f"wrote {path}; no systemd user session here, so it was not started: "
                          f"`systemctl --user daemon-reload && systemctl --user enable --now {path.name}` "
                          "starts it (or `gitive daemon start` meanwhile)\n")
    assert path.read_text() == expected_unit(gitive_home, python=sys.executable)
    record = json.loads((gitive_home / "service.json").read_text())
    assert record["path"] == str(path) and record["manager"] == "systemd"
    assert record["created_dirs"] == [str(user_home / ".config"), str(user_home / ".config/systemd"),
                                      str(user_home / ".config/systemd/user")]
    found = gitive(plain, "install", "--service", "--json").json()["service"]
    assert found["outcome"] == "unchanged" and found["started"] is False and "enable --now" in found["hint"]


def test_install_service_with_the_manager_offline_calls_no_enable(plain: Path, user_home: Path,
                                                                  gitive_home: Path, fake: Callable) -> None:
    calls = fake("systemctl", systemd="offline")
    report = gitive(plain, "install", "--service", "--json").json()
    assert report["service"]["started"] is False and report["service"]["outcome"] == "written"
    assert report["repository"] is None and report["files"] == [] and report["git_hooks"] is None
    assert calls() == []
    assert unit_path(user_home, gitive_home).read_text() == expected_unit(gitive_home, python=sys.executable)


def test_install_service_is_idempotent(plain: Path, user_home: Path, gitive_home: Path, fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    assert gitive(plain, "install", "--service").code == 0
    path = unit_path(user_home, gitive_home)
    before = snapshot(user_home), (gitive_home / "service.json").read_bytes(), path.stat().st_mtime_ns
    again = gitive(plain, "install", "--service")
    assert again.code == 0 and again.out.startswith(f"already in place {path};")
    assert (snapshot(user_home), (gitive_home / "service.json").read_bytes(), path.stat().st_mtime_ns) == before


def test_install_service_rewrites_the_unit_for_a_new_interval(plain: Path, user_home: Path, gitive_home: Path,
                                                              fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    gitive(plain, "install", "--service")
    result = gitive(plain, "install", "--service", "--interval", "90", "--json").json()["service"]
    assert result["outcome"] == "written"
    assert unit_path(user_home, gitive_home).read_text() == expected_unit(gitive_home, sys.executable, "90")


def test_uninstall_service_leaves_home_byte_identical(plain: Path, user_home: Path, gitive_home: Path,
                                                      fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    (user_home / ".profile").write_text("keep me\n")
    before = snapshot(user_home)
    assert gitive(plain, "install", "--service").code == 0
    result = gitive(plain, "uninstall", "--service")
    assert result.code == 0 and result.out == f"removed {unit_path(user_home, gitive_home)}\n"
    assert snapshot(user_home) == before
    assert not (gitive_home / "service.json").exists()
    again = gitive(plain, "uninstall", "--service")
    assert again.out == f"no gitive service was installed for {home_of(gitive_home)}\n"


def test_uninstall_service_keeps_folders_it_did_not_create_and_other_units(
        plain: Path, user_home: Path, gitive_home: Path, fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    units = user_home / ".config/systemd/user"
    units.mkdir(parents=True)
    (units / "mine.service").write_text("[Service]\nExecStart=/bin/true\n")
    gitive(plain, "install", "--service")
    assert json.loads((gitive_home / "service.json").read_text())["created_dirs"] == []
    gitive(plain, "uninstall", "--service")
    assert sorted(p.name for p in units.iterdir()) == ["mine.service"]


def test_uninstall_service_removes_an_edited_unit_that_is_still_ours(
        plain: Path, user_home: Path, gitive_home: Path, fake: Callable) -> None:
    calls = fake("systemctl", systemd="offline")
    gitive(plain, "install", "--service")
    path = unit_path(user_home, gitive_home)
    path.write_text(path.read_text().replace("RestartSec=5", "RestartSec=30"))
    assert gitive(plain, "uninstall", "--service", "--json").json()["service"]["outcome"] == "removed"
    assert not path.exists()
    assert calls() == [f"--user disable {path.name}"]  # offline, disable still drops a wants link


def test_uninstall_service_keeps_a_unit_that_is_no_longer_ours(plain: Path, user_home: Path, gitive_home: Path,
                                                               fake: Callable) -> None:
    calls = fake("systemctl", systemd="running")
    gitive(plain, "install", "--service")
    path = unit_path(user_home, gitive_home)
    path.write_text("[Service]\nExecStart=/usr/bin/something-else\n")
    result = gitive(plain, "uninstall", "--service")
    assert result.out == f"left {path}: it changed since install and is no longer gitive's\n"
    assert path.read_text() == "[Service]\nExecStart=/usr/bin/something-else\n"
    assert not any(c.startswith("--user disable") for c in calls())


def test_a_foreign_file_in_the_way_is_refused_and_left_alone(plain: Path, user_home: Path, gitive_home: Path,
                                                             fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    path = unit_path(user_home, gitive_home)
    path.parent.mkdir(parents=True)
    path.write_text("[Service]\nExecStart=/bin/true\n")
    result = gitive(plain, "install", "--service")
    assert result.code == 1 and result.err == (f"gitive: {path} exists and gitive did not write it; move it away, "
                                               "then run `gitive install --service` again\n")
    assert path.read_text() == "[Service]\nExecStart=/bin/true\n"
    assert not (gitive_home / "service.json").exists()


def test_a_unit_of_ours_left_without_a_record_is_adopted(plain: Path, user_home: Path, gitive_home: Path,
                                                        fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    gitive(plain, "install", "--service")
    (gitive_home / "service.json").unlink()
    assert gitive(plain, "install", "--service").code == 0
    assert gitive(plain, "uninstall", "--service").code == 0
    assert not unit_path(user_home, gitive_home).exists()


@pytest.mark.parametrize(("argv", "message"), [
    (("install", "--interval", "60"), "gitive: --interval goes with --service: gitive install --service "
                                      "--interval 60\n"),
    (("install", "--service", "--interval", "0"), "gitive: --interval must be a number of seconds, at least 1 "
                                                  "(got 0)\n"),
])
def test_bad_input_is_one_line_and_exit_1(plain: Path, argv: tuple[str, ...], message: str,
                                          fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    result = gitive(plain, *argv)
    assert result.code == 1 and result.err == message


def test_a_bad_interval_with_a_harness_writes_nothing(git_repo: Path, fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    before = snapshot(git_repo)
    result = gitive(git_repo, "install", "--harness", "claude", "--service", "--interval", "0.1")
    assert result.code == 1 and "--interval must be" in result.err
    assert snapshot(git_repo) == before


def test_an_unreadable_record_is_one_line(plain: Path, gitive_home: Path, fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    gitive_home.mkdir(parents=True)
    (gitive_home / "service.json").write_text("{oops")
    result = gitive(plain, "uninstall", "--service")
    assert result.code == 1 and result.err.startswith(f"gitive: {home_of(gitive_home) / 'service.json'} is "
                                                      "unreadable") and result.err.count("\n") == 1


# --- install with a user session (a recording stand-in for systemctl) -------------------------------------


def test_with_a_user_session_install_reloads_enables_and_starts(plain: Path, user_home: Path, gitive_home: Path,
                                                                fake: Callable) -> None:
    calls = fake("systemctl", systemd="running")
    name = unit_path(user_home, gitive_home).name
    first = gitive(plain, "install", "--service")
    assert first.code == 0 and first.out.endswith(f"service {name} started: `gitive status` shows whether the "
                                                  "daemon answers\n")
    assert calls() == ["--user daemon-reload", f"--user enable --now {name}"]
    gitive(plain, "install", "--service")  # unchanged: no reload, enable --now is a no-op for a running unit
    assert calls()[2:] == [f"--user enable --now {name}"]
    gitive(plain, "install", "--service", "--interval", "60")  # changed: reload and restart the running unit
    assert calls()[3:] == ["--user daemon-reload", f"--user enable --now {name}", f"--user try-restart {name}"]
    result = gitive(plain, "uninstall", "--service")
    assert result.out == f"stopped the service, removed {unit_path(user_home, gitive_home)}\n"
    assert calls()[6:] == [f"--user disable --now {name}", "--user daemon-reload"]


def test_with_a_user_session_a_refused_enable_is_one_line_and_recorded(
        plain: Path, user_home: Path, gitive_home: Path, fake: Callable, monkeypatch: pytest.MonkeyPatch) -> None:
    fake("systemctl", systemd="running")
    monkeypatch.setenv("FAKE_FAIL", "Failed to enable unit: Access denied")
    path = unit_path(user_home, gitive_home)
    result = gitive(plain, "install", "--service")
    assert result.code == 1
    assert result.err == (f"gitive: wrote {path}, but `systemctl --user enable --now {path.name}` failed "
                          "(exit 1): Failed to enable unit: Access denied\n")
    monkeypatch.delenv("FAKE_FAIL")
    assert gitive(plain, "uninstall", "--service").code == 0 and not path.exists()


# --- launchd (the darwin writer and its launchctl calls, run on any platform) -----------------------------


def test_launchd_install_bootstraps_and_uninstall_boots_out(user_home: Path, gitive_home: Path,
                                                            fake: Callable) -> None:
    calls = fake("launchctl")
    report = service.install(PY, 30.0, platform="darwin")
    label, path = report["name"], Path(report["path"])
    assert path == user_home / "Library/LaunchAgents" / f"{label}.plist" and report["started"] is True
    domain = f"gui/{os.getuid()}"
    assert calls() == [f"print {domain}/{label}", f"bootstrap {domain} {path}"]
    assert service.install(PY, 30.0, platform="darwin")["outcome"] == "unchanged"
    assert calls()[2:] == [f"print {domain}/{label}"]
    service.install(PY, 60.0, platform="darwin")  # a loaded job keeps its old file until reloaded
    assert calls()[3:] == [f"print {domain}/{label}", f"bootout {domain}/{label}", f"bootstrap {domain} {path}"]
    found = service.status(platform="darwin")
    assert (found["installed"], found["enabled"], found["active"], found["state"]) == (True, True, True, "running")
    assert service.uninstall()["outcome"] == "removed"
    assert calls()[-1] == f"bootout {domain}/{label}"
    assert not path.exists() and not (user_home / "Library").exists()


# --- uninstall and install with the repository parts -------------------------------------------------------


def test_plain_uninstall_in_a_repository_includes_the_service(git_repo: Path, user_home: Path,
                                                              gitive_home: Path, fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    repo_before, home_before = snapshot(git_repo), snapshot(user_home)
    assert gitive(git_repo, "install").code == 0
    assert gitive(git_repo, "install", "--service").code == 0
    assert snapshot(git_repo) != repo_before and unit_path(user_home, gitive_home).exists()
    result = gitive(git_repo, "uninstall")
    assert result.code == 0 and f"removed {unit_path(user_home, gitive_home)}" in result.out
    assert snapshot(git_repo) == repo_before and snapshot(user_home) == home_before


def test_uninstall_of_repository_parts_leaves_the_service(git_repo: Path, user_home: Path, gitive_home: Path,
                                                          fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    gitive(git_repo, "install", "--harness", "claude", "--service")
    assert (git_repo / ".claude/settings.json").exists() and unit_path(user_home, gitive_home).exists()
    report = gitive(git_repo, "uninstall", "--harness", "claude", "--json").json()
    assert report["service"] is None and unit_path(user_home, gitive_home).exists()
    assert not (git_repo / ".claude/settings.json").exists()


def test_service_alone_leaves_the_repository_alone(git_repo: Path, fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    before = snapshot(git_repo)
    assert gitive(git_repo, "install", "--service").code == 0
    assert snapshot(git_repo) == before
    assert gitive(git_repo, "uninstall", "--service").code == 0
    assert "nothing of gitive's is installed here" in gitive(git_repo, "uninstall").out


# --- status ------------------------------------------------------------------------------------------------


@pytest.fixture
def daemon(gitive_home: Path) -> Iterator[int]:
    """A real daemon for this GITIVE_HOME, started with the unit's own command line; stopped afterwards."""
    from gitive.daemon import control

    argv = shlex.split(expected_unit(gitive_home, python=sys.executable).split("ExecStart=")[1].splitlines()[0])
    gitive_home.mkdir(parents=True, exist_ok=True)
    proc = subprocess.Popen(argv, env={**os.environ, "GITIVE_HOME": str(home_of(gitive_home))},
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while control.running() is None:
            assert proc.poll() is None and time.monotonic() < deadline, "the daemon did not come up"
            time.sleep(0.05)
        yield proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)


def test_status_without_a_service(git_repo: Path, user_home: Path, gitive_home: Path, fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    found = gitive(git_repo, "status", "--json").json()["service"]
    assert found["path"] == str(unit_path(user_home, gitive_home)) and found["manager"] == "systemd"
    assert (found["installed"], found["recorded"], found["daemon_running"], found["problem"]) == \
        (False, False, False, None)
    text = gitive(git_repo, "status").out
    assert "service     not installed (`gitive install --service`); daemon not running\n" in text


def test_status_with_the_manager_offline(git_repo: Path, user_home: Path, gitive_home: Path,
                                         fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    gitive(git_repo, "install", "--service")
    found = gitive(git_repo, "status", "--json").json()["service"]
    assert (found["installed"], found["recorded"], found["manager_available"]) == (True, True, False)
    assert (found["enabled"], found["active"]) == (False, None)
    path = unit_path(user_home, gitive_home)
    assert (f"service     installed ({path}), not enabled, systemd not reachable here; daemon not running\n"
            in gitive(git_repo, "status").out)


def test_status_with_a_user_session_and_a_daemon_that_answers(git_repo: Path, user_home: Path,
                                                              gitive_home: Path, fake: Callable,
                                                              daemon: int) -> None:
    fake("systemctl", systemd="running")
    gitive(git_repo, "install", "--service")
    found = gitive(git_repo, "status", "--json").json()["service"]
    assert (found["enabled"], found["active"], found["state"]) == (True, True, "active")
    assert (found["daemon_running"], found["daemon_pid"]) == (True, daemon)
    path = unit_path(user_home, gitive_home)
    assert (f"service     installed ({path}), enabled, active; daemon answers (pid {daemon})\n"
            in gitive(git_repo, "status").out)


def test_status_names_a_unit_file_deleted_since_install(git_repo: Path, user_home: Path, gitive_home: Path,
                                                        fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    gitive(git_repo, "install", "--service")
    unit_path(user_home, gitive_home).unlink()
    found = gitive(git_repo, "status", "--json").json()["service"]
    assert found["installed"] is False and found["recorded"] is True
    assert "was installed but is gone; `gitive install --service` writes it again" in found["problem"]


def test_status_names_an_interpreter_gone_since_install(user_home: Path, gitive_home: Path, tmp_path: Path,
                                                        fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    service.install(str(tmp_path / "venv-gone/bin/python"), 30.0, platform="linux")
    found = service.status(platform="linux")
    assert found["installed"] is True and "venv-gone/bin/python, which is gone" in found["problem"]


def test_status_on_an_unsupported_platform(gitive_home: Path) -> None:
    found = service.status(platform="win32")
    assert found["supported"] is False and found["path"] is None and found["problem"] is None


def test_status_reports_an_unreadable_record(gitive_home: Path, fake: Callable) -> None:
    fake("systemctl", systemd="offline")
    gitive_home.mkdir(parents=True)
    (gitive_home / "service.json").write_text("[]")
    found = service.status(platform="linux")
    assert found["recorded"] is False and "is not a gitive service record" in found["problem"]


# --- the real systemd user manager ------------------------------------------------------------------------


def _user_manager_config() -> Path | None:
    code = subprocess.run(["systemctl", "--user", "is-system-running"], capture_output=True).returncode \
        if shutil.which("systemctl") else 127
    if code != 0:
        return None
    env = dict(line.split("=", 1) for line in subprocess.run(
        ["systemctl", "--user", "show-environment"], capture_output=True, text=True).stdout.splitlines()
        if "=" in line)
    return Path(env.get("XDG_CONFIG_HOME") or Path(env.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir) / ".config")


@pytest.mark.skipif(_user_manager_config() is None,
                    reason="`systemctl --user is-system-running` fails: no systemd user session here")
def test_with_the_real_user_manager_the_service_runs_and_stops(plain: Path, gitive_home: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.daemon import control

    config = _user_manager_config()
    assert config is not None
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))  # where the running manager looks for user units
    try:
        assert gitive(plain, "install", "--service").code == 0
        deadline = time.monotonic() + 20
        while control.running() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        found = service.status()
        assert (found["enabled"], found["active"], found["daemon_running"]) == (True, True, True)
    finally:
        result = gitive(plain, "uninstall", "--service")
    assert result.code == 0 and "stopped the service" in result.out
    assert not service.status()["installed"] and control.running() is None


# --- help ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_install_and_uninstall_help_show_service_with_an_example(command: str, plain: Path) -> None:
    result = run_cli([command, "--help"], plain, {})
    words = " ".join(result.out.replace("│", " ").split())  # the options box wraps the help text
    assert result.code == 0 and "--service" in words and f"Example: gitive {command} --service" in words
    assert "--json" in words


def test_the_anchors_unit_runs_its_loop_for_one_repository(user_home: Path, gitive_home: Path) -> None:
    unit = service.anchor_unit("/srv/api repo")
    sf = service.service_file(home_of(gitive_home), PY, 30, "linux", unit)
    key = hashlib.sha256(str(home_of(gitive_home)).encode()).hexdigest()[:12]
    assert sf.name == f"gitive-anchor-{key}.service"
    text = sf.content.decode()
    assert text.startswith("# gitive-anchor: written by `gitive install --service --anchor`")
    assert f'ExecStart={PY} -m gitive.anchor --repo "/srv/api repo" --interval 30\n' in text
    plist = plistlib.loads(service.service_file(home_of(gitive_home), PY, 30, "darwin", unit).content)
    assert plist["ProgramArguments"] == [PY, "-m", "gitive.anchor", "--repo", "/srv/api repo", "--interval", "30"]
    assert plist["StandardOutPath"].endswith("anchor.log")
    with pytest.raises(GitiveError, match="control character"):
        service.service_file(home_of(gitive_home), PY, 30, "linux", service.anchor_unit("/srv/a\nb"))
