"""``gitive retract`` and ``gitive gc``: forgetting a lesson everywhere, and pruning what git still holds."""

from __future__ import annotations

import typer

from gitive.cli.output import console, emit_json
from gitive.cli.person import passphrase_stdin, signer_if_any


def register(app: typer.Typer) -> None:
    app.command("retract")(retract)
    app.command("gc")(gc)


def retract(
    lesson: str = typer.Argument(..., help="A lesson id or unambiguous prefix."),
    reason: str = typer.Option(..., "--reason", help="Why it is retracted (kept with the tombstone)."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Retract a lesson: a signed tombstone makes every machine drop its text at its next sync.

    Only the lesson's author, a reviewer of it, or the project's owner may. Needs a person at a terminal and
    the passphrase of your person key.

    Example: gitive retract 3f1c9a0b --reason "leaked a customer name"
    """
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog, gate, render_text
    from gitive.lessons.retract import NOT_ERASED, check_allowed
    from gitive.lessons.retract import retract as do_retract
    from gitive.team.hive import open_hive

    gate.require_person("retracting a lesson", scripted=stdin)
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        found = catalog.get(conn, catalog.resolve_id(conn, lesson))
        check_allowed(hive, conn, found["id"], key_known=False)
        console.print(f"{found['id'][:12]}: {render_text.first_line(found.get('text'))}")
        console.print(NOT_ERASED)
        if not stdin and not typer.confirm("Retract it for everyone?", default=False):
            console.print("nothing retracted")
            return 0
        signer = signer_if_any("to sign the retraction", stdin)
        done = do_retract(hive, conn, found["id"], reason, signer)
    console.print(f"retracted {done.lesson[:12]}; `gitive sync` spreads the tombstone. {NOT_ERASED}")
    return 0


def gc(as_json: bool = typer.Option(False, "--json", help="Print what was done as JSON.")) -> int:
    """Prune objects nothing refers to any more, such as the bodies of retracted lessons.

    Runs `git gc --prune=now` after expiring the reflogs of hive refs. Objects your branches, tags, stashes
    or reflogs still reach are kept.

    Example: gitive gc
    """
    from gitive.store import maintenance
    from gitive.team.hive import open_hive

    hive = open_hive()
    done = [maintenance.prune(repo) for repo in hive.stores()]
    if as_json:
        emit_json({"pruned": done})
    else:
        for path in done:
            console.print(f"pruned unreachable objects in {path}")
    return 0
