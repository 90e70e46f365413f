"""``gitive review``: a person's queue of lessons to approve, edit, reject or skip; and one-off decisions."""

from __future__ import annotations

import sqlite3
from typing import Any

import typer

from gitive.cli import render
from gitive.cli.output import console

app = typer.Typer(help="Review proposed lessons (a person at a terminal only).\n\nExample: gitive review",
                  invoke_without_command=True)


def _decide(hive: Any, conn: sqlite3.Connection, lesson: dict[str, Any], approved: bool, note: str,
            text: str | None) -> None:
    from gitive.lessons.review import review

    verb = "approval" if approved else "rejection"
    if not typer.confirm(f"Sign this {verb} as yourself?", default=False):
        console.print("nothing signed")
        return
    done = review(hive, conn, lesson["id"], approved=approved, note=note, text=text)
    what = "approved" + (" with your edit" if done.edited else "") if approved else "rejected"
    console.print(f"{what} {lesson['id'][:12]}; `gitive sync` shares it")


@app.callback()
def queue(
    ctx: typer.Context,
    everyone: bool = typer.Option(False, "--all", help="Show every pending lesson, not only those for you."),
) -> int:
    """Go through the lessons waiting for you: [a]pprove, [e]dit and approve, [r]eject, [s]kip, [q]uit.

    Needs a person at a terminal; refuses to run inside an agent harness.

    Example: gitive review
    """
    if ctx.invoked_subcommand:
        return 0
    from gitive.index.refresh import fresh_index
    from gitive.lessons import evidence, gate
    from gitive.lessons.placement import my_person
    from gitive.lessons.queue import pending
    from gitive.team.hive import open_hive

    gate.require_person("reviewing lessons")
    hive = open_hive()
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
            if choice.startswith("a"):
                _decide(hive, conn, lesson, True, typer.prompt("note", default=""), None)
            elif choice.startswith("e"):
                text = typer.prompt("new text", default=lesson["text"] or "")
                _decide(hive, conn, lesson, True, typer.prompt("note", default=""), text)
            elif choice.startswith("r"):
                _decide(hive, conn, lesson, False, typer.prompt("why", default=""), None)
    return 0


def _one(lesson_id: str, approved: bool, note: str, text: str | None) -> int:
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog, evidence, gate
    from gitive.team.hive import open_hive

    gate.require_person("reviewing a lesson")
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        lesson = catalog.get(conn, catalog.resolve_id(conn, lesson_id))
        lesson["stale"] = evidence.stale(hive.project, lesson["evidence"])
        render.full(lesson)
        if text is not None:
            console.print(f"\n  your text: {text}")
        _decide(hive, conn, lesson, approved, note, text)
    return 0


@app.command("approve")
def approve(
    lesson: str = typer.Argument(..., help="A lesson id or unambiguous prefix."),
    note: str = typer.Option("", "--note", help="Why, for the record."),
    text: str | None = typer.Option(None, "--text", help="Replace the text (the original stays in history)."),
) -> int:
    """Approve one lesson, optionally with your edit of its text (asks for confirmation).

    Example: gitive review approve 3f1c9a0b --note "matches what we saw in prod"
    """
    return _one(lesson, True, note, text)


@app.command("reject")
def reject(
    lesson: str = typer.Argument(..., help="A lesson id or unambiguous prefix."),
    note: str = typer.Option("", "--note", help="Why, for the author."),
) -> int:
    """Reject one lesson (asks for confirmation).

    Example: gitive review reject 3f1c9a0b --note "only true on the old build system"
    """
    return _one(lesson, False, note, None)
