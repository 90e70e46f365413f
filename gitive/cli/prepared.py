"""``gitive hand``, ``gitive handoff``, ``gitive review prepared`` and ``gitive standing …``: prepared work."""

from __future__ import annotations

from typing import Any

import typer

from gitive.cli.output import console, emit_json


def register(app: typer.Typer) -> None:
    from gitive.cli.standing import app as standing_app

    app.command("hand")(hand)
    app.command("handoff")(handoff)
    app.add_typer(standing_app, name="standing")


def _actor() -> str:
    from gitive.lessons.gate import agent_variables

    return "agent" if agent_variables() else "person"


def _seconds(text: str) -> int:
    from gitive.anchor.obligations.records import parse_duration

    return max(1, parse_duration(text, "--budget") // 1000)


def _hand_task(brief: str, test: str, worker: str, base: str | None, target: str | None, budget: str,
               kind: str | None, owner: str | None, no_push: bool, source: dict[str, str],
               marker: dict[str, Any] | None = None) -> tuple[dict[str, Any], bool, bool]:
    from gitive.anchor.prepared import tasks
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    seconds = _seconds(budget)
    hive = open_hive()
    _, branch, commit = tasks.base_for(hive, base)
    ahead = tasks.unpushed(hive, branch, commit)
    with fresh_index(hive) as (conn, _):
        draft = tasks.Draft(brief, branch, commit, test=test, worker=worker, kind=kind or "", budget_s=seconds,
                            owner=owner or "", target=target or "", source=source, marker=marker)
        done = tasks.record(hive, conn, draft, actor=_actor(), project=hive.project_id)
    report = None if no_push else syncing.run(hive)
    return done, ahead, bool(report and report.ok)


def _say_handed(done: dict[str, Any], ahead: bool, synced: bool, no_push: bool) -> None:
    from gitive.anchor.prepared.tasks import branch_name

    console.print(f"handed {done['id'][:12]} to the anchor: it works on {done['base']['branch']} at "
                  f"{done['base']['commit'][:12]} and stops at a draft on {branch_name(done)}")
    if ahead:
        console.print(f"[yellow]{done['base']['branch']} has commits the remote lacks: the task starts without "
                      "them (push first to include them)[/]")
    if not synced and not no_push:
        console.print("not on the remote yet: `gitive sync` shares it")


def hand(
    brief: str = typer.Argument(..., help="What to do, or the failing test to fix (at most 48 KiB)."),
    to: str = typer.Option("anchor", "--to", help="Who gets it: `anchor` (a teammate's session gets a handoff: "
                                                  "`gitive handoff --to person/session`)."),
    test: str = typer.Option("", "--test", help="The test command that shows it is done, e.g. "
                                                "'pytest tests/test_auth.py'."),
    worker: str = typer.Option("default", "--worker", help="A worker named in the anchor's config (default: "
                                                            "its `prepared.worker`)."),
    base: str | None = typer.Option(None, "--base", help="The branch to start from, as the remote has it "
                                                         "(default: the one checked out)."),
    target: str | None = typer.Option(None, "--target", help="Where an approved change lands (default: the base "
                                                             "branch)."),
    budget: str = typer.Option("30m", "--budget", help="Wall time the anchor may spend on it: 90m, 2h."),
    kind: str | None = typer.Option(None, "--kind", help="The class of change (standing approvals cover a "
                                                         "kind), e.g. dep-bump-patch; default: the worker."),
    owner: str | None = typer.Option(None, "--owner", help="Who reviews the draft (default: you)."),
    no_push: bool = typer.Option(False, "--no-push", help="Sign it but do not sync it now."),
    as_json: bool = typer.Option(False, "--json", help="Print the task as JSON."),
) -> int:
    """Hand a task to the anchor: it runs a worker on a clean worktree of the base and stops at a draft on
    refs/heads/hive/<task> that you review with `gitive review prepared`.

    Example: gitive hand --to anchor "make test_refresh pass" --test 'pytest tests/test_auth.py'
    """
    from gitive.errors import GitiveError

    if to != "anchor":
        raise GitiveError(f"--to {to!r}: a task goes to the anchor; hand a session to a teammate with "
                          "`gitive handoff --to person/session`")
    done, ahead, synced = _hand_task(brief, test, worker, base, target, budget, kind, owner, no_push,
                                     {"kind": "hand"})
    if as_json:
        emit_json({"task": done, "synced": synced, "unpushed": ahead})
        return 0
    _say_handed(done, ahead, synced, no_push)
    return 0


def handoff(
    to: str | None = typer.Option(None, "--to", help="Send it: `anchor` (as a task) or person/session (as a "
                                                     "message). Without --to it is only written here."),
    session: str | None = typer.Option(None, "--session", help="The session to hand over (default: the latest "
                                                               "one on this machine)."),
    brief_file: str | None = typer.Option(None, "--brief", help="Send this brief (one you wrote or edited) "
                                                                "instead of building one."),
    test: str = typer.Option("", "--test", help="With --to anchor: the test command that shows it is done."),
    worker: str = typer.Option("default", "--worker", help="With --to anchor: the worker to run."),
    budget: str = typer.Option("30m", "--budget", help="With --to anchor: wall time it may spend."),
    listing: bool = typer.Option(False, "--list", help="List the sessions this machine's event log has."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """Write the handoff brief of a session (Markdown, at most 48 KiB, redacted, safety lines first), from
    this machine's event log. It stays on this machine until you send it with --to.

    Example: gitive handoff --to anchor --test 'pytest tests/test_auth.py'
    """
    from gitive.capture import handoff as briefs
    from gitive.core.clock import now_ms
    from gitive.core.home import gitive_home
    from gitive.errors import GitiveError
    from gitive.team.hive import open_hive

    if listing:
        return _list_sessions(as_json)
    text, source = _brief_text(brief_file, session)
    hive = open_hive()
    now = now_ms()
    body, marker = briefs.with_marker(text, hive.key, hive.team_id, source, now)
    if len(body.encode()) > briefs.MAX_BYTES:
        raise GitiveError(f"the brief is {len(body.encode()):,} bytes, over 48 KiB: shorten it and pass --brief")
    path = briefs.write_local(body, gitive_home() / "handoffs", f"{now}-{marker['brief'][:8]}")
    out: dict[str, Any] = {"path": str(path), "bytes": len(body.encode()), "session": source}
    ahead = False
    if to == "anchor":
        done, ahead, synced = _hand_task(body, test, worker, None, None, budget, None, None, False,
                                         {"kind": "handoff", "ref": marker["brief"]}, marker)
        out |= {"task": done, "synced": synced}
    elif to:
        out |= {"message": _send(to, body)}
    if as_json:
        emit_json(out)
        return 0
    _say_handoff(out, to, ahead)
    return 0


def _list_sessions(as_json: bool) -> int:
    """``gitive handoff --list``: the sessions this machine's event log has (20 newest when printed)."""
    from gitive.capture import handoff as briefs

    found = briefs.sessions()
    if as_json:
        emit_json({"sessions": found})
        return 0
    for s in found[:20]:
        console.print(f"{s['id']:<40} {s['harness'] or '?':<8} {s['cwd'] or ''}")
    return 0


def _brief_text(brief_file: str | None, session: str | None) -> tuple[str, str]:
    """The brief to send and the session it is of: a kept brief re-read and re-scrubbed, or a new one."""
    from pathlib import Path

    from gitive.capture import handoff as briefs
    from gitive.errors import GitiveError

    if brief_file:
        # a brief sent again (edited or not) keeps one marker, naming its session, not the file it was kept in
        text, earlier = briefs.strip_marker(Path(brief_file).read_text(encoding="utf-8"))
        source = session or (earlier["session"] if earlier else Path(brief_file).stem)
        return briefs.scrub_detected(text), source
    latest = briefs.sessions()
    source = session or (latest[0]["id"] if latest else "")
    if not source:
        raise GitiveError("this machine's event log has no session yet (install the harness hooks: "
                          "`gitive install`)")
    return briefs.brief(source), source


def _say_handoff(out: dict[str, Any], to: str | None, ahead: bool) -> None:
    console.print(f"brief of {out['session']}: {out['path']} ({out['bytes']:,} bytes, kept on this machine)")
    if to == "anchor":
        _say_handed(out["task"], ahead, out["synced"], False)
    elif to:
        console.print(f"sent to {to} as message {out['message']['id']}")
    else:
        console.print("nothing sent: read it, then `gitive handoff --brief PATH --to anchor|person/session`")


def _send(to: str, body: str) -> dict[str, Any]:
    from gitive.daemon import mailbox
    from gitive.daemon.service import push_own, team_view

    hive, rows, persons, person = team_view()
    done = mailbox.send(hive, rows, persons, sender=f"{person}/terminal", to=to, body=body, from_person=True)
    push_own(hive)
    return {"id": done.id, "recipients": [r._asdict() for r in done.recipients]}
