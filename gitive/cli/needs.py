"""``gitive next``: what needs you now, most unblocking first, each with the command that acts on it."""

from __future__ import annotations

from typing import Any

import typer

from gitive.cli.output import console, emit_json, escape


def register(app: typer.Typer) -> None:
    app.command("next")(next_)


def age(seconds: int) -> str:
    """A short age: 40s, 12m, 5h, 3d."""
    for size, unit in ((86_400, "d"), (3_600, "h"), (60, "m")):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def collect() -> tuple[str, int, list[Any]]:
    """(person, now, the queue) for this machine's person, after a fresh look at the index."""
    from gitive.anchor.gate import gestures
    from gitive.core.clock import now_ms
    from gitive.index.refresh import fresh_index
    from gitive.needs import local, queue
    from gitive.team.hive import open_hive

    hive = open_hive()
    now = now_ms()
    with fresh_index(hive) as (conn, _), local.open_readonly() as db:
        person = gestures.person_here(conn, hive.me)
        found = queue.build(conn, db, person, now, repo=hive.project, project=hive.project_id)
    return person, now, found


def next_(as_json: bool = typer.Option(False, "--json", help="Print as JSON (the same rows)."),
          limit: int = typer.Option(50, "--limit", min=1, max=1000, help="At most this many rows.")) -> int:
    """What needs you now, most unblocking first: drafts to review, held mail, obligations you owe that fired
    or lapse soon, lessons to review, the anchor's items for you, unread messages. Each row has its id, its
    age, why, and the exact command that acts on it.

    Example: gitive next --json | jq -r '.[0].act'
    """
    person, now, found = collect()
    if as_json:
        emit_json([n.as_json(now) for n in found[:limit]])
        return 0
    if not found:
        console.print(f"nothing needs {person} now")
        return 0
    console.print(f"[bold]{len(found)} thing{'s' if len(found) != 1 else ''} need{'' if len(found) != 1 else 's'} "
                  f"{escape(person)}[/], most unblocking first:")
    for n in found[:limit]:
        console.print(f"{n.kind:<10} {n.id[:12]:<12} {age(max(0, (now - n.at) // 1000)):>4}  {escape(n.why)}")
        console.print(f"{'':<28}[dim]→[/] {escape(n.act)}")
    if len(found) > limit:
        console.print(f"… and {len(found) - limit} more (--limit)")
    return 0
