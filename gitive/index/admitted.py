"""Admission of lessons rows at scale: the rule of ``admitted_entries``, checked only where it can say no.

``visible_lessons`` joins every lesson to ``admitted_entries``, a view that runs five correlated lookups per
row: over 10,000 lessons that is most of a page's time. Those lookups can refuse an entry only when its
author is not on the roster, or has a quarantined log, a membership gap or a time gap; every entry of any
other member is admitted. :func:`where` says exactly that: members without any of those pass at once, and
the rest take the view's own check, row by row.

The shortcut is written against one definition of ``admitted_entries``. If the index holds another (a later
migration changed the rule), :func:`where` falls back to the view itself, and ``tests/ui`` fails until the
shortcut is brought up to date, so the two can never silently disagree.

A lessons row always has its entry (ingest writes both in one transaction; neither is ever deleted but by a
rebuild, which replaces the file), so the shortcut does not look the entry up again.
"""

from __future__ import annotations

import hashlib
import sqlite3

# blake2b-128 of the whitespace-normalised CREATE VIEW statement this shortcut is written for (0009-authority).
KNOWN_VIEW = "593f877647888b07c130626eea640e27"

_CLEAN = ("(SELECT machine FROM members EXCEPT SELECT author FROM logs WHERE quarantined_from IS NOT NULL "
          "EXCEPT SELECT machine FROM member_gaps EXCEPT SELECT machine FROM member_time_gaps)")


def view_digest(conn: sqlite3.Connection) -> str | None:
    """The digest of this index's ``admitted_entries`` definition (None: the index has no such view)."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'view' AND name = 'admitted_entries'").fetchone()
    if row is None:
        return None
    return hashlib.blake2b(" ".join(row[0].split()).encode(), digest_size=16).hexdigest()


def exact(alias: str = "l") -> str:
    """The view's own check for the row ``alias`` of a table keyed by ``(author, log, seq)``."""
    return (f"EXISTS (SELECT 1 FROM admitted_entries a WHERE a.author = {alias}.author AND a.log = {alias}.log "
            f"AND a.seq = {alias}.seq)")


def wholesale(conn: sqlite3.Connection) -> bool:
    """Whether every entry in the index is admitted without looking (every author is a clean member): then a
    lessons row needs no check at all. One walk of the entries' author index."""
    return view_digest(conn) == KNOWN_VIEW and not conn.execute(
        f"SELECT EXISTS (SELECT 1 FROM (SELECT DISTINCT author FROM entries) WHERE author NOT IN {_CLEAN})"
    ).fetchone()[0]


# The same members as ``_CLEAN``, found from the roster's own rows (aliased m) by indexed lookups per member
# rather than by set differences over whole tables: for a statement about a few rows (a search's candidates).
_CLEAN_BY_MEMBER = (
    "(SELECT m.machine FROM members m WHERE NOT EXISTS (SELECT 1 FROM logs q WHERE q.author = m.machine AND "
    "q.quarantined_from IS NOT NULL) AND NOT EXISTS (SELECT 1 FROM member_gaps g WHERE g.machine = m.machine) "
    "AND NOT EXISTS (SELECT 1 FROM member_time_gaps t WHERE t.machine = m.machine))")


def where(conn: sqlite3.Connection, alias: str = "l", *, few: bool = False) -> str:
    """SQL true exactly when ``admitted_entries`` admits the entry of row ``alias`` (a ``lessons`` row).

    ``few``: the statement reads a few rows by key (a search's candidates), so whether every author is clean
    is not worth a walk of the entries first (``wholesale``); a clean author's rows pass at once all the same.
    """
    if view_digest(conn) != KNOWN_VIEW:
        return exact(alias)
    if few:
        return f"({alias}.author IN {_CLEAN_BY_MEMBER} OR {exact(alias)})"
    if wholesale(conn):
        return "1"
    return f"({alias}.author IN {_CLEAN} OR {exact(alias)})"
