"""``gitive install``, ``uninstall`` and ``status`` through the CLI in-process, then the files they left."""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitive.cli import install as install_cli
from gitive.cli import main
from gitive.install.status import status
from testing.fixtures import run_git
from testing.machines import Result, run_cli
from tests.install.support import snapshot


@pytest.fixture(autouse=True)
def registered() -> None:
    """The commands, registered on the real app if ``gitive.cli.main`` does not register them yet."""
    main._register()
    names = {c.name or (c.callback.__name__ if c.callback else "") for c in main.app.registered_commands}
    if "install" not in names:
        install_cli.register(main.app)


@pytest.fixture
def tools(tmp_path: Path) -> Iterator[Path]:
    """A PATH directory with stand-ins for the `gitive` and `gitive-hook` console scripts."""
    folder = tmp_path / "tools"
    folder.mkdir()
    for name in ("gitive", "gitive-hook"):
        (folder / name).write_text("#!/bin/sh\nexit 0\n")
        (folder / name).chmod(0o755)
    yield folder


def gitive(repo: Path, *argv: str, path: str | None = None) -> Result:
    return run_cli(list(argv), repo, {"PATH": path} if path else {})


def test_install_without_options_installs_claude_codex_cursor_and_the_git_hooks(git_repo: Path) -> None:
    result = gitive(git_repo, "install", "--json")
    assert result.code == 0, str(result)
    report = result.json()
    assert {f["owner"] for f in report["files"]} == {"claude", "codex", "cursor"}
    assert set(report["git_hooks"]["hooks"]) == {"post-commit", "post-merge", "post-rewrite"}
    assert not (git_repo / ".gemini").exists()


def test_harness_alone_installs_no_git_hooks_and_git_hooks_alone_no_harness(git_repo: Path) -> None:
    assert gitive(git_repo, "install", "--harness", "claude").code == 0
    assert (git_repo / ".claude/settings.json").exists() and not (git_repo / ".git/hooks/post-commit").exists()
    assert gitive(git_repo, "install", "--git-hooks").code == 0
    assert (git_repo / ".git/hooks/post-commit").exists() and not (git_repo / ".cursor").exists()


def test_install_then_uninstall_through_the_cli_is_byte_identical(git_repo: Path) -> None:
    (git_repo / ".mcp.json").write_text('{"mcpServers": {}}')
    before = snapshot(git_repo)
    first = gitive(git_repo, "install", "--harness", "claude,codex,cursor,gemini", "--git-hooks")
    assert first.code == 0, str(first)
    assert "wrote .claude/settings.json" in first.out and "git hook post-commit" in first.out
    again = gitive(git_repo, "install", "--harness", "claude,codex,cursor,gemini", "--git-hooks")
    assert "already in place .claude/settings.json" in again.out
    result = gitive(git_repo, "uninstall")
    assert result.code == 0, str(result)
    assert "restored .mcp.json" in result.out and "removed .claude/settings.json" in result.out
    assert snapshot(git_repo) == before
    assert "nothing of gitive's is installed here" in gitive(git_repo, "uninstall").out


def test_an_invalid_file_is_one_line_and_exit_1(git_repo: Path) -> None:
    (git_repo / ".claude").mkdir()
    (git_repo / ".claude/settings.json").write_text("{oops")
    result = gitive(git_repo, "install")
    assert result.code == 1
    assert result.err.startswith("gitive: .claude/settings.json is not valid JSON") and result.err.count("\n") == 1
    assert not (git_repo / ".mcp.json").exists()


def test_an_unknown_harness_is_refused(git_repo: Path) -> None:
    result = gitive(git_repo, "install", "--harness", "claude,emacs")
    assert result.code == 1 and "unknown harness emacs" in result.err


def test_outside_a_repository_install_says_so(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    result = run_cli(["install"], tmp_path / "plain", {"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert result.code == 1 and "not inside a git work tree" in result.err


def test_status_before_and_after_install(git_repo: Path, tools: Path) -> None:
    path = f"{tools}{os.pathsep}{os.environ['PATH']}"
    empty = gitive(git_repo, "status", "--json", path=path).json()
    assert not any(p["installed"] for parts in empty["harnesses"].values() for p in parts.values())
    assert not any(h["installed"] for h in empty["git_hooks"]["hooks"].values())
    gitive(git_repo, "install")
    found = gitive(git_repo, "status", "--json", path=path).json()
    for name in ("claude", "codex", "cursor"):
        for part in ("hooks", "mcp"):
            assert found["harnesses"][name][part]["works"] is True, (name, part)
    assert found["harnesses"]["gemini"]["hooks"]["installed"] is False
    assert all(h["works"] for h in found["git_hooks"]["hooks"].values())
    assert found["git_hooks"]["runner"] == sys.executable and found["git_hooks"]["problem"] is None
    assert found["daemon"]["running"] is False
    assert found["index"]["problem"].startswith("this repository has no gitive team")
    text = gitive(git_repo, "status", path=path)
    assert text.code == 0 and "post-commit" in text.out and "daemon      not running" in text.out


def test_status_reports_commands_missing_from_path(git_repo: Path, tmp_path: Path) -> None:
    gitive(git_repo, "install", "--harness", "claude")
    only_git = tmp_path / "only-git"
    only_git.mkdir()
    (only_git / "git").symlink_to(next(Path(p) / "git" for p in os.environ["PATH"].split(os.pathsep)
                                       if (Path(p) / "git").exists()))
    found = gitive(git_repo, "status", "--json", path=str(only_git)).json()
    hooks = found["harnesses"]["claude"]["hooks"]
    assert hooks["installed"] is True and hooks["works"] is False
    assert "`gitive-hook` is not on PATH" in hooks["problem"]


def test_status_shows_a_broken_git_hook_runner(git_repo: Path, tmp_path: Path, tools: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.install import installer

    installer.install(git_repo, (), True, str(tmp_path / "gone" / "python"))
    (tools / "gitive-hook").unlink()
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{Path(shutil.which('git') or 'git').parent}")
    found = status(git_repo)
    assert found["git_hooks"]["runner"] is None
    assert "commits are not recorded" in found["git_hooks"]["problem"]
    assert not any(h["works"] for h in found["git_hooks"]["hooks"].values())
    assert all(h["installed"] for h in found["git_hooks"]["hooks"].values())
    (tools / "gitive-hook").write_text("#!/bin/sh\nexit 0\n")
    (tools / "gitive-hook").chmod(0o755)
    assert status(git_repo)["git_hooks"]["runner"] == str(tools / "gitive-hook")


def test_status_reads_the_index_of_a_team_repository(git_repo: Path) -> None:
    run_git(["config", "hive.team", "ab" * 16], cwd=git_repo)
    run_git(["config", "hive.founder", "cd" * 32], cwd=git_repo)
    missing = status(git_repo)["index"]
    assert missing["exists"] is False and "gitive index rebuild" in missing["problem"]
    index = git_repo / ".git/gitive/index.sqlite"
    index.parent.mkdir(parents=True)
    sqlite3.connect(index).execute("CREATE TABLE t (x)").connection.close()
    assert status(git_repo)["index"]["readable"] is True
    index.write_bytes(b"not a database" * 100)
    broken = status(git_repo)["index"]
    assert broken["readable"] is False and "unreadable" in broken["problem"]


def test_status_tells_a_live_daemon_from_a_stale_socket(git_repo: Path, gitive_home: Path) -> None:
    gitive_home.mkdir(parents=True, exist_ok=True)
    sock_path = gitive_home / "daemon.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        server.bind(str(sock_path))
        server.listen(1)
        assert status(git_repo)["daemon"]["running"] is True
    finally:
        server.close()
    assert stat.S_ISSOCK(sock_path.stat().st_mode)
    stale = status(git_repo)["daemon"]
    assert stale["running"] is False and "stale" in stale["problem"]


def test_status_json_is_stable_json(git_repo: Path) -> None:
    out = gitive(git_repo, "status", "--json").out
    assert json.loads(out)["repository"] == str(git_repo.resolve())


@pytest.mark.parametrize("command", ["install", "uninstall", "status"])
def test_every_command_has_help_with_an_example_and_json(command: str, tmp_path: Path) -> None:
    result = run_cli([command, "--help"], tmp_path, {})
    assert result.code == 0 and result.err == ""
    assert "Example" in result.out and "--json" in result.out


# --- Codex's trust step -------------------------------------------------------------------------------------


def test_install_prints_codexs_trust_step_and_status_warns_until_the_project_is_trusted(
        git_repo: Path, tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    result = gitive(git_repo, "install", "--harness", "codex")
    assert result.code == 0, str(result)
    [step] = [line for line in result.out.splitlines() if line.startswith("next step:")]
    assert "/hooks" in step and "trust" in step
    assert gitive(git_repo, "install", "--harness", "codex", "--json").json()["steps"] == [
        step.removeprefix("next step: ")]
    assert "next step" not in gitive(git_repo, "install", "--harness", "claude").out
    path = f"{tools}{os.pathsep}{os.environ['PATH']}"
    hooks = gitive(git_repo, "status", "--json", path=path).json()["harnesses"]["codex"]["hooks"]
    assert hooks["works"] is True and "/hooks" in hooks["warning"]
    assert "not marked trusted" in hooks["warning"]
    (codex_home / "config.toml").write_text(f'[projects."{git_repo.resolve()}"]\ntrust_level = "trusted"\n')
    hooks = gitive(git_repo, "status", "--json", path=path).json()["harnesses"]["codex"]["hooks"]
    assert "/hooks" in hooks["warning"] and "not marked trusted" not in hooks["warning"]
    text = gitive(git_repo, "status", path=path).out
    assert "open /hooks and trust gitive's hooks" in text
    claude = gitive(git_repo, "status", "--json", path=path).json()["harnesses"]["claude"]["hooks"]
    assert claude["warning"] is None
