"""``gitive install``, ``gitive uninstall`` and ``gitive status``: wire gitive into this repository's
harnesses and git, take it out again, and show what is in place and whether it works."""

from __future__ import annotations

import sqlite3
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
    service: bool = typer.Option(
        False, "--service", help="Register the daemon for this $GITIVE_HOME as a user service (systemd user "
                                 "unit on Linux, launchd agent on macOS) and start it; works outside a "
                                 "repository. Example: gitive install --service"),
    interval: float | None = typer.Option(
        None, "--interval", help="With --service: seconds between the daemon's syncs (default 30). "
                                 "Example: gitive install --service --interval 60"),
    anchor: bool = typer.Option(
        False, "--anchor", help="With --service, on the anchor machine: register the anchor's tick for this "
                                "repository instead of the daemon. Example: gitive install --service --anchor"),
    as_json: bool = typer.Option(False, "--json", help="Print what was written as JSON."),
) -> int:
    """Write gitive's harness hooks, MCP server entry and git hooks into this repository.

    Entries go into the harnesses' own files (.claude/settings.json, .mcp.json, .codex/hooks.json,
    .codex/config.toml, .cursor/hooks.json, .cursor/mcp.json) next to everything already there. Running it
    again changes nothing; a file that is not valid JSON or TOML stops it with nothing written. Existing git
    hooks are kept and run first; core.hooksPath is honoured. With --service, the daemon also becomes a
    user service that starts at login and restarts after a crash.

    Example: gitive install --harness claude --git-hooks
    """
    from gitive.errors import GitiveError
    from gitive.install import installer
    from gitive.install import service as svc

    if interval is not None and not service:
        raise GitiveError("--interval goes with --service: gitive install --service --interval 60")
    if anchor:
        if not service:
            raise GitiveError("--anchor goes with --service: gitive install --service --anchor")
        return _install_anchor(interval, as_json)
    interval = svc.DEFAULT_INTERVAL if interval is None else interval
    if service:
        svc.validate(sys.executable, interval)  # before the repository parts are written
    names, hooks, repo = _selection(harness, git_hooks, service, installer.DEFAULT_HARNESSES)
    report = installer.install(None, names, hooks, sys.executable) if repo else None
    unit = svc.install(sys.executable, interval) if service else None
    if as_json:
        emit_json({**_repo_dict(report), "service": unit})
        return 0
    if unit is not None:
        _print_service_install(unit)
    if report is None:
        return 0
    _print_install(report)
    return 0


def _print_install(report: Any) -> None:
    """The files written, the git hooks (and the existing hooks they run first) and the steps left."""
    _print_files(report.files, {"written": "wrote", "unchanged": "already in place"})
    if report.git_hooks is not None:
        for hook, path in report.git_hooks["hooks"].items():
            kept = report.git_hooks["chained"].get(hook)
            console.print(f"git hook {hook}: {path}" + (f" (runs the existing hook, kept at {kept}, first)"
                                                        if kept else ""))
    for step in report.steps:
        console.print(f"[yellow]next step:[/] {step}")


def uninstall(
    harness: str | None = typer.Option(None, "--harness", help=f"{HARNESS_HELP}. Default: everything."),
    git_hooks: bool = typer.Option(
        False, "--git-hooks", help="Remove gitive's git hooks and put back the hooks they replaced. "
                                   "Example: gitive uninstall --git-hooks"),
    service: bool = typer.Option(
        False, "--service", help="Stop and remove the daemon's user service for this $GITIVE_HOME; works "
                                 "outside a repository. Example: gitive uninstall --service"),
    anchor: bool = typer.Option(False, "--anchor", help="With --service: remove the anchor's service instead. "
                                                        "Example: gitive uninstall --service --anchor"),
    as_json: bool = typer.Option(False, "--json", help="Print what was removed as JSON."),
) -> int:
    """Remove exactly what gitive install added.

    A file install wrote and nobody changed since gets its original bytes back (or is deleted, with the
    folders install created); a file edited since keeps the edits and loses only gitive's entries. Without
    options this includes the daemon's user service, if install registered one (it serves every repository
    on this machine that uses this $GITIVE_HOME).

    Example: gitive uninstall --harness cursor
    """
    from gitive.errors import GitiveError
    from gitive.install import installer
    from gitive.install import service as svc

    if anchor:
        if not service:
            raise GitiveError("--anchor goes with --service: gitive uninstall --service --anchor")
        done = svc.uninstall(svc.anchor_unit(""))
        if as_json:
            emit_json({"service": done})
        else:
            _print_service_uninstall(done)
        return 0
    everything = harness is None and not git_hooks and not service
    names, hooks, repo = _selection(harness, git_hooks, service, tuple(installer.HARNESSES))
    report = installer.uninstall(None, names, hooks) if repo else None
    unit = svc.uninstall() if service or everything else None
    if as_json:
        emit_json({**_repo_dict(report), "service": unit})
        return 0
    if report is not None:
        _print_files(report.files, {"restored": "restored", "removed": "removed", "cleaned": "removed gitive's "
                                    "entries from (edited since install)", "unchanged": "left as it was",
                                    "missing": "already gone:"})
        for path in (report.git_hooks or {}).get("removed", []):
            console.print(f"removed git hook {path}")
        kept_for = (report.git_hooks or {}).get("kept_for") or []
        if kept_for:
            console.print(f"kept the git hooks in {report.git_hooks['dir']}: {', '.join(kept_for)} installed them "
                          "too (work trees share them); uninstall there to remove them")
    removed_service = unit is not None and unit["outcome"] != "not-installed"
    if unit is not None and (removed_service or service):
        _print_service_uninstall(unit)
    if report is not None and not report.files and not (report.git_hooks or {}).get("removed") \
            and not (report.git_hooks or {}).get("kept_for") and not removed_service:
        console.print("nothing of gitive's is installed here")
    return 0


def status(as_json: bool = typer.Option(False, "--json", help="Print the report as JSON.")) -> int:
    """Show which harness hooks, MCP entries and git hooks are installed here, and whether each can work.

    Also shows the index, whether the daemon is running, and its user service (installed, enabled and
    active per systemctl or launchctl, and whether the daemon answers). Always exits 0.

    Example: gitive status --json
    """
    from gitive.install.service import status as service_status
    from gitive.install.status import status as report

    found = {**report(), "service": service_status(), "standing": _standing()}
    if as_json:
        emit_json(found)
        return 0
    _print_status(found)
    return 0


def _selection(harness: str | None, git_hooks: bool, service: bool, default: tuple[str, ...]
               ) -> tuple[list[str], bool, bool]:
    """The harnesses, whether the git hooks, and whether this repository is touched at all (--service alone
    leaves it alone, so it works outside a repository)."""
    from gitive.install.installer import harness_names

    if harness is None and not git_hooks:
        return list(default), True, not service
    return (harness_names(harness) if harness else []), git_hooks, True


def _install_anchor(interval: float | None, as_json: bool) -> int:
    """``gitive install --service --anchor``: the anchor's loop for this repository, as a user service."""
    from gitive.anchor.config import load
    from gitive.anchor.runner import require_anchor
    from gitive.install import service as svc
    from gitive.store.repo import open_repo, workdir
    from gitive.team.hive import open_hive

    repo = str(workdir(open_repo()))
    require_anchor(open_hive(repo))
    unit = svc.anchor_unit(repo)
    done = svc.install(sys.executable, interval if interval is not None else load().interval, unit=unit)
    if as_json:
        emit_json({"service": done})
    else:
        _print_service_install(done, "`gitive anchor status` shows its last tick")
    return 0


def _repo_dict(report: Any) -> dict[str, Any]:
    return report.as_dict() if report is not None else {"repository": None, "files": [], "git_hooks": None}


def _print_service_install(unit: dict[str, Any], check: str = "`gitive status` shows whether the daemon answers"
                           ) -> None:
    verb = "wrote" if unit["outcome"] == "written" else "already in place"
    if unit["hint"]:
        console.print(f"{verb} {unit['path']}; {unit['hint']}")
    else:
        console.print(f"{verb} {unit['path']}; service {unit['name']} started: {check}")


def _print_service_uninstall(unit: dict[str, Any]) -> None:
    outcome, path = unit["outcome"], unit["path"]
    if outcome == "not-installed":
        console.print(f"no gitive service was installed for {unit['home']}")
    elif outcome == "kept":
        console.print(f"left {path}: it changed since install and is no longer gitive's")
    else:
        stopped = "stopped the service, " if unit["stopped"] else ""
        console.print(f"{stopped}removed {path}" if outcome == "removed" else f"{stopped}already gone: {path}")


def _print_files(files: list[dict[str, Any]], verbs: dict[str, str]) -> None:
    for f in files:
        console.print(f"{verbs.get(f['outcome'], f['outcome'])} {f['path']} ({f['owner']} {'+'.join(f['holds'])})")


def _mark(ok: bool, installed: bool) -> str:
    return "[green]ok[/]" if ok else ("[red]broken[/]" if installed else "[dim]not installed[/]")


def _standing() -> dict[str, Any]:
    """Whether the roster removed this machine: the flag every other command's notice sets, or the index's own
    roster read without ingesting (status stays fast and changes nothing)."""
    from gitive.errors import GitiveError
    from gitive.index import deciding
    from gitive.index.db import connect
    from gitive.team.hive import REMOVED, open_hive

    try:
        hive = open_hive()
        removed = hive.removed
        if not removed and hive.index_path.exists():
            with connect(hive.index_path, readonly=True) as conn:
                removed = deciding.removed(conn, hive.me)
        moved = _moved(hive)
    except (GitiveError, OSError, sqlite3.Error):
        return {"removed": None}
    return {"removed": removed, **({"notice": REMOVED} if removed else {}), **({"moved": moved} if moved else {})}


def _moved(hive: Any) -> str | None:
    """What to run when this repository's remote changed and its project id with it (index.project_links)."""
    from gitive.index import project_links
    from gitive.team.projects import project_id

    found = project_links.moved_from(hive)
    if found is not None:
        return (f"this repository's remote changed: it was project {found[1] or found[0][:12]}, whose lessons, "
                "owners and members stay with that id until an admin runs `gitive project move`")
    cache = hive.common_dir / "gitive" / "project-id"
    if cache.exists() and cache.stat().st_mtime_ns < (hive.common_dir / "config").stat().st_mtime_ns \
            and project_id(hive.project) != hive.project_id:
        return ("this repository's remote changed since gitive last looked: `gitive project` says whether it is "
                "still the same project, and `gitive project move` keeps it so")
    return None


def _print_status(found: dict[str, Any]) -> None:
    if found.get("standing", {}).get("removed"):
        console.print(f"[red]{found['standing']['notice']}[/]")
    if found.get("standing", {}).get("moved"):
        console.print(f"[yellow]{found['standing']['moved']}[/]")
    console.print(f"repository  {found['repository']}")
    for name, parts in found["harnesses"].items():
        line = "   ".join(f"{part} {_mark(p['works'], p['installed'])} ({p['path']})" for part, p in parts.items())
        console.print(f"{name:<11} {line}")
        for p in parts.values():
            for note in (p["problem"], p.get("warning")):
                if note:
                    console.print(f"            [yellow]{note}[/]")
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
    for plan in found.get("remotes") or []:
        why = "as hive.remote names them" if plan["explicit"] else "every remote with the hive refspec"
        left = plan["skipped"] + plan["without_refspec"]
        console.print(f"remotes     sync uses {', '.join(plan['remotes']) or 'none'} ({why})"
                      + (f"; not {', '.join(left)} (`gitive doctor` says why)" if left else ""))
    daemon = found["daemon"]
    console.print("daemon      " + ("running" if daemon["running"] else "not running")
                  + (f" ({daemon['problem']})" if daemon["problem"] else ""))
    for name, test in (found.get("self_test") or {}).items():
        verdict = "[green]carried the card[/]" if test["carried"] else "[red]carried no card[/]"
        took = f" in {test['ms']} ms" if test["ms"] is not None else ""
        console.print(f"self-test   {name} SessionStart hook {verdict}{took}"
                      + (f" ({test['problem']})" if test["problem"] else ""))
    from gitive.capture.deliveries import lines as delivery_lines

    for n, line in enumerate(delivery_lines(found["deliveries"])):
        console.print(("deliveries  " if n == 0 else "            ") + line)
    _print_service_status(found["service"])
    if found["state"]["problem"]:
        console.print(f"[yellow]{found['state']['problem']}[/]")


def _print_service_status(service: dict[str, Any]) -> None:
    answers = f"daemon answers (pid {service['daemon_pid']})" if service["daemon_running"] else "daemon not running"
    if not service["supported"]:
        console.print(f"service     not available on this platform; {answers}")
        return
    if not service["installed"]:
        line = "not installed (`gitive install --service`)"
    else:
        parts = [f"installed ({service['path']})"]
        if service["enabled"] is not None:
            parts.append("enabled" if service["enabled"] else "not enabled")
        if service["manager_available"]:
            parts.append("active" if service["active"] else (service["state"] or "not active"))
        else:
            parts.append(f"{service['manager']} not reachable here")
        line = ", ".join(parts)
    console.print(f"service     {line}; {answers}")
    if service["problem"]:
        console.print(f"            [yellow]{service['problem']}[/]")
