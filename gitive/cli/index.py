"""``gitive index``: the local SQLite projection."""

from __future__ import annotations

import typer

from gitive.cli.output import console, emit_json, progress_bar

app = typer.Typer(help="Manage the local index (a projection of the refs; safe to delete).\n\n"
                       "Example: gitive index rebuild",
                  no_args_is_help=True)


@app.command("rebuild")
def rebuild(as_json: bool = typer.Option(False, "--json", help="Print the result as JSON.")) -> int:
    """Delete the index and recreate it from the refs alone.

    Example: gitive index rebuild
    """
    from gitive.index import queries
    from gitive.index.db import connect
    from gitive.index.refresh import rebuild as do_rebuild
    from gitive.team.hive import open_hive

    hive = open_hive()
    with progress_bar("indexing", enabled=not as_json) as progress:
        report = do_rebuild(hive, progress)
    with connect(hive.index_path) as conn:
        counts = queries.counts(conn)
    if as_json:
        emit_json({**counts, "problems": len(report.problems)})
    else:
        console.print(f"rebuilt the index: {counts['entries']} entries in {counts['logs']} logs, "
                      f"{len(report.problems)} problems (see `gitive doctor`)")
    return 0
