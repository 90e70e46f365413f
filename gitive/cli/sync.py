"""``gitive sync``: exchange hive refs with every configured remote."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from gitive.cli.output import console, emit_json, escape, progress_bar

if TYPE_CHECKING:
    from gitive.team.hive import Hive


def register(app: typer.Typer) -> None:
    app.command("sync")(sync)


def sync(
    remote: str | None = typer.Option(None, "--remote", help="Only this remote (default: every hive remote)."),
    no_push: bool = typer.Option(False, "--no-push", help="Fetch and verify only."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> int:
    """Fetch peers' hive refs, verify and index them, and push this machine's own refs.

    Exits 1 when a remote was unreachable or refused a push (each reported in one line).

    Example: gitive sync --remote origin
    """
    from gitive.index import sync as syncing
    from gitive.lessons.outcomes import record_if_due
    from gitive.team.hive import open_hive

    hive = open_hive()
    record_if_due(hive)  # citations whose sessions settled become signed records, pushed by this sync
    _outbound_findings(hive)
    with progress_bar("verifying", enabled=not as_json) as progress:
        report = syncing.run(hive, push=not no_push, progress=progress, only=remote)
    if as_json:
        emit_json(report.as_dict())
        return 0 if report.ok else 1
    for style, text in report.lines():
        console.print(f"[{style}]{escape(text)}[/]" if style else escape(text))
    return 0 if report.ok else 1


def _outbound_findings(hive: Hive) -> None:
    """Outbound screening's after-the-fact matches go out with this sync, daemon or not (docs/screening.md)."""
    from gitive.daemon import db as daemon_db
    from gitive.daemon import findings

    with daemon_db.connect() as db:
        problem = findings.report(hive, db)
    if problem:
        typer.echo(f"gitive: {problem}", err=True)  # stderr: --json output stays JSON
