"""``gitive doctor``: report every problem; exit non-zero when there is one."""

from __future__ import annotations

import typer

from gitive.cli.output import console, emit_json, ref_label


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor)


def doctor(as_json: bool = typer.Option(False, "--json", help="Print problems as JSON.")) -> int:
    """Check signatures, sequences, equivocation, rollback, unknown signers, refspecs and repository health.

    Exits 1 when any problem is found.

    Example: gitive doctor --json
    """
    from gitive.index.doctor import diagnose, remote_plans
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        found = diagnose(hive, conn)
    if as_json:
        emit_json({"ok": not found, "problems": found, "remotes": remote_plans(hive), "team": {"id": hive.team_id}})
        return 1 if found else 0
    for plan in remote_plans(hive):
        why = "as hive.remote names them" if plan["explicit"] else "every remote with the hive refspec"
        console.print(f"sync uses {', '.join(plan['remotes']) or 'no remote'} ({why}) in {plan['store']}")
    if not found:
        console.print("no problems found")
    else:
        for p in found:
            seq = f" seq {p['seq']}" if p["seq"] else ""
            console.print(f"[red]{p['kind']}[/] {ref_label(p['where'])}{seq}: {p['detail']}")
            if p["hint"]:
                console.print(f"    [dim]{p['hint']}[/]")
    return 1 if found else 0
