"""``gitive review``: a person's queue of lessons to approve, edit, reject or skip; and one-off decisions."""

from __future__ import annotations

import sqlite3
from typing import Any

import typer

from gitive.cli import render
from gitive.cli.output import console
from gitive.cli.person import passphrase_stdin, signer_if_any
from gitive.errors import NotAllowed

app = typer.Typer(help="Review proposed lessons (a person at a terminal only).\n\nExample: gitive review",
                  invoke_without_command=True)


class _Key:
    """The person key for one command: unlocked at the first decision, then kept for the rest of the batch
    (in this process only)."""

    def __init__(self, scripted: bool) -> None:
        self.scripted = scripted
        self.signer: Any = None
        self.asked = False

    def get(self) -> Any:
        if not self.asked:
            self.signer = signer_if_any("to sign your reviews", self.scripted)
            self.asked = True
        return self.signer


def _decide(hive: Any, conn: sqlite3.Connection, lesson: dict[str, Any], approved: bool, note: str,
            text: str | None, key: _Key) -> None:
    from gitive.lessons.review import check_counts, review

    check_counts(hive, conn, lesson, None, key_known=False)  # before the confirmation and the passphrase
    verb = "approval" if approved else "rejection"
    if not key.scripted and not typer.confirm(f"Sign this {verb} as yourself?", default=False):
        console.print("nothing signed")
        return
    done = review(hive, conn, lesson["id"], approved=approved, note=note, text=text, signer=key.get())
    what = "approved" + (" with your edit" if done.edited else "") if approved else "rejected"
    console.print(f"{what} {lesson['id'][:12]}; `gitive sync` shares it")


@app.callback()
def queue(
    ctx: typer.Context,
    everyone: bool = typer.Option(False, "--all", help="Show every pending lesson, not only those for you."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Go through the lessons waiting for you: \\[a]pprove, \\[e]dit and approve, \\[r]eject, \\[s]kip, \\[q]uit.

    Needs a person at a terminal; refuses to run inside an agent harness. Your person key's passphrase is
    asked once, at your first decision, and signs every decision of the batch.

    Example: gitive review
    """
    if ctx.invoked_subcommand:
        return 0
    from gitive.index.refresh import fresh_index
    from gitive.lessons import evidence, gate
    from gitive.lessons.placement import my_person
    from gitive.lessons.queue import pending
    from gitive.team.hive import open_hive

    gate.require_person("reviewing lessons", scripted=stdin)
    hive = open_hive()
    key = _Key(stdin)
    with fresh_index(hive) as (conn, _):
        items = pending(conn, hive.project, my_person(hive, conn), everyone)
        if not items:
            console.print("nothing to review" + ("" if everyone else " for you (--all shows every pending lesson)"))
            return 0
        for n, lesson in enumerate(items, 1):
            lesson["stale"] = evidence.stale(hive.project, lesson["evidence"])
            console.rule(f"{n} of {len(items)}")
            render.full(lesson)
            console.print(f"  suggested reviewer: {lesson['suggested_reviewer'] or 'anyone'} "
                          f"({lesson['reviewer_reason']})")
            choice = typer.prompt("[a]pprove, [e]dit, [r]eject, [s]kip, [q]uit", default="s").strip().lower()
            if choice.startswith("q"):
                break
            try:
                if choice.startswith("a"):
                    _decide(hive, conn, lesson, True, typer.prompt("note", default=""), None, key)
                elif choice.startswith("e"):
                    text = typer.prompt("new text", default=lesson["text"] or "")
                    _decide(hive, conn, lesson, True, typer.prompt("note", default=""), text, key)
                elif choice.startswith("r"):
                    _decide(hive, conn, lesson, False, typer.prompt("why", default=""), None, key)
            except NotAllowed as exc:  # this one would not count: say why and go on with the queue
                console.print(f"[red]{exc}[/]")
    return 0


def _one(lesson_id: str, approved: bool, note: str, text: str | None, stdin: bool) -> int:
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog, evidence, gate
    from gitive.lessons.review import check_counts
    from gitive.team.hive import open_hive

    gate.require_person("reviewing a lesson", scripted=stdin)
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        lesson = catalog.get(conn, catalog.resolve_id(conn, lesson_id))
        check_counts(hive, conn, lesson, None, key_known=False)
        lesson["stale"] = evidence.stale(hive.project, lesson["evidence"])
        render.full(lesson)
        if text is not None:
            console.print(f"\n  your text: {text}")
        _decide(hive, conn, lesson, approved, note, text, _Key(stdin))
    return 0


@app.command("approve")
def approve(
    lesson: str = typer.Argument(..., help="A lesson id or unambiguous prefix."),
    note: str = typer.Option("", "--note", help="Why, for the record."),
    text: str | None = typer.Option(None, "--text", help="Replace the text (the original stays in history)."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Approve one lesson, optionally with your edit of its text (asks for confirmation and your passphrase).

    Example: gitive review approve 3f1c9a0b --note "matches what we saw in prod"
    """
    return _one(lesson, True, note, text, stdin)


@app.command("reject")
def reject(
    lesson: str = typer.Argument(..., help="A lesson id or unambiguous prefix."),
    note: str = typer.Option("", "--note", help="Why, for the author."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Reject one lesson (asks for confirmation and your passphrase).

    Example: gitive review reject 3f1c9a0b --note "only true on the old build system"
    """
    return _one(lesson, False, note, None, stdin)


def _prepared_command() -> None:
    """``gitive review prepared`` lives with prepared work (gitive/cli/review_prepared.py)."""
    from gitive.cli.review_prepared import prepared

    app.command("prepared")(prepared)


_prepared_command()
