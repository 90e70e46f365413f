"""Harness configuration written as owned entries: kept user content, idempotence, exact uninstall."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from gitive.capture.adapters import ADAPTERS
from gitive.errors import GitiveError, NotARepository
from gitive.install import installer, state
from testing.fixtures import run_git
from tests.install.support import install, read_json, snapshot, uninstall

USER_SETTINGS = """{
    "permissions": {"allow": ["Bash(make test)"]},
    "hooks": {
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    }
}
"""
USER_MCP = '{"mcpServers": {"db": {"command": "db-mcp", "args": []}}}'  # no trailing newline, one line
USER_TOML = '# my codex settings\nmodel = "o3"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"\n'
USER_CURSOR = '{\n\t"version": 1,\n\t"hooks": {"stop": [{"command": "./after.sh"}]}\n}\n'


def write(repo: Path, rel: str, text: str) -> Path:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_files(repo: Path) -> None:
    write(repo, ".claude/settings.json", USER_SETTINGS)
    write(repo, ".mcp.json", USER_MCP)
    write(repo, ".codex/config.toml", USER_TOML)
    write(repo, ".cursor/hooks.json", USER_CURSOR)
    write(repo, ".gemini/settings.json", '{"theme": "dark"}\n')


def commands(groups: list[dict]) -> list[str]:
    return [h["command"] for g in groups for h in g["hooks"]]


def test_install_then_uninstall_in_a_repository_without_configuration_leaves_it_byte_identical(
        git_repo: Path) -> None:
    before = snapshot(git_repo)
    report = install(git_repo)
    assert {f["path"] for f in report.files} == {
        ".claude/settings.json", ".mcp.json", ".codex/hooks.json", ".codex/config.toml", ".cursor/hooks.json",
        ".cursor/mcp.json", ".gemini/settings.json"}
    assert all(f["outcome"] == "written" for f in report.files)
    uninstall(git_repo)
    assert snapshot(git_repo) == before
    assert not (git_repo / ".claude").exists() and not (git_repo / ".git" / "gitive").exists()


def test_install_writes_every_adapter_event_and_the_mcp_server(git_repo: Path) -> None:
    install(git_repo)
    settings = read_json(git_repo / ".claude/settings.json")
    for event, hook in ADAPTERS["claude"].hooks.items():
        assert commands(settings["hooks"][hook]) == [f"gitive-hook claude {event}"]
        assert settings["hooks"][hook][0]["hooks"][0]["timeout"] == 5
    assert settings["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact|fork"
    assert settings["hooks"]["PostToolUse"][0]["matcher"] == "*"
    assert read_json(git_repo / ".mcp.json") == {
        "mcpServers": {"gitive": {"type": "stdio", "command": "gitive", "args": ["mcp"]}}}
    codex = read_json(git_repo / ".codex/hooks.json")
    assert set(codex["hooks"]) == set(ADAPTERS["codex"].hooks.values())
    config = tomllib.loads((git_repo / ".codex/config.toml").read_text())
    assert config == {"mcp_servers": {"gitive": {"command": "gitive", "args": ["mcp"], "startup_timeout_sec": 20}}}
    cursor = read_json(git_repo / ".cursor/hooks.json")
    assert cursor["version"] == 1
    assert cursor["hooks"] == {hook: [{"command": f"gitive-hook cursor {event}"}]
                               for event, hook in ADAPTERS["cursor"].hooks.items()}
    assert read_json(git_repo / ".cursor/mcp.json") == {"mcpServers": {"gitive": {"command": "gitive",
                                                                                  "args": ["mcp"]}}}
    gemini = read_json(git_repo / ".gemini/settings.json")
    assert gemini["hooks"]["AfterTool"] == [{"hooks": [{"type": "command", "command": "gitive-hook gemini post-tool",
                                                        "timeout": 5000}]}]
    assert "gitive" in gemini["mcpServers"]


def test_install_keeps_user_content_and_style_and_uninstall_restores_the_bytes(git_repo: Path) -> None:
    user_files(git_repo)
    before = snapshot(git_repo)
    install(git_repo)
    settings_text = (git_repo / ".claude/settings.json").read_text()
    assert '\n    "permissions"' in settings_text  # the file's four-space indentation is kept
    settings = json.loads(settings_text)
    assert settings["permissions"] == {"allow": ["Bash(make test)"]}
    assert commands(settings["hooks"]["PostToolUse"]) == ["./lint.sh", "gitive-hook claude post-tool"]
    assert commands(settings["hooks"]["Notification"]) == ["notify-send done"]
    assert set(read_json(git_repo / ".mcp.json")["mcpServers"]) == {"db", "gitive"}
    assert not (git_repo / ".mcp.json").read_text().endswith("\n")
    toml_text = (git_repo / ".codex/config.toml").read_text()
    assert toml_text.startswith(USER_TOML)
    assert set(tomllib.loads(toml_text)["mcp_servers"]) == {"docs", "gitive"}
    cursor_text = (git_repo / ".cursor/hooks.json").read_text()
    assert '\n\t"version": 1' in cursor_text
    assert json.loads(cursor_text)["hooks"]["stop"] == [{"command": "./after.sh"}, {"command": "gitive-hook cursor stop"}]
    assert read_json(git_repo / ".gemini/settings.json")["theme"] == "dark"
    uninstall(git_repo)
    assert snapshot(git_repo) == before


def test_install_twice_changes_nothing(git_repo: Path) -> None:
    user_files(git_repo)
    install(git_repo)
    once = snapshot(git_repo)
    report = install(git_repo)
    assert all(f["outcome"] == "unchanged" for f in report.files)
    assert snapshot(git_repo) == once
    uninstall(git_repo)
    uninstall(git_repo)  # a second uninstall finds nothing to do
    assert read_json(git_repo / ".claude/settings.json") == json.loads(USER_SETTINGS)


def test_edits_made_after_install_are_kept_by_uninstall(git_repo: Path) -> None:
    user_files(git_repo)
    install(git_repo)
    path = git_repo / ".claude/settings.json"
    settings = read_json(path)
    settings["permissions"]["allow"].append("Bash(git status)")
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "./on-stop.sh"}]})
    path.write_text(json.dumps(settings, indent=2))
    toml = git_repo / ".codex/config.toml"
    toml.write_text(toml.read_text() + '\n[mcp_servers.later]\ncommand = "later"\n')
    mcp = git_repo / ".cursor/mcp.json"  # created by install, then given a server of the user's own
    mcp.write_text(json.dumps({"mcpServers": {**read_json(mcp)["mcpServers"], "mine": {"command": "m"}}}))
    report = uninstall(git_repo)
    outcomes = {f["path"]: f["outcome"] for f in report.files}
    assert outcomes[".claude/settings.json"] == outcomes[".codex/config.toml"] == "cleaned"
    assert outcomes[".mcp.json"] == "restored" and outcomes[".codex/hooks.json"] == "removed"
    settings = read_json(path)
    assert settings["permissions"]["allow"] == ["Bash(make test)", "Bash(git status)"]
    assert settings["hooks"] == {
        "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "./lint.sh"}]}],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "./on-stop.sh"}]}]}
    assert tomllib.loads(toml.read_text())["mcp_servers"] == {"docs": {"command": "docs-mcp"},
                                                              "later": {"command": "later"}}
    assert read_json(mcp) == {"mcpServers": {"mine": {"command": "m"}}}


def test_a_file_emptied_of_ours_after_an_edit_is_deleted_when_install_created_it(git_repo: Path) -> None:
    install(git_repo, ("cursor",), hooks=False)
    path = git_repo / ".cursor/hooks.json"
    path.write_text(json.dumps(read_json(path)))  # reformatted by an editor: no longer install's bytes
    uninstall(git_repo)
    assert not (git_repo / ".cursor").exists()


def test_reinstall_after_an_edit_keeps_the_edit_through_uninstall(git_repo: Path) -> None:
    install(git_repo, ("claude",), hooks=False)
    path = git_repo / ".claude/settings.json"
    path.write_text(json.dumps({**read_json(path), "model": "opus"}, indent=2) + "\n")
    install(git_repo, ("claude",), hooks=False)
    uninstall(git_repo)
    assert read_json(path) == {"model": "opus"}


def test_a_file_deleted_after_install_is_reported_missing(git_repo: Path) -> None:
    install(git_repo, ("codex",), hooks=False)
    (git_repo / ".codex/hooks.json").unlink()
    (git_repo / ".codex/config.toml").unlink()
    report = uninstall(git_repo)
    assert {f["outcome"] for f in report.files} == {"missing"}
    assert not (git_repo / ".codex").exists()


@pytest.mark.parametrize(("rel", "text", "words"), [
    (".claude/settings.json", '{"hooks": {', "not valid JSON"),
    (".mcp.json", "[1, 2]", "JSON list, not an object"),
    (".cursor/hooks.json", '{"hooks": []}', '"hooks" is a list'),
    (".codex/config.toml", "model = \n", "not valid TOML"),
    (".codex/config.toml", "mcp_servers = { docs = { command = \"d\" } }\n", "cannot take a [mcp_servers.gitive]"),
])
def test_an_unreadable_file_stops_install_with_nothing_written(git_repo: Path, rel: str, text: str,
                                                               words: str) -> None:
    write(git_repo, rel, text)
    before = snapshot(git_repo)
    with pytest.raises(GitiveError) as info:
        install(git_repo)
    assert rel in str(info.value) and words in str(info.value)
    assert "nothing was written" in str(info.value)
    assert snapshot(git_repo) == before


def test_entries_already_present_are_left_alone_and_stay_after_uninstall(git_repo: Path) -> None:
    """A teammate committed the settings with gitive's entries: install adds nothing, so uninstall removes
    nothing."""
    install(git_repo, ("claude",), hooks=False)
    committed = (git_repo / ".claude/settings.json").read_bytes()
    uninstall(git_repo)
    compact = json.dumps(json.loads(committed))  # same content in another layout
    write(git_repo, ".claude/settings.json", compact)
    report = install(git_repo, ("claude",), hooks=False)
    assert {f["path"]: f["outcome"] for f in report.files}[".claude/settings.json"] == "unchanged"
    assert (git_repo / ".claude/settings.json").read_text() == compact
    uninstall(git_repo)
    assert (git_repo / ".claude/settings.json").read_text() == compact


def test_a_users_own_gitive_server_entry_is_kept(git_repo: Path) -> None:
    mine = {"command": "/opt/gitive/bin/gitive", "args": ["mcp"]}
    write(git_repo, ".mcp.json", json.dumps({"mcpServers": {"gitive": mine}}))
    write(git_repo, ".codex/config.toml", '[mcp_servers.gitive]\ncommand = "/opt/gitive/bin/gitive"\n')
    install(git_repo, ("claude", "codex"), hooks=False)
    assert read_json(git_repo / ".mcp.json")["mcpServers"]["gitive"] == mine
    assert "# >>> gitive" not in (git_repo / ".codex/config.toml").read_text()


def test_stale_gitive_entries_on_events_no_longer_registered_are_replaced(git_repo: Path) -> None:
    stale = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": "gitive-hook claude pre-tool"},
        {"type": "command", "command": "./guard.sh"}]}],
        "PostToolUse": [{"hooks": [{"type": "command", "command": "gitive-hook claude post-tool --old"}]}]}}
    write(git_repo, ".claude/settings.json", json.dumps(stale, indent=2))
    install(git_repo, ("claude",), hooks=False)
    hooks = read_json(git_repo / ".claude/settings.json")["hooks"]
    assert commands(hooks["PreToolUse"]) == ["./guard.sh"]
    assert commands(hooks["PostToolUse"]) == ["gitive-hook claude post-tool"]


def test_uninstall_of_one_harness_leaves_the_others(git_repo: Path) -> None:
    install(git_repo, ("claude", "cursor"), hooks=False)
    uninstall(git_repo, ("cursor",), hooks=False)
    assert not (git_repo / ".cursor").exists()
    assert (git_repo / ".claude/settings.json").exists()
    assert set(state.load(git_repo / ".git")["files"]) == {".claude/settings.json", ".mcp.json"}


def test_installing_from_a_subdirectory_writes_at_the_top(git_repo: Path) -> None:
    (git_repo / "src" / "deep").mkdir(parents=True)
    install(git_repo / "src" / "deep", ("claude",), hooks=False)
    assert (git_repo / ".claude/settings.json").exists() and not (git_repo / "src/.claude").exists()


def test_a_linked_worktree_keeps_its_own_record(git_repo: Path, tmp_path: Path) -> None:
    run_git(["worktree", "add", "-q", "-b", "wt", str(tmp_path / "wt")], cwd=git_repo)
    install(tmp_path / "wt", ("claude",), hooks=False)
    assert (tmp_path / "wt/.claude/settings.json").exists() and not (git_repo / ".claude").exists()
    assert state.load(git_repo / ".git")["files"] == {}
    uninstall(tmp_path / "wt")
    assert not (tmp_path / "wt/.claude").exists()


def test_outside_a_work_tree_is_refused(bare_remote: Path) -> None:
    with pytest.raises(NotARepository):
        install(bare_remote)


def test_unknown_harness_names_are_refused() -> None:
    assert installer.harness_names(" Claude, codex,claude") == ["claude", "codex"]
    with pytest.raises(GitiveError, match="unknown harness vim"):
        installer.harness_names("claude,vim")


def test_an_older_install_without_the_fork_matcher_is_brought_up_to_date(
        git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.install import base, claude, status

    user_files(git_repo)
    before = snapshot(git_repo)
    old = base.claude_style_entries("claude", {"SessionStart": "startup|resume|clear|compact",
                                               "PostToolUse": "*"}, base.HOOK_TIMEOUT_S)
    with monkeypatch.context() as m:  # what gitive wrote before Claude's SessionStart reported "fork"
        m.setattr(claude, "ENTRIES", old)
        install(git_repo, ("claude",))
    path = git_repo / ".claude/settings.json"
    assert read_json(path)["hooks"]["SessionStart"][0]["matcher"] == "startup|resume|clear|compact"
    assert status.status(git_repo)["harnesses"]["claude"]["hooks"]["installed"] is False  # outdated
    report = install(git_repo, ("claude",))
    assert {f["path"]: f["outcome"] for f in report.files}[".claude/settings.json"] == "written"
    session_start = read_json(path)["hooks"]["SessionStart"]
    assert [g["matcher"] for g in session_start] == ["startup|resume|clear|compact|fork"]
    assert commands(session_start) == ["gitive-hook claude session-start"]
    assert commands(read_json(path)["hooks"]["PostToolUse"]) == ["./lint.sh", "gitive-hook claude post-tool"]
    assert status.status(git_repo)["harnesses"]["claude"]["hooks"]["installed"] is True
    uninstall(git_repo)
    assert snapshot(git_repo) == before
