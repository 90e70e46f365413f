"""``gitive routing``: how questions routed by ``who_knows`` ended, and the answer and redirect rates."""

from __future__ import annotations

from datetime import UTC, datetime

import typer

from gitive.cli.output import console, emit_json

app = typer.Typer(help="Routed questions (who_knows answers that led to a message) and how they ended.\n\n"
                       "Example: gitive routing --json", invoke_without_command=True)


@app.callback()
def routing(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Answer rate, redirect rate and time to answer of routed questions; each question with its outcome.

    Example: gitive routing
    """
    if ctx.invoked_subcommand:
        return 0
    from gitive.index.refresh import fresh_index
    from gitive.mcp import routing as routes
    from gitive.team.hive import open_hive

    with fresh_index(open_hive()) as (conn, _):
        found = routes.outcomes(conn)
    summary = routes.rates(found)
    if as_json:
        emit_json({"summary": summary, "routed": found})
        return 0
    if not found:
        console.print("no routed questions yet (an agent's who_knows answer followed by send_message(routing=…))")
        return 0
    answer, redirect = summary["answer_rate_permille"], summary["redirect_rate_permille"]
    console.print(f"{summary['routed']} routed, {summary['ended']} ended: answered {summary['answered']}, helpful "
                  f"{summary['helpful']}, redirected {summary['redirected']}, ignored {summary['ignored']}")
    if answer is not None:
        console.print(f"answer rate {answer / 10:.1f}%, redirect rate {redirect / 10:.1f}%"
                      + (f", median time to answer {summary['median_answer_ms'] / 60_000:.0f} min"
                         if summary["median_answer_ms"] is not None else ""))
    for r in found[-20:]:
        when = datetime.fromtimestamp(r["at"] / 1000, UTC).strftime("%Y-%m-%d %H:%M")
        console.print(f"  {r['routing'][:12]} {when} {r['asker']} → {r['choice']}: {r['outcome']}")
    return 0


@app.command("mark")
def mark(routing_id: str = typer.Argument(..., help="The routed question's id (or its first characters)."),
         outcome: str = typer.Argument(..., help="answered, helpful, redirected or ignored."),
         as_json: bool = typer.Option(False, "--json", help="Print the signed record as JSON.")) -> int:
    """Say how a question your machine routed ended (signed; overrides what the mail shows).

    Example: gitive routing mark 3f2a9c helpful
    """
    from gitive.index import sync as syncing
    from gitive.mcp import routing as routes
    from gitive.team.hive import open_hive

    done = routes.mark(None, routing_id, outcome)
    syncing.run(open_hive())
    if as_json:
        emit_json(done)
        return 0
    console.print(f"marked {done['routing'][:12]} {outcome}")
    return 0
