"""``gitive retract`` and ``gitive gc``: forgetting a lesson everywhere, and pruning what git still holds."""

from __future__ import annotations

import typer

from gitive.cli.output import console, emit_json


def register(app: typer.Typer) -> None:
    app.command("retract")(retract)
    app.command("gc")(gc)


def retract(
    lesson: str = typer.Argument(..., help="A lesson id or unambiguous prefix."),
    reason: str = typer.Option(..., "--reason", help="Why it is retracted (kept with the tombstone)."),
) -> int:
    """Retract a lesson: a signed tombstone makes every machine drop its text at its next sync.

    Only the lesson's author, a reviewer of it, or the project's owner may. Needs a person at a terminal.

    Example: gitive retract 3f1c9a0b --reason "leaked a customer name"
    """
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog, gate, render_text
    from gitive.lessons.retract import NOT_ERASED, check_allowed
    from gitive.lessons.retract import retract as do_retract
    from gitive.team.hive import open_hive

    gate.require_person("retracting a lesson")
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        found = catalog.get(conn, catalog.resolve_id(conn, lesson))
        check_allowed(hive, conn, found["id"])
        console.print(f"{found['id'][:12]}: {render_text.first_line(found.get('text'))}")
        console.print(NOT_ERASED)
        if not typer.confirm("Retract it for everyone?", default=False):
            console.print("nothing retracted")
            return 0
        done = do_retract(hive, conn, found["id"], reason)
    console.print(f"retracted {done.lesson[:12]}; `gitive sync` spreads the tombstone. {NOT_ERASED}")
    return 0


def gc(as_json: bool = typer.Option(False, "--json", help="Print what was done as JSON.")) -> int:
    """Pack every hive store and delete gitive's own unreachable objects now, such as retracted bodies.

    Sync does this on its own schedule (keeping what is younger than five minutes, which a concurrent writer
    may be about to use); gc does it now, after a full repack, keeping only what is younger than ten seconds. Only objects gitive wrote are deleted: whatever your branches, tags, stashes,
    reflogs or index reach is kept, and your own unreachable objects are left to git's usual expiry.

    Example: gitive gc
    """
    from gitive.store import maintenance
    from gitive.team.hive import open_hive

    hive = open_hive()
    done = [(repo.path, maintenance.prune(repo)) for repo in hive.stores()]
    if as_json:
        emit_json({"pruned": [{"store": path, "deleted": r.pruned, "loose_before": r.before.loose_objects,
                               "loose_after": r.after.loose_objects} for path, r in done]})
    else:
        for path, r in done:
            console.print(f"{path}: packed; deleted {r.pruned} unreachable gitive objects "
                          f"(about {r.before.loose_objects} loose objects before, {r.after.loose_objects} after)")
    return 0
