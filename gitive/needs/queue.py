"""``gitive next``: one queue of what needs this person now, most unblocking first.

Six kinds of thing wait on a person, and each used to live under its own command. The queue takes them from the
same readers those commands use, so it can never say something they do not:

| kind | from | the command to act |
| --- | --- | --- |
| ``draft`` | the anchor's drafts of their tasks nobody answered (``gitive review prepared``) | ``gitive review prepared ID`` |
| ``held`` | mail screening held for their sessions (``gitive held``) | ``gitive release ID`` |
| ``obligation`` | obligations they owe that fired, went past their deadline or lapse within two days (``gitive owed``) | ``gitive obligation done ID`` |
| ``lesson`` | lessons waiting for their review (``gitive review``) | ``gitive review approve ID`` |
| ``item`` | the anchor's items delivered to them, or in shadow would have been, not yet marked (``gitive inbox``) | ``gitive why ID`` |
| ``message`` | messages to their sessions here that no session has read yet (``gitive inbox``) | ``gitive inbox --thread ID`` |

The order is the table's: a draft blocks a landing and the anchor's next step; held mail stops a sender; a fired
obligation is what someone is waiting for; a lesson's author and every later session wait on a review; an item
and a message only inform. Within a kind, what waits for someone else comes first, then the oldest. An item about a
draft or an obligation already in the queue is told on that row (its account and ``gitive why``), not twice.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.needs import account, local

if TYPE_CHECKING:
    from gitive.store.types import Repo

KINDS = ("draft", "held", "obligation", "lesson", "item", "message")
LAPSING_MS = 2 * 86_400_000
ITEMS_FOR_MS = 7 * 86_400_000  # an unmarked item leaves the queue after a week (the digest keeps it)


class Need(NamedTuple):
    kind: str
    id: str
    at: int  # since when it waits
    why: str  # one line
    act: str  # the exact command
    title: str  # the local record's text, for the dashboard
    waits: int = 0  # how many others wait on it (the sort's second key)
    item: str | None = None  # the anchor's item about it, when there is one
    account: str | None = None  # that item's account (account.words_of)
    state: str | None = None

    def as_json(self, now: int) -> dict[str, Any]:
        return self._asdict() | {"age_s": max(0, (now - self.at) // 1000)}


def drafts(index: sqlite3.Connection, person: str, project: str | None) -> list[Need]:
    from gitive.anchor.prepared import reviewing, tasks

    out = []
    for w in reviewing.waiting(index, person, project):
        if w.answered:
            continue
        stat, tests = w.draft.get("stat") or {}, w.draft.get("tests") or {}
        ran = f", tests exit {tests['before']} before and {tests['after']} after" if tests else ""
        brief = (w.task.get("brief") or "").strip().splitlines()
        out.append(Need("draft", w.task["id"], int(w.draft["at"]),
                        f"the anchor's draft on {tasks.branch_name(w.task)} waits for you: {stat.get('files', 0)} "
                        f"files{ran}", f"gitive review prepared {w.task['id'][:12]}", brief[0] if brief else "",
                        waits=1, state="drafted"))
    return out


def held(db: sqlite3.Connection | None) -> list[Need]:
    return [Need("held", m["id"], int(m["received_at"]), f"held from {m['from']} to your session {m['to_session']}: "
                 f"{m['reason']}", f"gitive release {m['id']}", _line(m["body"]), waits=1, state="held")
            for m in local.received(db, 1000, ("held",))]


def obligations(index: sqlite3.Connection, person: str, now: int) -> list[Need]:
    from gitive.anchor.obligations import records

    out = []
    for ob in records.owed(index, person=person, now=now):
        if ob["owner"] != person:
            continue
        fired = (ob["firings"].get("condition") or {}).get("at")
        to = f" (for {ob['to']})" if ob.get("to") else ""
        if ob["status"] == "fired":
            need = (int(fired or now), "fired", f"fired: you owe {ob['action']!r}{to}")
        elif ob["status"] == "past-due":
            need = (int(ob["deadline"]), "past-due", f"past its deadline: you owe {ob['action']!r}{to}")
        elif ob["expires"] <= now + LAPSING_MS:
            need = (int(ob.get("created") or now), "lapsing",
                    f"lapses {account.utc_minute(int(ob['expires']))}: {ob['action']!r}{to}; renew or close it")
        else:
            continue
        act = f"gitive obligation {'renew' if need[1] == 'lapsing' else 'done'} {ob['id'][:12]}"
        out.append(Need("obligation", ob["id"], need[0], need[2], act, ob["action"], waits=int(bool(ob.get("to"))),
                        state=need[1]))
    return out


def lessons(index: sqlite3.Connection, repo: Repo | None, person: str) -> list[Need]:
    if repo is None:
        return []
    from gitive.lessons import queue

    return [Need("lesson", lesson["id"], int(lesson["at"]),
                 f"{lesson['kind']} by {lesson['author']} waits for your review ({lesson['state']})",
                 f"gitive review approve {lesson['id'][:12]}", _line(lesson.get("text") or ""),
                 state=lesson["state"]) for lesson in queue.pending(index, repo, person)]


def items(index: sqlite3.Connection, db: sqlite3.Connection | None, person: str, now: int) -> list[Need]:
    marked = _marked(db)
    out = []
    for a in account.accounts(index, person, since=now - ITEMS_FOR_MS):
        if a.state not in ("delivered", "would-deliver") or a.branch == "note" or a.item in marked:
            continue
        out.append(Need("item", a.item, int(a.at or now), f"{a.words}: {a.title}", f"gitive why {a.item[:12]}",
                        a.title, waits=int(a.branch == "floor"), item=a.item, account=a.words, state=a.state))
    return out


def messages(db: sqlite3.Connection | None) -> list[Need]:
    seen: dict[str, Need] = {}
    for m in local.received(db, 1000, local.UNREAD):  # one row per message, whichever session it went to
        seen.setdefault(m["id"], Need("message", m["id"], int(m["received_at"]), f"from {m['from']} to your session "
                                      f"{m['to_session']}, not read yet", f"gitive inbox --thread {m['id']}",
                                      _line(m["body"]), state=str(m["state"])))
    return list(seen.values())


def build(index: sqlite3.Connection, db: sqlite3.Connection | None, person: str, now: int, *,
          repo: Repo | None = None, project: str | None = None) -> list[Need]:
    """Everything that needs ``person`` now, most unblocking first (the module's table)."""
    found = [*drafts(index, person, None), *held(db), *obligations(index, person, now),
             *lessons(index, repo, person), *messages(db)]
    found = _fold(index, found, items(index, db, person, now))
    return sorted(found, key=lambda n: (KINDS.index(n.kind), -n.waits, n.at, n.id))


def _fold(index: sqlite3.Connection, rows: list[Need], found: list[Need]) -> list[Need]:
    """``rows`` with each item about one of them told on that row; the other items as rows of their own."""
    from gitive.index import ledger as ledger_reads

    by_id = {(n.kind, n.id): i for i, n in enumerate(rows)}
    records = ledger_reads.item_records(index, [n.id for n in found])
    out = list(rows)
    for n in found:
        about = [(_ROW_OF.get(a.get("kind", "")), a.get("id")) for a in (records.get(n.id) or {}).get("about") or []]
        about.append((_ROW_OF.get(str(((records.get(n.id) or {}).get("source") or {}).get("kind"))),
                      ((records.get(n.id) or {}).get("source") or {}).get("ref")))
        at = next((by_id[k] for k in about if k in by_id), None)
        if at is None:
            out.append(n)
        elif out[at].item is None:
            out[at] = out[at]._replace(item=n.id, account=n.account,
                                       why=f"{out[at].why}; the anchor's item {n.id[:12]}: {n.account}")
    return out


_ROW_OF = {"obligation": "obligation", "task": "draft", "prepared": "draft"}


def _marked(db: sqlite3.Connection | None) -> set[str]:
    """Items this person marked wanted or unwanted (``gitive digest mark``): they have seen them."""
    if db is None or not _has(db, "item_marks"):
        return set()
    return {r[0] for r in db.execute("SELECT item FROM item_marks")}


def _has(db: sqlite3.Connection, table: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone() is not None


def _line(text: str, limit: int = 120) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
