"""``gitive who``, ``send``, ``inbox``, ``held``, ``release``: the team's present tense for a person."""

from __future__ import annotations

import sys
from typing import Any

import typer

from gitive.cli.output import console, emit_json


def register(app: typer.Typer) -> None:
    app.command("who")(who)
    app.command("send")(send)
    app.command("inbox")(inbox)
    app.command("held")(held)
    app.command("release")(release)


def _directory() -> tuple[Any, list[dict[str, Any]], set[str], str]:
    from gitive.daemon.service import team_view

    return team_view()


def who(as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
        all_: bool = typer.Option(False, "--all", help="Include sessions gone quiet.")) -> int:
    """Who is working where: live agent sessions across the team (after the last sync).

    Example: gitive who --json
    """
    _, rows, _, _ = _directory()
    rows = sorted((r for r in rows if all_ or r["live"]), key=lambda r: (r["person"], r["name"]))
    if as_json:
        emit_json(rows)
        return 0
    if not rows:
        console.print("no live sessions (they appear once a harness with gitive hooks runs; `gitive sync` fetches "
                      "teammates')")
    for r in rows:
        where = f"{r.get('repo_label') or '?'}@{r.get('branch') or '?'}"
        doing = f" — {r['doing']}" if r.get("doing") else ""
        files = ", ".join((r.get("modified") or r.get("files") or [])[-3:])
        console.print(f"{r['address']:<28} {r.get('harness') or '':<7} {r.get('turn') or '':<8} {where}{doing}"
                      + (f"  [dim]{files}[/]" if files else ""))
    return 0


def send(
    to: str = typer.Argument(..., help="person/session, session, person/*, repo:NAME or *."),
    text: str = typer.Argument(..., help="The message (at most 64 KiB)."),
    sender: str | None = typer.Option(None, "--from", help="Send as this session (person/session): for agents "
                                                           "and scripts; a person at a terminal sends as "
                                                           "person/terminal."),
    reply_to: str | None = typer.Option(None, "--reply-to", help="The id of the message this answers."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """Send a message to a session of the team; it arrives at that session's next tool call or start.

    Example: gitive send bob/api-claude "did you change the token format?"
    """
    from gitive.daemon import control, mailbox
    from gitive.errors import GitiveError
    from gitive.index import sync as syncing

    hive, rows, persons, person = _directory()
    is_person = sender is None and sys.stderr.isatty()
    if sender is None and not is_person:
        raise GitiveError("no terminal: agents use the MCP send_message tool, scripts pass --from person/session")
    if sender is not None and not sender.startswith(f"{person}/"):
        raise GitiveError(f"--from must be one of your own sessions ({person}/…)")
    if sender is not None and sender.endswith("/terminal") and not sys.stderr.isatty():
        raise GitiveError("only a person at a terminal sends as …/terminal; scripts and agents use a session name")
    done = mailbox.send(hive, rows, persons, sender=sender or f"{person}/terminal", to=to, body=text,
                        from_person=is_person, reply_to=reply_to)
    if not control.ask("sync", budget=30.0):
        syncing.run(hive)  # no daemon: push it now
    if as_json:
        emit_json({"id": done.id, "recipients": [r._asdict() for r in done.recipients]})
    else:
        console.print(f"sent {done.id} to {', '.join(r.address for r in done.recipients)}; it arrives at their "
                      "next tool call or session start (or when their machine next syncs)")
    return 0


def inbox(as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
          sent: bool = typer.Option(False, "--sent", help="Show what this machine sent, with acks."),
          items: bool = typer.Option(False, "--items", help="Only the items the anchor delivered to you.")) -> int:
    """Messages for this machine's sessions (queued, delivered, read, held) and the items the anchor delivered
    to you, or with --sent the messages you sent.

    Example: gitive inbox --items --json
    """
    if items:
        return _items(as_json)
    from gitive.daemon import db as daemon_db
    from gitive.daemon import mailbox
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    if sent:
        hive = open_hive()
        with fresh_index(hive) as (conn, _):
            rows = mailbox.sent(conn, hive.me)
        if as_json:
            emit_json(rows)
        for r in [] if as_json else rows:
            acks = ", ".join(f"{a['state']} by {a['session']}" for a in r["acks"]) or "no ack yet"
            console.print(f"{r['id']} to {r['to']}: {r['body'][:60]}  [dim]{acks}[/]")
        return 0
    with daemon_db.connect() as db:
        rows = mailbox.received(db)
    if as_json:
        emit_json(rows)
        return 0
    if not rows:
        console.print("no messages")
    for r in rows:
        console.print(f"{r['id']} {r['state']:<9} {r['from']} → {r['to_session']}: {r['body'][:70]}"
                      + (f"  [yellow]{r['reason']}[/]" if r["reason"] else ""))
    return _items(False, heading=True)


def _items(as_json: bool, heading: bool = False) -> int:
    """The anchor's items for this machine's person (taken from the ledger now, so no daemon is needed)."""
    from datetime import UTC, datetime

    from gitive.daemon import anchor_items
    from gitive.daemon import db as daemon_db
    from gitive.errors import GitiveError
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    try:
        hive = open_hive()
    except GitiveError:
        if heading:  # messages are this machine's; items need the team's repository
            return 0
        raise
    with fresh_index(hive) as (conn, _), daemon_db.connect() as db:
        row = conn.execute("SELECT person FROM members WHERE machine = ? AND active = 1", (hive.me,)).fetchone()
        if row:
            anchor_items.take(conn, db, hive.team_id, row[0])
        rows = anchor_items.items(db)
    if as_json:
        emit_json(rows)
        return 0
    if heading:
        console.print(f"[bold]items from the anchor[/] ({len(rows)}):" if rows else "no items from the anchor")
    elif not rows:
        console.print("no items from the anchor")
    for r in rows:
        when = datetime.fromtimestamp(r["decided_at"] / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
        state = "shown" if r["state"] == "shown" else "waiting for a breakpoint"
        console.print(f"{r['item'][:12]} {r['branch']:<9} {when} {r['title'][:90]}  [dim]{state}; gitive why "
                      f"{r['item'][:12]}[/]")
    return 0


def held(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Messages held for you by screening, the inbound policy, the rate limit or the loop guard.

    Example: gitive held
    """
    from gitive.daemon import db as daemon_db
    from gitive.daemon import mailbox

    with daemon_db.connect() as db:
        rows = mailbox.held(db)
    if as_json:
        emit_json(rows)
        return 0
    if not rows:
        console.print("nothing held")
    for r in rows:
        console.print(f"{r['id']} {r['from']} → {r['to_session']}: {r['reason']}\n    {r['body'][:200]}")
    return 0


def release(message: str = typer.Argument(..., help="The id of a held message.")) -> int:
    """Let a held message through to its session (a person at a terminal only).

    Example: gitive release 01JA2B3C4D5E6F7G8H9J0K1M2N
    """
    from gitive.daemon import db as daemon_db
    from gitive.daemon import mailbox
    from gitive.daemon.service import team_view
    from gitive.lessons import gate

    gate.require_person("releasing a held message")
    person = team_view().person
    with daemon_db.connect() as db:
        count = mailbox.release(db, message, person)
    console.print(f"released {message} to {count} session(s); it arrives at the next tool call or session start")
    return 0
