"""``gitive owe``, ``gitive owed`` and ``gitive obligation done|cancel|renew``: promises with a condition."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import typer

from gitive.cli.output import console, emit_json
from gitive.cli.person import passphrase_stdin

obligation_app = typer.Typer(help="Change an obligation: mark it done, cancel it, renew it.\n\n"
                                  "Example: gitive obligation done 3f2a9c", no_args_is_help=True)



def register(app: typer.Typer) -> None:
    app.command("owe")(owe)
    app.command("owed")(owed)
    app.add_typer(obligation_app, name="obligation")


def duration_ms(text: str, what: str) -> int:
    from gitive.anchor.obligations.records import parse_duration

    return parse_duration(text, what)


def deadline_ms(text: str) -> int:
    from gitive.anchor.obligations.records import parse_deadline

    return parse_deadline(text)


def _actor() -> str:
    """``agent`` when the environment shows an agent harness, else ``person`` (a speed bump, see lessons/gate;
    what makes a person's decision count is the gesture :func:`_unlock` asks for)."""
    from gitive.lessons.gate import agent_variables

    return "agent" if agent_variables() else "person"


def _unlock(scripted: bool) -> Any:
    """Asks for the person key when a decision about someone else's obligation needs it (docs/obligations.md)."""
    from gitive.cli.person import signer_if_any

    return lambda: signer_if_any("to sign a decision about someone else's obligation", scripted)


def _when(ms: int | None) -> str:
    if ms is None:
        return "-"
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def owe(
    when: str = typer.Option(..., "--when", help="The condition: CEL over one event `e` (docs/events.md), e.g. "
                                                 "'e.event.action == \"vcs.merged\" && e.vcs.branch == "
                                                 "\"auth-rotation\"'."),
    do: str = typer.Option(..., "--do", help="What is owed then, at most 500 characters."),
    owner: str | None = typer.Option(None, "--owner", help="Who owes it (a person of the team; default: you)."),
    to: str | None = typer.Option(None, "--to", help="Who it is owed to: a person, or a session person/name."),
    deadline: str | None = typer.Option(None, "--deadline", help="By when: 2026-12-20 (end of day, UTC) or an "
                                                                 "ISO time."),
    expires: str = typer.Option("7d", "--expires", help="It lapses unless renewed after this long (at most 90d)."),
    files: list[str] = typer.Option([], "--file", help="A file it touches (repeatable): sessions working on it "
                                                       "see it on their card."),
    no_push: bool = typer.Option(False, "--no-push", help="Sign it but do not sync it now."),
    stdin: bool = passphrase_stdin(),
    as_json: bool = typer.Option(False, "--json", help="Print the record as JSON."),
) -> int:
    """Record an obligation: when the condition becomes true, the anchor puts the action in front of its owner.

    The condition is checked now: a syntax error, a field or event the vocabulary lacks (with the right
    spelling suggested) or a too costly expression is refused, and nothing is written.

    Example: gitive owe --owner bob --when 'e.event.action == "vcs.merged" && e.vcs.branch == "auth-rotation"'
    --do 'remove the grace period' --deadline 2026-12-20
    """
    from gitive.anchor.obligations import records as obligations
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    expires_ms = duration_ms(expires, "--expires")
    due = deadline_ms(deadline) if deadline else None
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        me = conn.execute("SELECT person FROM members WHERE machine = ?", (hive.me,)).fetchone()
        draft = obligations.Draft(owner or (me[0] if me else ""), when, do, to=to, deadline=due,
                                  expires_in_ms=expires_ms, files=files, source={"kind": "cli"})
        done = obligations.record(hive, conn, draft, actor=_actor(), project=hive.project_id,
                                  unlock=_unlock(stdin))
    report = None if no_push else syncing.run(hive)
    if as_json:
        emit_json({"obligation": done, "synced": bool(report and report.ok)})
        return 0
    console.print(f"owed {done['id'][:12]}: {done['owner']} will {done['action']!r}; expires {_when(done['expires'])}")
    if report is not None and not report.ok:
        console.print("not on the remote yet: `gitive sync` shares it")
    return 0


def _line(item: dict[str, Any]) -> str:
    ev = item["evaluation"]
    to = f" → {item['to']}" if item["to"] else ""
    due = f", deadline {_when(item['deadline'])}" if item["deadline"] else ""
    return (f"{item['id'][:12]}  {item['status']:<9} {item['owner']}{to}: {item['action']}\n"
            f"              when {item['condition']}\n"
            f"              {ev['value']}: {ev['reason']}{due}; expires {_when(item['expires'])}")


def owed(
    person: str | None = typer.Option(None, "--person", help="Only what this person owes, or is owed."),
    project: bool = typer.Option(False, "--project", help="Only obligations written in this repository."),
    action: str | None = typer.Option(None, "--event", help="Only those waiting for this event action, e.g. "
                                                            "vcs.merged."),
    everything: bool = typer.Option(False, "--all", help="Also done, cancelled and lapsed ones, and refused records."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """List open obligations with their state and evaluation (satisfied, unsatisfied, or unverifiable and why).

    Example: gitive owed --person bob
    """
    from gitive.anchor.obligations import records as obligations
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        found = obligations.owed(conn, person=person, project=hive.project_id if project else None,
                                 action=action, include_closed=everything)
        refused = obligations.refused(conn) if everything else []
        anchors = obligations.anchors(conn)
    if as_json:
        emit_json({"obligations": found, "refused": refused, "anchors": anchors})
        return 0
    if not found:
        console.print("nothing owed" + (" that matches" if person or project or action else ""))
    for item in found:
        console.print(_line(item))
    if not anchors and found:
        console.print("[yellow]no anchor in the team: nothing evaluates these conditions (docs/anchor.md)[/]")
    for r in refused:
        console.print(f"[red]refused[/] {r['id'][:12]} by {r['author']}: {r['problem']}")
    return 0


def _change(prefix: str, state: str, note: str | None, as_json: bool, stdin: bool, renew_for: str | None = None
            ) -> int:
    from gitive.anchor.obligations import records as obligations
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        extra = {"expires_in_ms": duration_ms(renew_for, "--for")} if renew_for else {}
        done = obligations.change(hive, conn, prefix, state, actor=_actor(), note=note, unlock=_unlock(stdin),
                                  **extra)
    report = syncing.run(hive)
    if as_json:
        emit_json({"change": done, "synced": report.ok})
        return 0
    what = {"done": "marked done", "cancelled": "cancelled", "renewed": "renewed"}[state]
    until = f" until {_when(done['expires'])}" if state == "renewed" else ""
    console.print(f"{what} {done['obligation'][:12]}{until}")
    return 0


_NOTE = typer.Option(None, "--note", help="A short note kept with the change.")
_ID = typer.Argument(..., help="The obligation's id, or its first 6+ characters (`gitive owed` lists them).")
_JSON = typer.Option(False, "--json", help="Print the signed change as JSON.")


@obligation_app.command("done")
def done(obligation: str = _ID, note: str | None = _NOTE, stdin: bool = passphrase_stdin(),
         as_json: bool = _JSON) -> int:
    """Mark an obligation done (its owner, or any person with their person key).

    Example: gitive obligation done 3f2a9c --note "grace period removed in 81c2"
    """
    return _change(obligation, "done", note, as_json, stdin)


@obligation_app.command("cancel")
def cancel(obligation: str = _ID, note: str | None = _NOTE, stdin: bool = passphrase_stdin(),
           as_json: bool = _JSON) -> int:
    """Cancel an obligation (its owner, or any person with their person key; an agent cannot cancel one it
    does not own).

    Example: gitive obligation cancel 3f2a9c --note "not needed after all"
    """
    return _change(obligation, "cancelled", note, as_json, stdin)


@obligation_app.command("renew")
def renew(obligation: str = _ID, until: str = typer.Option("7d", "--for", help="How long from now (at most 90d)."),
          note: str | None = _NOTE, stdin: bool = passphrase_stdin(), as_json: bool = _JSON) -> int:
    """Renew an obligation so it does not lapse (its owner, or any person with their person key).

    Example: gitive obligation renew 3f2a9c --for 30d
    """
    return _change(obligation, "renewed", note, as_json, stdin, until)
