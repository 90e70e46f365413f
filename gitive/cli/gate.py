"""``gitive prefs``, ``gitive why``, ``gitive digest``, ``gitive gate report|live``: a person and the anchor's gate.

Setting preferences and going live are a person's decisions: at a terminal, signed with their person key's
gesture (:func:`_unlock`; readers refuse them without one, ``gitive/anchor/gestures.py``). Everything else
reads the replicated ledger.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import typer

from gitive.cli.output import console, emit_json, escape
from gitive.cli.person import passphrase_stdin as passphrase_option

prefs_app = typer.Typer(help="Your gate preferences: quiet hours, daily budget, alarms, mutes, channels.\n\n"
                             "Example: gitive prefs set --quiet 22:00-07:00 --tz Europe/Berlin --budget 6",
                        invoke_without_command=True)
digest_app = typer.Typer(help="Your digest: what the gate held, silenced or put aside, and what the anchor "
                              "checked.\n\nExample: gitive digest --markdown", invoke_without_command=True)
gate_app = typer.Typer(help="The anchor's gate for you: shadow mode's record, and going live.\n\n"
                            "Example: gitive gate report", no_args_is_help=True)



def register(app: typer.Typer) -> None:
    app.add_typer(prefs_app, name="prefs")
    app.command("why")(why)
    app.add_typer(digest_app, name="digest")
    app.add_typer(gate_app, name="gate")


def _when(ms: int | None) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC") if ms else "-"


def _now() -> int:
    from gitive.core.clock import now_ms

    return now_ms()


def _opened() -> Any:
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    hive = open_hive()
    return hive, fresh_index(hive)


# --- the person's gesture -------------------------------------------------------------------------------------


def _unlock(conn: Any, hive: Any, purpose: str, scripted: bool) -> Any:
    """This person's unlocked key for one decision, once sure it will count (None in a v1 team not migrated,
    where no key exists yet): the key opens only with the passphrase, which an agent does not have.

    Raises:
        NotAllowed: an anchor machine, no person key where one is needed, or not the registered one.
    """
    from gitive.cli.person import signer_if_any
    from gitive.index import deciding

    deciding.decider(conn, hive.me, None, key_known=False)
    signer = signer_if_any(purpose, scripted)
    deciding.decider(conn, hive.me, signer)
    return signer


# --- prefs ----------------------------------------------------------------------------------------------------


def _show_prefs(p: Any) -> None:
    quiet = f"{p.quiet[0]}-{p.quiet[1]}" if p.quiet else "off"
    console.print(f"{p.person}: quiet hours {quiet} ({p.tz}); budget {p.budget} attention items a day, each source "
                  f"at most {p.source_share()}; alarms {'on' if p.alarms else 'off'}; digest at {p.digest_at}")
    console.print(f"  channel {', '.join(p.channel)}; alarm channel {', '.join(p.alarm_channel)}")
    console.print(f"  muted sources: {', '.join(p.muted_sources) or 'none'}; muted kinds: "
                  f"{', '.join(p.muted_kinds) or 'none'}")
    console.print("  " + (f"set {_when(p.ts)}" if p.ts else "defaults (never set): `gitive prefs set --help`"))


def _prefs_json(p: Any) -> dict[str, Any]:
    return p.record(p.ts) | {"source_share": p.source_share(), "set": bool(p.ts)}


@prefs_app.callback()
def prefs(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Show your gate preferences (the defaults until you set them).

    Example: gitive prefs --json
    """
    if ctx.invoked_subcommand is not None:
        return 0
    from gitive.anchor.gate import gestures
    from gitive.anchor.gate import prefs as prefs_mod

    hive, opened = _opened()
    with opened as (conn, _):
        found = prefs_mod.current(conn, gestures.person_here(conn, hive.me), hive.team_id)
    if as_json:
        emit_json(_prefs_json(found))
    else:
        _show_prefs(found)
    return 0


@prefs_app.command("set")
def prefs_set(
    quiet: str | None = typer.Option(None, "--quiet", help="Quiet hours START-END in 24 h time, e.g. 22:00-07:00 "
                                                           "(over midnight is fine), or off."),
    tz: str | None = typer.Option(None, "--tz", help="Your time zone (IANA), e.g. Europe/Berlin."),
    budget: int | None = typer.Option(None, "--budget", min=0, help="Attention items a day (default 6)."),
    share: int | None = typer.Option(None, "--share", min=1, max=1000,
                                     help="Per-mille of the budget one source may take (default 334: a third)."),
    alarms: bool | None = typer.Option(None, "--alarms/--no-alarms", help="Let alarms through quiet hours."),
    channel: str | None = typer.Option(None, "--channel", help="Where attention items go: some of session, "
                                                               "desktop, inbox (comma-separated)."),
    alarm_channel: str | None = typer.Option(None, "--alarm-channel", help="Where floors and alarms go."),
    mute_source: list[str] = typer.Option([], "--mute-source", help="Silence a source (session:alice/api-claude, "
                                                                    "watcher:ci, or a kind such as watcher)."),
    unmute_source: list[str] = typer.Option([], "--unmute-source", help="Undo a --mute-source."),
    mute_kind: list[str] = typer.Option([], "--mute-kind", help="Silence an item kind (dangling.branch, or a "
                                                                "group: dangling)."),
    unmute_kind: list[str] = typer.Option([], "--unmute-kind", help="Undo a --mute-kind."),
    digest_at: str | None = typer.Option(None, "--digest-at", help="When your digest comes, HH:MM in your time "
                                                                   "zone (default 08:00)."),
    passphrase_stdin: bool = passphrase_option(),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """Change your gate preferences: a signed record of your own, at your terminal. Floors (security
    findings) reach you whatever you set.

    Example: gitive prefs set --quiet 22:00-07:00 --tz Europe/Berlin --budget 4 --mute-kind dangling.branch
    """
    from dataclasses import replace

    from gitive.anchor.gate import gestures
    from gitive.anchor.gate import prefs as prefs_mod
    from gitive.index.refresh import fresh_index
    from gitive.lessons.gate import require_person

    require_person("setting your gate preferences", passphrase_stdin)
    hive, opened = _opened()
    with opened as (conn, _):
        person = gestures.person_here(conn, hive.me)
        old = prefs_mod.current(conn, person, hive.team_id)
        changes = _changes(old, quiet, {"tz": tz, "budget": budget, "share": share, "alarms": alarms,
                                        "digest_at": digest_at},
                           {"channel": channel, "alarm_channel": alarm_channel},
                           (mute_source, unmute_source), (mute_kind, unmute_kind))
        new = replace(old, **changes, _zone=None)
        prefs_mod.check(new)  # every value checked before anything is asked or written
        signer = _unlock(conn, hive, "to set your gate preferences", passphrase_stdin)
    ts = max(_now(), old.ts + 1)
    gestures.write(hive, new.record(ts), signer)
    _share(hive)
    with fresh_index(hive) as (conn, _):
        written = prefs_mod.current(conn, person, hive.team_id)
    if as_json:
        emit_json(_prefs_json(written))
    else:
        console.print("Preferences set; the anchor applies them from its next tick.")
        _show_prefs(written)
    return 0


def _changes(old: Any, quiet: str | None, scalars: dict[str, Any], channels: dict[str, str | None],
             sources: tuple[list[str], list[str]], kinds: tuple[list[str], list[str]]) -> dict[str, Any]:
    """The fields ``prefs set`` changes: what was given (channels split on commas), mutes added and undone."""
    from gitive.anchor.gate import prefs as prefs_mod

    changes: dict[str, Any] = {k: v for k, v in scalars.items() if v is not None}
    if quiet is not None:
        changes["quiet"] = prefs_mod.parse_quiet(quiet)
    for name, value in channels.items():
        if value is not None:
            changes[name] = tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
    (mute_source, unmute_source), (mute_kind, unmute_kind) = sources, kinds
    changes["muted_sources"] = tuple(m for m in dict.fromkeys((*old.muted_sources, *mute_source))
                                     if m not in unmute_source)
    changes["muted_kinds"] = tuple(m for m in dict.fromkeys((*old.muted_kinds, *mute_kind)) if m not in unmute_kind)
    return changes


def _share(hive: Any) -> None:
    """Hand the new record to the daemon's next sync, or push it now when no daemon runs."""
    from gitive.daemon import control
    from gitive.index import sync as syncing

    if not control.ask("sync", budget=20.0):
        syncing.run(hive)


# --- why ------------------------------------------------------------------------------------------------------


def why(item: str = typer.Argument(..., help="Any id a surface shows (at least 6 characters): an item's (gitive "
                                             "next, inbox, digest), an obligation's (gitive owed), a task's or a "
                                             "ledger entry's (gitive log --log ledger)."),
        as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Why the anchor told you something, or why it did not: where the item stands now, then every decision
    about it, with its rule.

    Example: gitive why 7bcecec1
    """
    from gitive.anchor.gate import why as explaining
    from gitive.anchor.gate.items import person_of
    from gitive.daemon import anchor_items
    from gitive.daemon import db as daemon_db
    from gitive.needs import account, ids

    hive, opened = _opened()
    with daemon_db.connect() as db:
        shown = {i["item"]: i for i in anchor_items.items(db, limit=10_000)}
    with opened as (conn, _):
        told = ids.notice(conn, item)
        if told is not None:
            return _notice(told, as_json)
        resolved = ids.resolve(conn, item, person_of(conn, hive.me)[0])
        found = explaining.explain(conn, resolved.item)
        now = account.for_item(conn, found["item"])
    found["shown"] = shown.get(found["item"])
    found["via"], found["account"] = resolved.via, now._asdict()
    if as_json:
        emit_json(found)
    else:
        _show_why(found)
    return 0


def _title(record: dict[str, Any]) -> str:
    from gitive.index.ledger import title_or_why

    title, why = title_or_why(record)
    return title if title is not None else f"({why})"


def _show_why(found: dict[str, Any]) -> None:
    """``why`` in words: the item, where it stands now (its account), then every decision with its rule."""
    from gitive.needs import account

    record = found["record"] or {}
    via = f" (from its {found['via']} id)" if found["via"] != "item" else ""
    console.print(f"item {found['item'][:12]}{via} for {record.get('owner', '?')}: "
                  f"{escape(_title(record))}")
    console.print(f"  now: {escape(found['account']['words'])}")
    if record:
        source = record.get("source") or {}
        console.print(f"  from {source.get('kind')} {source.get('ref', '')}, kind {record.get('kind')}, "
                      f"about {', '.join(a['kind'] + ':' + a['id'][:12] for a in record.get('about') or []) or '-'}")
    for d in found["decisions"]:
        says = account.words_of(d) if account.state_of(d) == "would-deliver" else d["says"]
        console.print(f"  {_when(d['at'])} anchor {d['anchor'][:12]}: [bold]{d['branch']}[/] — {escape(says)}")
        console.print(f"      rule: {d['rule']}" + (f"; urgency {d['urgency']}" if d.get("urgency") else ""))
        for b in d.get("because") or []:
            console.print(f"      because {b['rule']} ({b.get('kind')} {str(b.get('id'))[:16]})")
        if d.get("until"):
            console.print(f"      until {_when(d['until'])}")
        if d.get("budget"):
            b = d["budget"]
            console.print(f"      budget {b['used']} of {b['of']} today; {b['source_used']} of {b['source_of']} "
                          "from its source")
    if not found["decisions"]:
        console.print("  the gate has not decided it yet (it decides at the anchor's next tick)")
    shown_here = found["shown"]
    if shown_here and shown_here["state"] == "shown":
        sessions = ", ".join(shown_here["sessions"]) or "no session live here"
        console.print(f"  shown on this machine {_when(shown_here['shown_at'])} ({sessions})")
    elif shown_here:
        console.print("  on this machine: waiting for your next breakpoint")


def _notice(told: dict[str, Any], as_json: bool) -> int:
    """``why`` of an anchor's notice: not a gate item; it went straight to the sessions its work concerns."""
    from gitive.needs import ids

    because = ids.NOTICE_WHY.get(told["from"], "the anchor's own notice to the sessions its work concerns")
    if as_json:
        emit_json(told | {"why": because})
        return 0
    console.print(f"notice {told['id']} from the team's anchor ({told['from']}) to {escape(str(told['to']))}, "
                  f"{_when(told['at'])}")
    console.print(f"  why: {escape(because)}")
    console.print("  not a gate item: the anchor sends it to those sessions at their next turn, never to a person")
    console.print(f"  {escape(str(told['body']))}")
    return 0


# --- digest ---------------------------------------------------------------------------------------------------


@digest_app.callback()
def digest(ctx: typer.Context,
           as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
           markdown: bool = typer.Option(False, "--markdown", help="Print as Markdown."),
           hours: int = typer.Option(24, "--hours", min=1, max=24 * 31, help="How far back it looks.")) -> int:
    """Your digest: what was held, silenced and digested (most unblocking first), obligations about to lapse,
    lessons waiting for your review, and what the anchor checked.

    Example: gitive digest --markdown
    """
    if ctx.invoked_subcommand is not None:
        return 0
    from gitive.anchor.gate import digest as digests
    from gitive.anchor.gate import gestures
    from gitive.daemon.service import team_view

    now = _now()
    hive, opened = _opened()
    live = digests.live_counts(team_view().directory)
    with opened as (conn, _):
        person = gestures.person_here(conn, hive.me)
        found = digests.build(conn, person, now, now - hours * 3_600_000, hive.project, live)
        _accounts(conn, found, person, now - hours * 3_600_000)
    if as_json:
        emit_json(found)
    elif markdown:
        typer.echo(digests.markdown(found, _when) + _shadow_markdown(found), nl=False)
    else:
        _show_digest(found)
    return 0


def _accounts(conn: Any, found: dict[str, Any], person: str, since: int) -> None:
    """Every line of the digest with its account (gitive/needs/account.py), and what in shadow would have been
    delivered: counted apart from what was, and listed with ids, as gitive inbox and gitive next list them."""
    from gitive.needs import account

    for line in found["lines"]:
        line["account"] = account.words_of(line)
    would = [a for a in account.accounts(conn, person, since) if a.state == "would-deliver"]
    found["would_deliver"] = [{"item": a.item, "title": a.title, "kind": a.kind, "branch": a.branch, "at": a.at,
                               "account": a.words} for a in would]
    found["delivered"] -= len(would)


def _shadow_markdown(found: dict[str, Any]) -> str:
    if not found["would_deliver"]:
        return ""
    out = ["", f"## Would have been delivered ({len(found['would_deliver'])}): your gate is in shadow", ""]
    out += [f"- `{w['item'][:12]}` {w['title']} (`gitive why {w['item'][:12]}`)" for w in found["would_deliver"]]
    return "\n".join([*out, "", "`gitive gate live` turns delivery on."]) + "\n"


def _show_digest(found: dict[str, Any]) -> None:
    checked = found.get("checked")
    if checked:
        console.print(f"The anchor checked {checked.get('events', 0)} events, {checked.get('obligations', 0)} "
                      f"obligations, {checked.get('watchers', 0)} watchers; held {checked.get('held', 0)} "
                      f"(its note of {_when(found['checked_at'])}).")
    else:
        console.print("[yellow]No digest note from an anchor yet[/]: nothing says what it checked (is one running? "
                      "`gitive anchor status` on it).")
    would = found["would_deliver"]
    console.print(f"[bold]{len(found['lines'])} not delivered[/], most unblocking first "
                  f"({found['delivered']} delivered" + (f", {len(would)} would have been: your gate is in shadow"
                                                        if would else "") + "):")
    for line in found["lines"]:
        console.print(f"  {line['item'][:12]} {escape(line['title'])}\n      {escape(line['account'])}  [dim]unblocks "
                      f"{line['unblocks']}; {line['rule']}; gitive why {line['item'][:12]}[/]")
    if would:
        console.print(f"[bold]{len(would)} would have been delivered[/] (your gate is in shadow; `gitive gate live` "
                      "turns delivery on):")
    for w in would:
        console.print(f"  {w['item'][:12]} {escape(w['title'])}\n      {escape(w['account'])}  "
                      f"[dim]gitive why {w['item'][:12]}[/]")
    for o in found["lapsing"]:
        console.print(f"  lapsing {o['id'][:12]} {o['action']} (expires {_when(o['expires'])})")
    for lesson in found["lessons"]:
        console.print(f"  review  {lesson['id'][:12]} {lesson['kind']} by {lesson['author']} ({lesson['state']}, "
                      f"{lesson['age_days']} days)")
    console.print("[dim]Mark a line: gitive digest mark ITEM wanted|unwanted[/]")


@digest_app.command("mark")
def digest_mark(item: str = typer.Argument(..., help="The item's id (at least 6 characters)."),
                verdict: str = typer.Argument(..., help="wanted (you would have wanted it sent) or unwanted."),
                as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Mark an item you wanted (or did not): shadow mode's record, kept on this machine.

    Example: gitive digest mark 7bcecec1 wanted
    """
    from gitive.anchor.gate import why as explaining
    from gitive.daemon import anchor_items
    from gitive.daemon import db as daemon_db
    from gitive.errors import GitiveError
    from gitive.needs import ids

    if verdict not in ("wanted", "unwanted"):
        raise GitiveError(f"mark {verdict!r}: use wanted or unwanted")
    _, opened = _opened()
    with opened as (conn, _):
        found = explaining.explain(conn, ids.resolve(conn, item).item)
    with daemon_db.connect() as db:
        anchor_items.mark(db, found["item"], verdict == "wanted", _now())
    if as_json:
        emit_json({"item": found["item"], "wanted": verdict == "wanted"})
    else:
        console.print(f"marked {found['item'][:12]} {verdict}")
    return 0


# --- gate report | live ---------------------------------------------------------------------------------------


@gate_app.command("report")
def gate_report(days: int = typer.Option(14, "--days", min=1, max=365, help="How far back it looks."),
                as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Shadow mode's record: the acted-on rate of what would have been delivered, and the missed-item rate of
    what was held, silenced or digested.

    Example: gitive gate report --days 7
    """
    from gitive.anchor.gate import gestures, shadow
    from gitive.daemon import anchor_items
    from gitive.daemon import db as daemon_db

    hive, opened = _opened()
    with daemon_db.connect() as db:
        marks = anchor_items.marks(db)
    with opened as (conn, _):
        person = gestures.person_here(conn, hive.me)
        found = shadow.report(conn, person, marks, _now() - days * 86_400_000)
        found["live"] = gestures.live_people(conn, hive.team_id).get(person, (False, 0))[0]
    if as_json:
        emit_json(found)
        return 0

    def rate(value: int | None) -> str:
        return f"{value / 10:.1f}%" if value is not None else "n/a"

    console.print(f"{person}'s gate is {'live' if found['live'] else 'in shadow'}; {found['items']} items in "
                  f"{days} days ({found['shadow']} decided in shadow)")
    console.print(f"  acted on {found['acted_on']} of {found['would_deliver']} delivered or would-be-delivered: "
                  f"{rate(found['acted_on_permille'])}")
    console.print(f"  missed {found['missed']} of {found['held_silenced_digested']} held, silenced or digested: "
                  f"{rate(found['missed_permille'])}")
    if found["unmarked"]:
        console.print(f"  {found['unmarked']} items unmarked: `gitive digest`, then `gitive digest mark ITEM wanted`")
    if not found["live"]:
        console.print("When the missed-item rate is acceptable to you: `gitive gate live`")
    return 0


@gate_app.command("live")
def gate_live(off: bool = typer.Option(False, "--off", help="Go back to shadow: record, send only floors."),
              passphrase_stdin: bool = passphrase_option(),
              as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Start real delivery for you (your gate leaves shadow mode), at your terminal; --off goes back.

    Example: gitive gate live
    """
    from gitive.anchor.gate import gestures
    from gitive.lessons.gate import require_person

    require_person("taking your gate live", passphrase_stdin)
    hive, opened = _opened()
    with opened as (conn, _):
        person = gestures.person_here(conn, hive.me)
        before = gestures.live_people(conn, hive.team_id).get(person, (False, 0))
        signer = _unlock(conn, hive, "to take your gate live" if not off else "to put your gate back in shadow",
                         passphrase_stdin)
    ts = max(_now(), before[1] + 1)
    gestures.write(hive, {"type": "gate-live", "person": person, "live": not off, "ts": ts, "actor": "person"},
                   signer)
    _share(hive)
    if as_json:
        emit_json({"person": person, "live": not off, "ts": ts})
    else:
        console.print(f"{person}'s gate is {'back in shadow: only floors are sent' if off else 'live'} from the "
                      "anchor's next tick")
    return 0
