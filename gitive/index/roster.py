"""The roster in the index: merged from every verified roster entry, and the tables it fills.

``members`` (who is admitted, their state), ``member_gaps`` / ``member_time_gaps`` (the stretches of each
machine's logs that removals refuse, by position; by time for v1 removals), ``person_keys``, ``admins`` and
``gesture_exempt`` (decisions that need no gesture: everything in a v1 team not yet migrated, else what lies at
or below the migration heads). Readers see them through the views of migration 0006.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.constants import LOG_NAMES
from gitive.core import roles
from gitive.core.clock import now_ms
from gitive.index.db import meta_get, meta_set
from gitive.index.lessons import TEAM_META, check_pending_gestures
from gitive.index.problems import Report, record_problem
from gitive.team import authority
from gitive.team import roster as rosters

ALL = 2**62  # a seq no log reaches: "every entry" in gesture_exempt


def current_roster(conn: sqlite3.Connection, team_id: str, founder: str) -> rosters.Roster:
    """Merge the roster from every verified roster entry in the index (writes nothing)."""
    rows = conn.execute(
        "SELECT e.envelope FROM entries e JOIN logs l USING (author, log) WHERE e.log = 'roster' "
        "AND (l.quarantined_from IS NULL OR e.seq < l.quarantined_from)"
    ).fetchall()
    return rosters.merge(team_id, founder, [json.loads(r[0]) for r in rows], now_ms())


def _gap_rows(roster: rosters.Roster) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    by_seq, by_time = [], []
    for machine, gaps in roster.gaps.items():
        for n, gap in enumerate(gaps):
            if gap.lo is None:
                by_time.append((machine, n, gap.t_lo, gap.t_hi if gap.closed_by else None))
                continue
            # '*' stands for every log not named (a project log `project-<hex>` made after the removal too)
            for log in ("*", *sorted(set(LOG_NAMES) | set(gap.lo) | set(gap.hi or {}))):
                low = gap.lo.get(log, 0)
                if gap.closed_by is None:
                    by_seq.append((machine, n, log, low, None, None))
                elif gap.hi is None:
                    by_seq.append((machine, n, log, low, None, gap.t_hi))
                else:
                    by_seq.append((machine, n, log, low, max(low, gap.hi.get(log, 0)), None))
    return by_seq, by_time


def _exempt_rows(roster: rosters.Roster) -> list[tuple[str, str, int]]:
    if roster.version >= roles.TEAM_VERSION:
        return []
    if roster.migration is None:
        return [("*", "*", ALL)]
    return [(machine, log, seq) for machine, heads in roster.migration.items() for log, seq in heads.items()]


def _snapshot(conn: sqlite3.Connection) -> tuple[Any, ...]:
    return tuple(conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
                 for table in ("members", "member_gaps", "member_time_gaps", "person_keys", "admins",
                               "gesture_exempt"))


def recompute_roster(conn: sqlite3.Connection, team_id: str, founder: str, report: Report) -> rosters.Roster:
    """Merge the roster and refill the tables it decides; mark the report when anything they hold changed."""
    if meta_get(conn, TEAM_META) != team_id:
        meta_set(conn, TEAM_META, team_id)
    check_pending_gestures(conn, team_id)
    roster = current_roster(conn, team_id, founder)
    before = _snapshot(conn)
    for table in ("members", "member_gaps", "member_time_gaps", "person_keys", "admins", "gesture_exempt"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute("DELETE FROM problems WHERE kind = 'roster-refused'")
    conn.executemany(
        "INSERT INTO members VALUES (?,?,?,?,?,?,?,?,?)",
        [(m.machine, m.person, m.name, m.role, int(m.active), json.dumps(m.emails), m.ts, m.via, m.depth)
         for m in roster.members.values()],
    )
    by_seq, by_time = _gap_rows(roster)
    conn.executemany("INSERT INTO member_gaps VALUES (?,?,?,?,?,?)", by_seq)
    conn.executemany("INSERT INTO member_time_gaps VALUES (?,?,?,?)", by_time)
    conn.executemany("INSERT OR IGNORE INTO person_keys VALUES (?,?)",
                     [(person, key) for person, keys in roster.keys.items() for key in keys])
    current = authority.admin_persons(roster)
    conn.executemany("INSERT INTO admins VALUES (?,?)",
                     [(p, int(p in current)) for p in sorted(roster.ever_admins | current)])
    conn.executemany("INSERT INTO gesture_exempt VALUES (?,?,?)", _exempt_rows(roster))
    if _snapshot(conn) != before:
        report.roster_changed = True  # who counts changed: lesson states and tombstones are judged again
    for env, reason in roster.refused:
        body = env["body"]
        row = conn.execute("SELECT commit_id FROM entries WHERE author=? AND log=? AND seq=?",
                           (body["author"], body["log"], body["seq"])).fetchone()
        record_problem(conn, report, "roster-refused", f"{body['author'][:12]}/roster", row[0] if row else "",
                        body["author"], "roster", body["seq"], reason)
    return roster


def heads_of(conn: sqlite3.Connection, machine: str) -> dict[str, int]:
    """``machine``'s verified log heads as this index holds them: what a removal of it records."""
    return {log: hwm for log, hwm in conn.execute("SELECT log, hwm FROM logs WHERE author = ? AND hwm > 0",
                                                   (machine,))}


def standing(conn: sqlite3.Connection, machine: str) -> str | None:
    """'removed' when the roster lists ``machine`` and it is not active; None otherwise."""
    row = conn.execute("SELECT active FROM members WHERE machine = ?", (machine,)).fetchone()
    return "removed" if row is not None and not row[0] else None
