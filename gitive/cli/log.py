"""``gitive log``: the verified entries of the team, newest first."""

from __future__ import annotations

import datetime as dt

import typer

from gitive.cli.output import console, emit_json, short


def register(app: typer.Typer) -> None:
    app.command("log")(log)


def log(
    log_name: str | None = typer.Option(None, "--log", help="Only this log: roster, team, project, mail, …"),
    kind: str | None = typer.Option(None, "--kind", help="Only this record kind, e.g. member or invite."),
    limit: int = typer.Option(50, "--limit", min=1, help="At most this many entries."),
    as_json: bool = typer.Option(False, "--json", help="Print entries as JSON."),
) -> int:
    """Show verified entries (signed, in sequence, by admitted machines).

    Example: gitive log --log roster --json
    """
    from gitive.index import queries
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        entries = queries.verified_entries(conn, log=log_name, kind=kind, limit=limit)
    if as_json:
        emit_json(entries)
        return 0
    for e in entries:
        when = dt.datetime.fromtimestamp(e["at"] / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M")
        record = e["record"]
        what = record["type"]
        if what == "member":
            what += f" {record['person']}/{record['name']} {'active' if record['active'] else 'removed'}"
        console.print(f"{when}  {e['person']}/{e['machine_name']:<14} {e['log']}#{e['seq']:<5} {what}"
                      f"  [dim]{short(e['commit'])}[/]")
    if not entries:
        console.print("no verified entries yet")
    return 0
