"""The roster in the index: merged from every verified roster entry, and the ``members`` table it fills."""

from __future__ import annotations

import json
import sqlite3

from gitive.core.clock import now_ms
from gitive.index.problems import Report, record_problem
from gitive.team import roster as rosters


def current_roster(conn: sqlite3.Connection, team_id: str, founder: str) -> rosters.Roster:
    """Merge the roster from every verified roster entry in the index (writes nothing)."""
    rows = conn.execute(
        "SELECT e.envelope FROM entries e JOIN logs l USING (author, log) WHERE e.log = 'roster' "
        "AND (l.quarantined_from IS NULL OR e.seq < l.quarantined_from)"
    ).fetchall()
    return rosters.merge(team_id, founder, [json.loads(r[0]) for r in rows], now_ms())


def recompute_roster(conn: sqlite3.Connection, team_id: str, founder: str, report: Report) -> rosters.Roster:
    roster = current_roster(conn, team_id, founder)
    conn.execute("DELETE FROM members")
    conn.execute("DELETE FROM problems WHERE kind = 'roster-refused'")
    conn.executemany(
        "INSERT INTO members VALUES (?,?,?,?,?,?,?,?,?)",
        [(m.machine, m.person, m.name, m.role, int(m.active), json.dumps(m.emails), m.ts, m.via, m.depth)
         for m in roster.members.values()],
    )
    for env, reason in roster.refused:
        body = env["body"]
        row = conn.execute("SELECT commit_id FROM entries WHERE author=? AND log=? AND seq=?",
                           (body["author"], body["log"], body["seq"])).fetchone()
        record_problem(conn, report, "roster-refused", f"{body['author'][:12]}/roster", row[0] if row else "",
                        body["author"], "roster", body["seq"], reason)
    return roster


