"""Every command documents itself: ``--help`` works and shows an example, and state readers speak ``--json``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer

from gitive.cli import main
from testing.machines import run_cli

# Commands that only change state (or need a person at a terminal) and print a sentence. Every other command
# must accept --json: a new command either speaks JSON or is added here on purpose.
WITHOUT_JSON = {"team remove", "server install-hook", "server uninstall-hook", "project confirm", "retract",
                "review", "review approve", "review reject", "release", "drop", "daemon run", "mcp",
                "team role", "person init", "person register", "person passwd", "person export", "person import",
                "export"}  # export writes JSON Lines already
# Commands that read the hive's state: these must exist and accept --json whatever else changes.
READERS = {"team", "log", "doctor", "sync", "index rebuild", "lessons list", "lessons show", "lessons search",
           "who", "inbox", "held", "status", "daemon status", "project", "owed", "anchor status", "routing"}


def _tree() -> Any:
    main._register()
    return typer.main.get_command(main.app)


def _walk(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, (*path, name))


def _commands() -> list[tuple[tuple[str, ...], Any]]:
    return [(path, cmd) for path, cmd in _walk(_tree()) if path]


def _documented() -> list[tuple[str, ...]]:
    """Commands that run something (the leaves of the tree)."""
    return [path for path, cmd in _commands() if not getattr(cmd, "commands", None)]


def _options(cmd: Any) -> set[str]:
    return {opt for param in cmd.params for opt in getattr(param, "opts", [])}


def test_the_command_tree_is_complete() -> None:
    names = {" ".join(path) for path, _ in _commands()}
    assert {"init", "invite", "join", "team", "team remove", "sync", "log", "doctor", "index rebuild"} <= names


@pytest.mark.parametrize("path", _documented(), ids=" ".join)
def test_every_command_has_help_with_an_example(path: tuple[str, ...], tmp_path: Path) -> None:
    result = run_cli([*path, "--help"], tmp_path, {})
    assert result.code == 0, str(result)
    assert "Example" in result.out, str(result)
    assert "Usage" in result.out and path[-1] in result.out


@pytest.mark.parametrize("path", [p for p, _ in _commands()], ids=" ".join)
def test_every_command_and_group_answers_help(path: tuple[str, ...], tmp_path: Path) -> None:
    result = run_cli([*path, "--help"], tmp_path, {})
    assert result.code == 0, str(result)
    assert result.err == ""
    assert "Usage" in result.out


def test_state_readers_accept_json() -> None:
    by_name = {" ".join(path): cmd for path, cmd in _commands()}
    for name in READERS:
        assert name in by_name, f"`gitive {name}` is missing"
        assert "--json" in _options(by_name[name]), f"`gitive {name}` has no --json"


def test_every_command_but_a_few_writers_accepts_json() -> None:
    runnable = [(path, cmd) for path, cmd in _commands()
                if not getattr(cmd, "commands", None) or getattr(cmd, "invoke_without_command", False)]
    missing = sorted(" ".join(path) for path, cmd in runnable
                     if " ".join(path) not in WITHOUT_JSON and "--json" not in _options(cmd))
    assert missing == []


def test_root_help_lists_every_command(tmp_path: Path) -> None:
    result = run_cli(["--help"], tmp_path, {})
    assert result.code == 0
    for name in _tree().commands:
        assert name in result.out


@pytest.mark.parametrize("path", [p for p, cmd in _commands() if "\\[" in (cmd.help or "")], ids=" ".join)
def test_bracketed_keys_in_help_survive_the_formatter(path: tuple[str, ...], tmp_path: Path) -> None:
    """``\\[a]pprove`` in a docstring shows as ``[a]pprove``: Rich would read a bare ``[a]`` as markup and drop it."""
    import re

    cmd = dict(_commands())[path]
    keys = re.findall(r"\\\[(\w+)\](\w*)", cmd.help)
    result = run_cli([*path, "--help"], tmp_path, {})
    flat = " ".join(result.out.replace("│", " ").split())
    assert keys and all(f"[{k}]{rest}" in flat for k, rest in keys), flat


def test_no_help_text_has_an_unescaped_bracket_key() -> None:
    """A new docstring with a bare ``[x]word`` would be eaten by the formatter (it was: "pprove, dit, kip")."""
    import re

    bare = {" ".join(p): cmd.help for p, cmd in _commands() if re.search(r"(?<!\\)\[[a-z]\]\w", cmd.help or "")}
    assert not bare, bare


def test_the_readme_command_table_names_every_command() -> None:
    """A new command is documented where a new user looks first (the README's table), not only in --help."""
    import re

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("## Commands"):]
    table = table[:table.index("\n\n", table.index("| command |"))]
    named = set(re.findall(r"`gitive ([a-z-]+)", table)) | set(re.findall(r"`([a-z-]+)[ `]", table))
    top = {path[0] for path, _ in _commands() if len(path) == 1}
    assert top <= named, sorted(top - named)


def test_the_readme_documents_every_exit_code() -> None:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    text = " ".join(readme[readme.index("## Commands"):].split())
    assert all(said in text for said in ("exit code 1", "2 is a usage error", "3 an internal error", "130 an interrupt"))
