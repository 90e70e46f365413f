"""``gitive who``, ``send``, ``inbox``, ``held``, ``release``, ``drop``: the team's present tense for a person."""

from __future__ import annotations

import sys
import time
from typing import Any

import typer

from gitive.cli.output import console, emit_json, escape
from gitive.cli.person import passphrase_stdin, person_gesture


def register(app: typer.Typer) -> None:
    app.command("who")(who)
    app.command("send")(send)
    app.command("inbox")(inbox)
    app.command("held")(held)
    app.command("release")(release)
    app.command("drop")(drop)


def _directory() -> tuple[Any, list[dict[str, Any]], set[str], str]:
    from gitive.daemon.service import team_view

    return team_view()


def _directory_from_daemon() -> list[dict[str, Any]] | None:
    """The directory as a running daemon sees it (it has pygit2 and the verifier warm), or None."""
    import os

    from gitive.capture import daemon_client
    from gitive.store.gitdir import find

    found = find(os.getcwd())
    reply = daemon_client.request({"op": "who", "repo": str(found.toplevel)}, budget=10.0) if found else None
    return reply["sessions"] if reply and reply.get("ok") and isinstance(reply.get("sessions"), list) else None


def who(as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
        all_: bool = typer.Option(False, "--all", help="Include sessions gone quiet.")) -> int:
    """Who is working where: live agent sessions across the team (after the last sync).

    Example: gitive who --json
    """
    from gitive.daemon import claims

    rows = _directory_from_daemon()
    if rows is None:
        _, rows, _, _ = _directory()
    rows = sorted((r for r in rows if all_ or r["live"]), key=lambda r: (r["person"], r["name"]))
    if as_json:
        emit_json(rows)
        return 0
    if not rows:
        console.print("no live sessions (they appear once a harness with gitive hooks runs; `gitive sync` fetches "
                      "teammates')")
    now = int(time.time() * 1000)
    for r in rows:
        where = f"{r.get('repo_label') or '?'}@{r.get('branch') or '?'}"
        doing = f" — {r['doing']}" if r.get("doing") else ""
        files = ", ".join((r.get("modified") or r.get("files") or [])[-3:])
        console.print(escape(f"{r['address']:<28} {r.get('harness') or '':<7} {r.get('turn') or '':<8} "
                             f"{where}{doing}") + (f"  [dim]{escape(files)}[/]" if files else ""))
        for c in claims.active(r, now):
            until = time.strftime("%H:%M", time.localtime(c["until"] / 1000))
            note = f" — {c['note']}" if c.get("note") else ""
            console.print(f"{'':<28} [yellow]claims[/] {escape(c['path'])} until {until}{escape(note)}")
    return 0


def send(
    to: str = typer.Argument(..., help="person/session, session, person/*, repo:NAME or *; with --reply, the "
                                       "message alone (it goes to whoever sent the one it answers)."),
    text: str | None = typer.Argument(None, help="The message (at most 64 KiB)."),
    sender: str | None = typer.Option(None, "--from", help="Send as this session (person/session): for agents "
                                                           "and scripts; a person at a terminal sends as "
                                                           "person/terminal."),
    reply_to: str | None = typer.Option(None, "--reply", "--reply-to", help="The id (or first 8+ characters) of "
                                                                         "the message this answers."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """Send a message to a session of the team; it arrives at that session's next tool call or start.

    With --reply ID the message joins that thread (`gitive inbox --thread ID` shows it), and the address may be
    left out: it goes to whoever sent the message it answers.

    Example: gitive send bob/api-claude "did you change the token format?"
    """
    from gitive.daemon import mailbox
    from gitive.daemon.service import push_own
    from gitive.errors import GitiveError

    hive, rows, persons, person = _directory()
    if text is None:
        if reply_to is None:
            raise GitiveError("say what to send: gitive send TO TEXT, or gitive send --reply ID TEXT")
        to, text = _answer_to(hive, person, reply_to), to
    if reply_to is not None:
        reply_to = _message_id(hive, person, reply_to)
    is_person = sender is None and sys.stderr.isatty()
    if sender is None and not is_person:
        raise GitiveError("no terminal: agents use the MCP send_message tool, scripts pass --from person/session")
    if sender is not None and not sender.startswith(f"{person}/"):
        raise GitiveError(f"--from must be one of your own sessions ({person}/…)")
    if sender is not None and sender.endswith("/terminal") and not sys.stderr.isatty():
        raise GitiveError("only a person at a terminal sends as …/terminal; scripts and agents use a session name")
    done = mailbox.send(hive, rows, persons, sender=sender or f"{person}/terminal", to=to, body=text,
                        from_person=is_person, reply_to=reply_to)
    if done.held:
        console.print(f"[yellow]held {done.id}, not sent[/]: {escape(done.held)}; its person decides with "
                      f"`gitive release {done.id}` or `gitive drop {done.id}`")
        return 1
    pushed = push_own(hive)  # out at once: the recipients' daemons see it at their next probe
    if as_json:
        emit_json({"id": done.id, "recipients": [r._asdict() for r in done.recipients],
                   "pushed_to": sorted(r for r, res in pushed.items() if not res.rejected)})
    else:
        console.print(f"sent {done.id} to {', '.join(r.address for r in done.recipients)}; it arrives at their "
                      "next tool call or session start (or when their machine next syncs)")
    return 0


def _thread_of(hive: Any, person: str, message: str) -> list[dict[str, Any]]:
    from gitive.daemon import db as daemon_db
    from gitive.daemon import threads
    from gitive.index.refresh import fresh_index

    with fresh_index(hive) as (conn, _), daemon_db.connect() as db:
        return threads.thread(conn, db, person, message)


def _message_id(hive: Any, person: str, message: str) -> str:
    """The full id of a message this person may read (received here or sent by them), from an id or prefix."""
    return next(m["id"] for m in _thread_of(hive, person, message) if m["id"].upper().startswith(
        message.strip().upper()))


def _answer_to(hive: Any, person: str, message: str) -> str:
    """Who an answer to ``message`` goes to: its sender (for a message this person sent: its address)."""
    found = next(m for m in _thread_of(hive, person, message) if m["id"].upper().startswith(message.strip().upper()))
    return str(found["to"] if found["direction"] == "sent" else found["from"])


def inbox(as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
          sent: bool = typer.Option(False, "--sent", help="Show what this machine sent, with acks."),
          search: str | None = typer.Option(None, "--search", help="Search the messages you may read (received "
                                                                  "here, sent by you) for these words."),
          limit: int = typer.Option(20, "--limit", min=1, max=100, help="With --search: at most this many."),
          items: bool = typer.Option(False, "--items", help="Only the items the anchor delivered to you."),
          thread: str | None = typer.Option(None, "--thread", help="The whole thread around this message id "
                                                                   "(what it answers and every answer).")
          ) -> int:
    """Messages for this machine's sessions (queued, delivered, read, held) and the items the anchor delivered
    to you, or with --sent the messages you sent.

    With --search, the messages you may read that contain every word given (best match first, with a
    snippet): those this machine's sessions received and those any of your machines sent.

    Example: gitive inbox --search "token format"
    """
    if items:
        return _items(as_json)
    if thread is not None:
        hive, _, _, person = _directory()
        return _listing(_thread_of(hive, person, thread), as_json, "no such thread", lambda r: (
            f"{'  ' * r['depth']}{r['id']} {r['direction']:<8} {escape(r['from'] + ' → ' + r['to'])}: "
            f"{escape(r['body'][:70])}"))
    from gitive.daemon import db as daemon_db
    from gitive.daemon import mailbox
    from gitive.index import mail
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    if search is not None:
        return _listing(mailbox.search_for(open_hive(), search, limit), as_json, "no message matches",
                        lambda r: f"{r['id']} {r['direction']:<8} {escape(r['from'] + ' → ' + r['to'])}: "
                                  f"{escape(r['snippet'])}")
    if sent:
        hive = open_hive()
        with fresh_index(hive) as (conn, _):
            rows = mail.sent(conn, hive.me)
        return _listing(rows, as_json, "nothing sent from this machine yet", lambda r: (
            f"{r['id']} to {escape(r['to'])}: {escape(r['body'][:60])}  [dim]"
            + (", ".join(f"{a['state']} by {a['session']}" for a in r["acks"]) or "no ack yet") + "[/]"))
    with daemon_db.connect() as db:
        rows = mailbox.received(db)
    _listing(rows, as_json, "no messages", lambda r: (
        f"{r['id']} {r['state']:<9} {escape(r['from'] + ' → ' + r['to_session'])}: {escape(r['body'][:70])}"
        + (f"  [yellow]{escape(r['reason'])}[/]" if r["reason"] else "")))
    return 0 if as_json else _items(False, heading=True)


def _listing(rows: list[dict[str, Any]], as_json: bool, empty: str, line: Any) -> int:
    """Print ``rows`` as JSON, or one ``line(row)`` each (``empty`` when there is none)."""
    if as_json:
        emit_json(rows)
        return 0
    if not rows:
        console.print(empty)
    for r in rows:
        console.print(line(r))
    return 0


def _items(as_json: bool, heading: bool = False) -> int:
    """The anchor's items for this machine's person (taken from the ledger now, so no daemon is needed): those
    delivered here, and those that in shadow would have been, each with its id and its account."""
    from datetime import UTC, datetime

    from gitive.core.clock import now_ms
    from gitive.daemon import anchor_items
    from gitive.daemon import db as daemon_db
    from gitive.errors import GitiveError
    from gitive.index.refresh import fresh_index
    from gitive.needs import account
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
        rows = account.inbox(conn, anchor_items.items(db), row[0], now_ms()) if row else []
    if as_json:
        emit_json(rows)
        return 0
    if heading:
        console.print(f"[bold]items from the anchor[/] ({len(rows)}):" if rows else "no items from the anchor")
    elif not rows:
        console.print("no items from the anchor")
    for r in rows:
        when = datetime.fromtimestamp(r["decided_at"] / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")
        here = {"shown": "; shown here", "waiting": "; waiting for a breakpoint here"}.get(r["state"], "")
        console.print(f"{r['item'][:12]} {when} {escape(r['title'][:90])}\n    {escape(r['account'])}{here}  "
                      f"[dim]gitive why {r['item'][:12]}[/]")
    return 0


def held(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Messages held for you: inbound ones (screening, the inbound policy, the rate limit, the loop guard) and
    what your own sessions tried to send or propose right after reading a credential file (outbound screening).

    `gitive release ID` lets one through, `gitive drop ID` discards it.

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
        arrow = "→" if r["direction"] == "inbound" else f"[yellow]wants to {_verb(r['kind'])}[/] →"
        console.print(f"{r['id']} {escape(r['from'])} {arrow} {escape(r['to_session'])}: {escape(r['reason'])}\n"
                      f"    {escape(r['body'][:200])}")
    return 0


def _verb(kind: str) -> str:
    return "propose a lesson" if kind == "lesson" else "send"


def _held_one(message: str) -> dict[str, Any]:
    from gitive.daemon import db as daemon_db
    from gitive.daemon import mailbox
    from gitive.errors import GitiveError

    with daemon_db.connect() as db:
        found = [r for r in mailbox.held(db) if r["id"] == message]
    if not found:
        raise GitiveError(f"no held message {message[:80]!r}; `gitive held` lists them")
    return found[0]


def release(message: str = typer.Argument(..., help="The id of a held message."),
            stdin: bool = passphrase_stdin()) -> int:
    """Let a held message through (a person at a terminal, with their person key's passphrase): an inbound one
    to its session, one your session wrote after reading a credential file out to its recipients.

    Example: gitive release 01JA2B3C4D5E6F7G8H9J0K1M2N
    """
    from gitive.daemon import db as daemon_db
    from gitive.daemon import mailbox
    from gitive.daemon.service import team_view
    from gitive.lessons import gate

    gate.require_person("releasing a held message", scripted=stdin)
    view = team_view()
    row = _held_one(message)
    person_gesture("to release a held message", stdin)  # the gesture: a person's decision, not an agent's
    if row["direction"] == "outbound":
        return _release_outbound(view, message)
    with daemon_db.connect() as db:
        count = mailbox.release(db, message, view.person)
    console.print(f"released {message} to {count} session(s); it arrives at the next tool call or session start")
    return 0


def _release_outbound(view: Any, message: str) -> int:
    from gitive.daemon import db as daemon_db
    from gitive.daemon import mailbox
    from gitive.daemon.outbound import propose_held
    from gitive.daemon.service import push_own

    with daemon_db.connect() as db:
        done = mailbox.release_sent(view.hive, view.directory, view.persons, db, message, propose=propose_held)
    push_own(view.hive)
    console.print(f"released {message}: {escape(done)}")
    return 0


def drop(message: str = typer.Argument(..., help="The id of a held message."),
         stdin: bool = passphrase_stdin()) -> int:
    """Discard a held message (a person at a terminal, with their person key's passphrase): an inbound one is
    never delivered, one your session wrote after reading a credential file is never sent, and its text is
    deleted from this machine.

    Example: gitive drop 01JA2B3C4D5E6F7G8H9J0K1M2N
    """
    from gitive.daemon import db as daemon_db
    from gitive.daemon import mailbox
    from gitive.lessons import gate

    gate.require_person("dropping a held message", scripted=stdin)
    _held_one(message)
    person_gesture("to drop a held message", stdin)
    with daemon_db.connect() as db:
        which = mailbox.drop(db, message)
    console.print(f"dropped {message}" + ("; it was never sent" if which == "outbound" else
                                          "; it will not be delivered"))
    return 0
