"""Dangling work, found each tick from what git and the logs can check, fed to the gate as candidate items.

| kind | what | for |
| --- | --- | --- |
| ``dangling.session`` | a session ended with open plan steps and no handoff (no message from it in its last 30 min) | its person |
| ``dangling.obligation`` | an open obligation past its deadline whose owner has no live session anywhere | whoever it is owed to, else its owner |
| ``dangling.decision`` | an approved Decision whose evidence files saw no commit in the 7 days after it | its author |
| ``lesson.held`` | a lesson waiting for review for more than 24 h (the ``held`` state) | its reviewer's digest |
| ``dangling.branch`` | a pushed branch, not merged into the default branch, with no commit for 14 days | its tip's author |

Each has a stable id (the same dangling work is one item however many ticks see it), and none is urgent by
itself: urgency comes from the records it is about (an obligation past its deadline, owed to someone).
Host-only facts (a pull request passed CI with no reviewer) come through watchers (:mod:`gitive.anchor.gate.watched`).
The queries that read git (decisions, branches) run at most every :data:`SLOW_EVERY_MS`.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.anchor.base import state
from gitive.anchor.base.context import Tick
from gitive.anchor.gate import gating, items
from gitive.anchor.gate.items import Candidate
from gitive.team.hive import Hive

HANDOFF_MS = 30 * 60_000
DECISION_DAYS = 7
BRANCH_DAYS = 14
SLOW_EVERY_MS = 10 * 60_000
DAY_MS = 86_400_000
DEFAULT_BRANCHES = ("heads/main", "heads/master", "heads/trunk", "heads/develop")

Found = list[tuple[Candidate, str | None, dict[str, Any] | None]]


def _make(kind: str, subject: str, person: str, title: str, now: int, about: list[dict[str, str]],
          files: list[str] | None = None) -> tuple[Candidate, str, None]:
    query = kind.split(".", 1)[1]
    c = items.make({"kind": "dangling", "ref": query}, kind, subject, person, title, now, about=about, files=files)
    return c, person, None


def candidates(hive: Hive, index: sqlite3.Connection, st: sqlite3.Connection, events: list[dict[str, Any]],
               now: int, presence: dict[str, Any] | None = None) -> Found:
    people = items.active_people(index)
    out: Found = []
    out += _sessions(index, events, people, now)
    out += _away(index, st, people, now, presence)
    last = state.get(st, "dangling-slow")
    if last is None or now - last >= SLOW_EVERY_MS:
        repo = _repo(hive)
        if repo is not None:
            out += _decisions(index, repo, people, now)
            out += _lessons(index, repo, people, now)
            out += _branches(index, repo, people, now)
        state.put(st, "dangling-slow", now, now)
    return out


def _sessions(index: sqlite3.Connection, events: list[dict[str, Any]], people: set[str], now: int) -> Found:
    out: Found = []
    for e in events:
        s = e.get("session") or {}
        if e["event"]["action"] != "session.ended" or not isinstance(s.get("open_steps"), int) \
                or s["open_steps"] <= 0 or s.get("person") not in people:
            continue
        address = str(s.get("address") or f"{s['person']}/{s.get('id')}")
        handoff = index.execute("SELECT 1 FROM entries WHERE kind = 'message' AND at >= ? AND "
                                "json_extract(envelope, '$.body.record.from') = ? LIMIT 1",
                                (e["ts"] - HANDOFF_MS, address)).fetchone()
        if handoff:
            continue
        out.append(_make("dangling.session", f"{address}:{e['ts']}", s["person"],
                         f"session {address} ended with {s['open_steps']} open plan steps and no handoff", now,
                         [{"kind": "session", "id": address}]))
    return out


def _live_people(st: sqlite3.Connection, index: sqlite3.Connection, presence: dict[str, Any] | None = None
                 ) -> set[str]:
    persons = dict(index.execute("SELECT machine, person FROM members").fetchall())
    return {persons[m] for m, cursor in state.presence(st, presence).items()
            if cursor.get("sessions") and m in persons}


def _away(index: sqlite3.Connection, st: sqlite3.Connection, people: set[str], now: int,
          presence: dict[str, Any] | None = None) -> Found:
    from gitive.index import obligations as table

    late = table.open_obligations(index, "AND deadline IS NOT NULL AND deadline < ? AND expires > ?", (now, now))
    if not late:
        return []
    here = _live_people(st, index, presence)
    out: Found = []
    for ob in late:
        if ob["owner"] in here:
            continue
        to = (ob.get("to") or "").split("/", 1)[0]
        person = to if to in people else ob["owner"]
        out.append(_make("dangling.obligation", ob["id"], person,
                         f"{ob['owner']} has been away past the deadline of: {ob['action']}", now,
                         [{"kind": "obligation", "id": ob["id"]}]))
    return out


def _decisions(index: sqlite3.Connection, repo: Any, people: set[str], now: int) -> Found:
    from gitive.lessons import catalog, evidence
    from gitive.store import objects

    out: Found = []
    for lesson in catalog.listing(index, states=("verified",), limit=10_000):
        reviewed = lesson.get("reviewed_at") or 0
        files = evidence.files(lesson["evidence"])
        if lesson["kind"] != "Decision" or not files or now - reviewed < DECISION_DAYS * DAY_MS \
                or lesson["author"] not in people:
            continue
        days = max(1, (now - reviewed) // DAY_MS)
        if objects.recent_author_emails(repo, files, since_days=int(days)):
            continue
        out.append(_make("dangling.decision", lesson["id"], lesson["author"],
                         f"decision {lesson['id'][:12]} was approved {days} days ago and no commit touched "
                         f"{', '.join(files[:3])} since", now, [{"kind": "lesson", "id": lesson["id"]}], files))
    return out


def _lessons(index: sqlite3.Connection, repo: Any, people: set[str], now: int) -> Found:
    from gitive.lessons import queue

    out: Found = []
    for lesson in queue.pending(index, repo, "", everyone=True):
        reviewer = lesson.get("suggested_reviewer")
        if lesson["state"] != "held" or reviewer not in people:
            continue
        out.append(_make("lesson.held", lesson["id"], reviewer,
                         f"{lesson['kind']} lesson by {lesson['author']} waits for your review "
                         f"({lesson['age_days']} days)", now, [{"kind": "lesson", "id": lesson["id"]}]))
    return out


def _branches(index: sqlite3.Connection, repo: Any, people: set[str], now: int) -> Found:
    from gitive.store import objects, refs, watch

    emails = {e.lower(): m["person"] for m in _members(index) for e in m["emails"]}
    out: Found = []
    for remote in _remotes(repo):
        tips = watch.tips(repo, remote, refs.tips(repo, watch.watch_prefix(remote)))
        defaults = [tips[b] for b in DEFAULT_BRANCHES if b in tips]
        for name, tip in sorted(tips.items()):
            if not name.startswith("heads/") or name in DEFAULT_BRANCHES or name.startswith("heads/hive/"):
                continue
            facts = objects.tip_facts(repo, tip, defaults)
            if facts is None or facts.merged or now - facts.at < BRANCH_DAYS * DAY_MS:
                continue
            person = emails.get(facts.email)
            if person not in people:
                continue
            branch = name[len("heads/"):]
            days = (now - facts.at) // DAY_MS
            out.append(_make("dangling.branch", f"{remote}/{branch}@{tip}", person,
                             f"branch {branch} on {remote}: no commit for {days} days, not merged", now,
                             [{"kind": "branch", "id": branch}, {"kind": "commit", "id": tip}]))
    return out


def _members(index: sqlite3.Connection) -> list[dict[str, Any]]:
    from gitive.index import queries

    return [m for m in queries.members(index) if m["active"] and m["role"] != "anchor"]


def _remotes(repo: Any) -> list[str]:
    from gitive.store import repo as repos

    return repos.remotes(repo)


def _repo(hive: Hive) -> Any:
    try:
        return hive.project
    except Exception:  # no project repository: only the log-based queries run
        return None


class OfferDangling:
    """The tick's step: when anything changed, the dangling work found offered to the gate."""

    name = "dangling"

    def run(self, tick: Tick) -> None:
        if isinstance(tick.gate, gating.Gate) and tick.changed:
            gating.offer_all(tick.gate, candidates(tick.run.hive, tick.index, tick.state, tick.events, tick.now,
                                                           tick.presence))
