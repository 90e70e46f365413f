"""The sandbox itself, through ``workers.run`` with real bubblewrap: the network a policy lists, what a listed read
path may not show, the worker's own uid and processes, and a clear refusal when bwrap is missing."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from gitive.anchor.prepared import sandbox, workers

pytestmark = pytest.mark.skipif(sandbox.available() is None, reason="bubblewrap (bwrap) is not installed")
READ = (sys.prefix, str(Path(sys.base_prefix).resolve()))


def _run(tmp_path: Path, code: str, policy: sandbox.Policy | None = None, **kw: Any) -> workers.Run:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    home = workers.fresh_home(tmp_path / "homes")
    env = workers.environment(None, home, {})
    policy = policy or sandbox.Policy(READ)
    return workers.run([sys.executable, "-c", code], work, env, 60, policy=policy, **kw)


def test_loopback_only_when_the_policy_says_host(tmp_path: Path) -> None:
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    code = f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n    print('reached')\n" \
           "except OSError as e:\n    print('refused', e)\n"
    try:
        assert "refused" in _run(tmp_path, code).output
        assert "reached" in _run(tmp_path, code, sandbox.Policy(READ, "host")).output
    finally:
        server.close()


def test_a_listed_path_holding_gitive_home_shows_it_empty(tmp_path: Path, monkeypatch: Any) -> None:
    home = tmp_path / "shared" / "gitive-home"
    home.mkdir(parents=True)
    (home / "machine.key").write_text("secret key bytes")
    (tmp_path / "shared" / "tool.txt").write_text("a tool")
    monkeypatch.setenv("GITIVE_HOME", str(home))
    code = (f"import os\nprint('tool:', open({str(tmp_path / 'shared' / 'tool.txt')!r}).read())\n"
            f"print('home:', os.listdir({str(home)!r}))\nprint('uid:', os.getuid())\n"
            "print('pids:', sorted(p for p in os.listdir('/proc') if p.isdigit()))\n")
    run = _run(tmp_path, code, sandbox.Policy((*READ, str(tmp_path / "shared"))))
    assert "tool: a tool" in run.output and "home: []" in run.output, run.output
    assert "uid: 1000" in run.output and "pids: ['1', '2']" in run.output, run.output


def test_without_bwrap_nothing_runs_and_the_problem_says_how_to_install_it(tmp_path: Path,
                                                                          monkeypatch: Any) -> None:
    empty = tmp_path / "no-tools"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    marker = tmp_path / "ran"
    run = _run(tmp_path, f"open({str(marker)!r}, 'w')")
    assert run.problem and "apt-get install bubblewrap" in run.problem and not marker.exists()
