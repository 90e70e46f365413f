"""``gitive install``, ``gitive uninstall`` and ``gitive status``: wire gitive into this repository's
harnesses and git, take it out again, and show what is in place and whether it works."""

from __future__ import annotations

import sys
from typing import Any

import typer

from gitive.cli.output import console, emit_json

HARNESS_HELP = ("Comma-separated harnesses: claude, codex, cursor, gemini. "
                "Example: --harness claude,codex")


def register(app: typer.Typer) -> None:
    app.command("install")(install)
    app.command("uninstall")(uninstall)
    app.command("status")(status)


def install(
    harness: str | None = typer.Option(
        None, "--harness", help=f"{HARNESS_HELP}. Without --harness or --git-hooks: claude,codex,cursor "
                                "and the git hooks."),
    git_hooks: bool = typer.Option(
        False, "--git-hooks", help="Install the post-commit, post-merge and post-rewrite hooks that record "
                                   "commits and rewrites. Example: gitive install --git-hooks"),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> int:
    """Write gitive's harness hooks, MCP server entry and git hooks into this repository.

    Entries go into the harnesses' own files (.claude/settings.json, .mcp.json, .codex/hooks.json,
    .codex/config.toml, .cursor/hooks.json, .cursor/mcp.json) next to everything already there. Running it
    again changes nothing; a file that is not valid JSON or TOML stops it with nothing written. Existing git
    hooks are kept and run first; core.hooksPath is honoured.

    Example: gitive install --harness claude --git-hooks
    """
    from gitive.install import installer

    names, hooks = _selection(harness, git_hooks, installer.DEFAULT_HARNESSES)
    report = installer.install(None, names, hooks, sys.executable)
    if as_json:
        emit_json(report.as_dict())
        return 0
    _print_files(report.files, {"written": "wrote", "unchanged": "already in place"})
    if report.git_hooks is not None:
        for hook, path in report.git_hooks["hooks"].items():
            kept = report.git_hooks["chained"].get(hook)
            console.print(f"git hook {hook}: {path}" + (f" (runs the existing hook, kept at {kept}, first)"
                                                        if kept else ""))
    return 0


def uninstall(
    harness: str | None = typer.Option(None, "--harness", help=f"{HARNESS_HELP}. Default: everything."),
    git_hooks: bool = typer.Option(
        False, "--git-hooks", help="Remove gitive's git hooks and put back the hooks they replaced. "
                                   "Example: gitive uninstall --git-hooks"),
    as_json: bool = typer.Option(False, "--json", help="Print what was removed as JSON."),
) -> int:
    """Remove exactly what gitive install added.

    A file install wrote and nobody changed since gets its original bytes back (or is deleted, with the
    folders install created); a file edited since keeps the edits and loses only gitive's entries.

    Example: gitive uninstall --harness cursor
    """
    from gitive.install import installer

    names, hooks = _selection(harness, git_hooks, tuple(installer.HARNESSES))
    report = installer.uninstall(None, names, hooks)
    if as_json:
        emit_json(report.as_dict())
        return 0
    _print_files(report.files, {"restored": "restored", "removed": "removed", "cleaned": "removed gitive's "
                                "entries from (edited since install)", "unchanged": "left as it was",
                                "missing": "already gone:"})
    if report.git_hooks is not None:
        for path in report.git_hooks["removed"]:
            console.print(f"removed git hook {path}")
    if not report.files and not (report.git_hooks or {}).get("removed"):
        console.print("nothing of gitive's is installed here")
    return 0


def status(as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> int:
    """Show which harness hooks, MCP entries and git hooks are installed here, and whether each can work.

    Also shows the index and whether the daemon is running. Always exits 0.

    Example: gitive status --json
    """
    from gitive.install.status import status as report

    found = report()
    if as_json:
        emit_json(found)
        return 0
    _print_status(found)
    return 0


def _selection(harness: str | None, git_hooks: bool, default: tuple[str, ...]) -> tuple[list[str], bool]:
    from gitive.install.installer import harness_names

    if harness is None and not git_hooks:
        return list(default), True
    return (harness_names(harness) if harness else []), git_hooks


def _print_files(files: list[dict[str, Any]], verbs: dict[str, str]) -> None:
    for f in files:
        console.print(f"{verbs.get(f['outcome'], f['outcome'])} {f['path']} ({f['owner']} {'+'.join(f['holds'])})")


def _mark(ok: bool, installed: bool) -> str:
    return "[green]ok[/]" if ok else ("[red]broken[/]" if installed else "[dim]not installed[/]")


def _print_status(found: dict[str, Any]) -> None:
    console.print(f"repository  {found['repository']}")
    for name, parts in found["harnesses"].items():
        line = "   ".join(f"{part} {_mark(p['works'], p['installed'])} ({p['path']})" for part, p in parts.items())
        console.print(f"{name:<11} {line}")
        for p in parts.values():
            if p["problem"]:
                console.print(f"            [yellow]{p['problem']}[/]")
    hooks = found["git_hooks"]
    console.print(f"git hooks   {hooks['dir']}")
    for hook, info in hooks["hooks"].items():
        chains = f", runs {info['chains']} first" if info["chains"] else ""
        console.print(f"  {hook:<13} {_mark(info['works'], info['installed'])}{chains}")
    for key in ("problem", "last_failure"):
        if hooks[key]:
            console.print(f"            [yellow]{hooks[key]}[/]")
    index = found["index"]
    console.print(f"index       {index['path'] or '-'}: " + ("readable" if index["readable"] else index["problem"]))
    daemon = found["daemon"]
    console.print("daemon      " + ("running" if daemon["running"] else "not running")
                  + (f" ({daemon['problem']})" if daemon["problem"] else ""))
    if found["state"]["problem"]:
        console.print(f"[yellow]{found['state']['problem']}[/]")
