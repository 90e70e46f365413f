"""The anchor's own state on its machine: a cursor per event source, the candidate queue, problems, its runs.

Not a projection: the cursors say which events this anchor has already evaluated. Losing the file costs a
replay (everything is evaluated again, and the firing records in git keep anything from firing twice), never
a firing. Kept in ``<team store>/gitive/anchor.sqlite`` beside the index, in the same named-step schema.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gitive.index import db

STEPS: list[tuple[str, str]] = [
    ("0001-anchor", """
        CREATE TABLE cursors(source TEXT PRIMARY KEY, value TEXT NOT NULL, at INTEGER NOT NULL);
        CREATE TABLE queue(id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, kind TEXT NOT NULL,
                           obligation TEXT NOT NULL, owner TEXT NOT NULL, to_ TEXT, action TEXT NOT NULL,
                           due INTEGER NOT NULL, fired INTEGER NOT NULL, late INTEGER NOT NULL,
                           event TEXT NOT NULL, state TEXT NOT NULL DEFAULT 'queued', at INTEGER NOT NULL);
        CREATE INDEX queue_state ON queue(state, fired);
        CREATE TABLE problems(source TEXT PRIMARY KEY, detail TEXT NOT NULL, first_seen INTEGER NOT NULL,
                              last_seen INTEGER NOT NULL, count INTEGER NOT NULL);
        CREATE TABLE runs(started INTEGER PRIMARY KEY, pid INTEGER NOT NULL, last_tick INTEGER,
                          ticks INTEGER NOT NULL DEFAULT 0, last_report TEXT)
    """),
    # The gate (gitive/anchor/gate.py): candidates and their state, a mirror of every anchor's ledger
    # decisions (rebuilt from git when lost), and what each tick checked (for the digest's counts).
    ("0002-gate", """
        CREATE TABLE gate_items(id TEXT PRIMARY KEY, person TEXT, data TEXT NOT NULL, offered INTEGER NOT NULL,
                                state TEXT NOT NULL, until INTEGER, written INTEGER NOT NULL DEFAULT 0);
        CREATE INDEX gate_items_state ON gate_items(state, until);
        CREATE TABLE gate_decisions(anchor TEXT NOT NULL, seq INTEGER NOT NULL, item TEXT NOT NULL,
                                    person TEXT NOT NULL, fingerprint TEXT NOT NULL, branch TEXT NOT NULL,
                                    source TEXT NOT NULL, at INTEGER NOT NULL, day TEXT NOT NULL,
                                    PRIMARY KEY(anchor, seq));
        CREATE INDEX gate_decisions_fp ON gate_decisions(person, fingerprint, at);
        CREATE INDEX gate_decisions_item ON gate_decisions(item, anchor);
        CREATE INDEX gate_decisions_day ON gate_decisions(person, day, branch, source);
        CREATE TABLE gate_checked(at INTEGER PRIMARY KEY, events INTEGER NOT NULL, evaluations INTEGER NOT NULL,
                                  obligations INTEGER NOT NULL, watchers INTEGER NOT NULL)
    """),
    # Ledger format 2 (docs/gate.md): one entry holds a tick's decisions for one person, so a decision is
    # (anchor, seq, n), its place in the entry; format 1 decisions are n = 0.
    ("0003-gate-ledger-batch", """
        CREATE TABLE gate_decisions_2(anchor TEXT NOT NULL, seq INTEGER NOT NULL, item TEXT NOT NULL,
                                      person TEXT NOT NULL, fingerprint TEXT NOT NULL, branch TEXT NOT NULL,
                                      source TEXT NOT NULL, at INTEGER NOT NULL, day TEXT NOT NULL,
                                      n INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(anchor, seq, n));
        INSERT INTO gate_decisions_2 SELECT anchor, seq, item, person, fingerprint, branch, source, at, day, 0
                                     FROM gate_decisions;
        DROP TABLE gate_decisions;
        ALTER TABLE gate_decisions_2 RENAME TO gate_decisions;
        CREATE INDEX gate_decisions_fp ON gate_decisions(person, fingerprint, at);
        CREATE INDEX gate_decisions_item ON gate_decisions(item, anchor);
        CREATE INDEX gate_decisions_day ON gate_decisions(person, day, branch, source)
    """),
    # What a tick asks of the mirror in a few statements (ledger.prior_decisions, ledger.attention_on): by
    # fingerprint for every person, and a day's attention for every person, without a scan of the whole mirror.
    # They replace the two indexes led by person, which no read used (prior_decisions) or which every decision
    # paid for while only attention is counted (a partial index holds attention rows alone).
    ("0004-gate-tick-reads", """
        DROP INDEX gate_decisions_fp;
        DROP INDEX gate_decisions_day;
        CREATE INDEX gate_decisions_fingerprint ON gate_decisions(fingerprint, at);
        CREATE INDEX gate_decisions_attention ON gate_decisions(day, person, source, item)
            WHERE branch = 'attention'
    """),
    # Each person's last digest note (digest.due, every tick, for every person): without it, a scan of the whole
    # mirror per person per tick, which grows with every decision ever mirrored.
    ("0005-gate-last-note", """
        CREATE INDEX gate_decisions_note ON gate_decisions(person, at) WHERE branch = 'note'
    """),
]


def path_for(store_path: str | Path) -> Path:
    return Path(store_path) / "gitive" / "anchor.sqlite"


@contextmanager
def connect(path: Path, *, readonly: bool = False) -> Iterator[sqlite3.Connection]:
    with db.connect(path, readonly=readonly, steps=STEPS) as conn:
        yield conn


def get(conn: sqlite3.Connection, source: str) -> Any:
    row = conn.execute("SELECT value FROM cursors WHERE source = ?", (source,)).fetchone()
    return json.loads(row[0]) if row else None


def get_prefix(conn: sqlite3.Connection, prefix: str, parsed: dict[str, tuple[str, Any]] | None = None
               ) -> dict[str, Any]:
    """Every cursor under ``prefix``, by the rest of its name. ``parsed`` (source -> (stored text, value)),
    kept by the caller between calls, spares parsing a cursor whose text did not change; its values are shared
    from one call to the next, so callers read them and never change them."""
    rows = conn.execute("SELECT source, value FROM cursors WHERE source >= ? AND source < ?",
                        (prefix, prefix + "\uffff"))
    if parsed is None:
        return {source[len(prefix):]: json.loads(value) for source, value in rows}
    out = {}
    for source, text in rows:
        known = parsed.get(source)
        if known is None or known[0] != text:
            known = parsed[source] = (text, json.loads(text))
        out[source[len(prefix):]] = known[1]
    return out


PRESENCE = "presence:"


def presence(conn: sqlite3.Connection, known: dict[str, Any] | None = None,
             parsed: dict[str, tuple[str, Any]] | None = None) -> dict[str, Any]:
    """machine -> the presence the tick last saw of it; ``known`` when the caller (the tick) has it parsed
    (``parsed``: see :func:`get_prefix`)."""
    return known if known is not None else get_prefix(conn, PRESENCE, parsed)


def put(conn: sqlite3.Connection, source: str, value: Any, at: int) -> None:
    conn.execute("INSERT INTO cursors VALUES (?,?,?) ON CONFLICT(source) DO UPDATE SET value = excluded.value, "
                 "at = excluded.at", (source, json.dumps(value, sort_keys=True), at))


def problem(conn: sqlite3.Connection, source: str, detail: str | None, at: int) -> None:
    """Record (or with ``detail`` None, clear) the current problem of one source, such as a watcher."""
    if detail is None:
        conn.execute("DELETE FROM problems WHERE source = ?", (source,))
        return
    conn.execute("INSERT INTO problems VALUES (?,?,?,?,1) ON CONFLICT(source) DO UPDATE SET detail = "
                 "excluded.detail, last_seen = excluded.last_seen, count = count + 1", (source, detail, at, at))


def problems(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    keys = ("source", "detail", "first_seen", "last_seen", "count")
    return [dict(zip(keys, r, strict=True)) for r in conn.execute(
        "SELECT source, detail, first_seen, last_seen, count FROM problems ORDER BY source")]


def run_started(conn: sqlite3.Connection, started: int, pid: int) -> None:
    conn.execute("INSERT OR REPLACE INTO runs(started, pid) VALUES (?, ?)", (started, pid))


def run_ticked(conn: sqlite3.Connection, started: int, at: int, report: dict[str, Any]) -> None:
    conn.execute("UPDATE runs SET last_tick = ?, ticks = ticks + 1, last_report = ? WHERE started = ?",
                 (at, json.dumps(report, sort_keys=True), started))


def last_run(conn: sqlite3.Connection) -> dict[str, Any] | None:
    row = conn.execute("SELECT started, pid, last_tick, ticks, last_report FROM runs ORDER BY started DESC "
                       "LIMIT 1").fetchone()
    if not row:
        return None
    return {"started": row[0], "pid": row[1], "last_tick": row[2], "ticks": row[3],
            "last_report": json.loads(row[4]) if row[4] else None}
