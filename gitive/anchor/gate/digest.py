"""The digest: per person, what the gate held, silenced and put aside, ordered by how much each unblocks, with
obligations about to lapse, lessons waiting for review, and what the anchor checked (so a quiet anchor never
looks like a broken one).

Two halves. On the anchor, at each person's ``digest_at`` (their time zone), :func:`note` makes the digest an
item of its own (kind ``digest``) whose record carries the counts since the previous note; the gate delivers it
(branch ``note``). On any machine, :func:`build` assembles the digest from the replicated ledger and the index
(``gitive digest``).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.anchor.gate import items
from gitive.anchor.gate import prefs as prefs_mod
from gitive.anchor.gate.items import Candidate
from gitive.anchor.gate.prefs import Prefs
from gitive.index import ledger as ledger_reads

DAY_MS = 86_400_000
LAPSING_MS = 2 * DAY_MS
NOT_DELIVERED = ("hold", "preference", "duplicate", "digest")
_WORDS = {"hold": "held", "preference": "silenced", "duplicate": "silenced", "digest": "digested"}


def record_checked(st: sqlite3.Connection, at: int, events: int, evaluations: int, obligations: int,
                   watchers: int) -> None:
    """What one tick checked, for the next digest's counts (ticks that checked nothing are not kept)."""
    if events or evaluations or watchers:
        st.execute("INSERT OR REPLACE INTO gate_checked VALUES (?,?,?,?,?)", (at, events, evaluations, obligations,
                                                                            watchers))


def _last_note(st: sqlite3.Connection, person: str) -> int | None:
    row = st.execute("SELECT MAX(at) FROM gate_decisions WHERE person = ? AND branch = 'note'", (person,)).fetchone()
    return row[0] if row and row[0] is not None else None


def due(st: sqlite3.Connection, index: sqlite3.Connection, people: set[str], prefs: dict[str, Prefs],
        now: int) -> list[str]:
    """People whose digest time came since their last note (and since this anchor's gate first ran)."""
    from gitive.anchor.base import state

    started = state.get(st, "gate-started")
    if started is None:
        return []
    out = []
    for person in sorted(people):
        p = prefs.get(person) or Prefs(person)
        at = prefs_mod.digest_time(p, now)
        if at >= started and at > (_last_note(st, person) or 0):
            out.append(person)
    return out


def counts(st: sqlite3.Connection, person: str, since: int, now: int) -> dict[str, int]:
    """What the anchor checked since ``since`` and what the gate did for ``person`` (integers only)."""
    row = st.execute("SELECT COUNT(*), COALESCE(SUM(events), 0), COALESCE(SUM(evaluations), 0), "
                     "COALESCE(MAX(obligations), 0), COALESCE(MAX(watchers), 0) FROM gate_checked "
                     "WHERE at > ? AND at <= ?", (since, now)).fetchone()
    out = {"ticks": row[0], "events": row[1], "evaluations": row[2], "obligations": row[3], "watchers": row[4]}
    for branch, n in st.execute("SELECT branch, COUNT(DISTINCT item) FROM gate_decisions WHERE person = ? AND "
                                "at > ? AND at <= ? GROUP BY branch", (person, since, now)):
        word = _WORDS.get(branch, "delivered" if branch in ("floor", "alarm", "attention") else branch)
        out[word] = out.get(word, 0) + n
    return out


def note(st: sqlite3.Connection, index: sqlite3.Connection, person: str, p: Prefs, now: int) -> Candidate:
    """The digest as an item for ``person``: its counts since the previous note."""
    since = _last_note(st, person) or now - DAY_MS
    found = counts(st, person, since, now)
    day = prefs_mod.day_of(p, now)
    title = (f"Your digest: {found.get('held', 0)} held, {found.get('silenced', 0)} silenced, "
             f"{found.get('digested', 0)} digested; checked {found['events']} events, {found['obligations']} "
             f"obligations, {found['watchers']} watchers")
    return items.make({"kind": "digest", "ref": person}, "digest", f"digest:{person}:{day}", person, title, now,
                      counts=found)


# --- the digest on any machine ----------------------------------------------------------------------------


def _unblocks(index: sqlite3.Connection, record: dict[str, Any], live: dict[str, int],
              obligations: dict[str, dict[str, Any]]) -> int:
    """How much an item unblocks: sessions, obligations and branches in the graph that wait on it."""
    n = 0
    for a in record.get("about") or []:
        if a.get("kind") == "obligation" and a.get("id") in obligations:
            to = obligations[a["id"]].get("to") or ""
            n += 1 + (live.get(to, 0) if "/" not in to else int(to in live))  # the obligation, its waiters
        elif a.get("kind") == "session":
            n += int(a.get("id") in live)
        elif a.get("kind") == "branch":
            n += 1
    subject = str(record.get("subject") or "")
    n += sum(1 for ob in obligations.values() if subject and subject.split(":")[0] in ob.get("condition", ""))
    return n


def live_counts(directory: list[dict[str, Any]]) -> dict[str, int]:
    """person -> live sessions, and person/session -> 1, from a directory of sessions (``gitive who``'s)."""
    out: dict[str, int] = {}
    for row in directory:
        if row.get("live") and row.get("address"):
            out[str(row["address"])] = 1
            out[str(row.get("person"))] = out.get(str(row.get("person")), 0) + 1
    return out


def build(index: sqlite3.Connection, person: str, now: int, since: int | None = None,
          repo: Any = None, live: dict[str, int] | None = None) -> dict[str, Any]:
    """``person``'s digest: every item not delivered since ``since`` (default: a day), most unblocking first;
    ``live`` (:func:`live_counts`) counts the sessions waiting on each item."""
    from gitive.index import obligations as table

    since = since if since is not None else now - DAY_MS
    latest: dict[str, dict[str, Any]] = {}
    for d in ledger_reads.decisions(index, person=person, since=since):
        latest.setdefault(d["item"], d)  # newest first: an item delivered later is not in the digest
    records = ledger_reads.item_records(index, list(latest))
    obligations = {ob["id"]: ob for ob in table.rows(index, "WHERE state = 'open'")}
    live = live or {}
    lines = []
    for item, d in latest.items():
        if d["branch"] not in NOT_DELIVERED:
            continue
        record = records.get(item) or {}
        lines.append({"item": item, "title": record.get("title") or "(item record not here yet)",
                      "kind": record.get("kind"), "state": _WORDS[d["branch"]], "branch": d["branch"],
                      "rule": d["rule"], "at": d["at"], "until": d.get("until"), "shadow": d["shadow"],
                      "unblocks": _unblocks(index, record, live, obligations)})
    lines.sort(key=lambda line: (-line["unblocks"], -line["at"], line["item"]))
    lapsing = [{"id": ob["id"], "action": ob["action"], "expires": ob["expires"]}
               for ob in obligations.values()
               if ob["owner"] == person and now < ob["expires"] <= now + LAPSING_MS]
    note_ = next((d for d in ledger_reads.decisions(index, person=person) if d["branch"] == "note"), None)
    checked = (records.get(note_["item"]) or ledger_reads.item_records(index, [note_["item"]]).get(note_["item"], {})
               ).get("counts") if note_ else None
    return {"person": person, "since": since, "at": now, "lines": lines,
            "lapsing": sorted(lapsing, key=lambda o: o["expires"]), "lessons": _lessons(index, repo, person),
            "checked": checked, "checked_at": note_["at"] if note_ else None, "prepared": _prepared(index, person, since),
            "delivered": sum(1 for d in latest.values() if d["branch"] not in NOT_DELIVERED)}


def _prepared(index: sqlite3.Connection, person: str, since: int) -> dict[str, int]:
    """Prepared work in the digest: how many of the anchor's drafts ``person`` skipped (docs/prepared.md)."""
    from gitive.index import prepared as prepared_reads

    return {"skipped": prepared_reads.skips(index, person, since)}


def _lessons(index: sqlite3.Connection, repo: Any, person: str) -> list[dict[str, Any]]:
    if repo is None:
        return []
    from gitive.lessons import queue

    try:
        waiting = queue.pending(index, repo, person)
    except Exception:  # a repository the lessons' evidence cannot be read in: the digest still comes
        return []
    return [{"id": lesson["id"], "kind": lesson["kind"], "state": lesson["state"], "age_days": lesson["age_days"],
             "author": lesson["author"]} for lesson in waiting]


def markdown(found: dict[str, Any], when: Any) -> str:
    """The digest as Markdown (``gitive digest --markdown``); ``when`` formats a time in ms."""
    out = [f"# Digest for {found['person']}", ""]
    checked = found.get("checked")
    if checked:
        out.append(f"The anchor checked {checked.get('events', 0)} events, {checked.get('obligations', 0)} "
                   f"obligations, {checked.get('watchers', 0)} watchers; held {checked.get('held', 0)} "
                   f"(as of {when(found['checked_at'])}).")
    else:
        out.append("No digest note from an anchor yet: nothing says what it checked.")
    out += ["", f"## Not delivered ({len(found['lines'])}), most unblocking first", ""]
    for line in found["lines"]:
        until = f" until {when(line['until'])}" if line.get("until") else ""
        out.append(f"- `{line['item'][:12]}` **{line['state']}**{until}: {line['title']} "
                   f"(unblocks {line['unblocks']}; {line['rule']})")
    if not found["lines"]:
        out.append("- nothing held, silenced or digested")
    out += ["", "## Obligations about to lapse", ""]
    out += [f"- `{o['id'][:12]}` {o['action']} (expires {when(o['expires'])})" for o in found["lapsing"]] or ["- none"]
    out += ["", "## Lessons waiting for your review", ""]
    out += [f"- `{lesson['id'][:12]}` {lesson['kind']} by {lesson['author']}, {lesson['state']} "
            f"({lesson['age_days']} days)" for lesson in found["lessons"]] or ["- none"]
    skipped = (found.get("prepared") or {}).get("skipped")
    if skipped:
        out += ["", f"You skipped {skipped} of the anchor's drafts (`gitive review prepared`)."]
    return "\n".join(out) + "\n"
