"""The anchors' ledgers as any machine reads them: verified decisions signed by anchor machines, and the items
they are about.

Readers count a ledger entry only when an *anchor* machine signed it; a member's machine that writes one changes
nothing anyone sees. The anchor's own gate (``gitive.anchor.gate.ledger``) writes these entries and mirrors them;
``gitive why``, ``gitive inbox``, the digest, the daemon's delivery and the dashboard read them here.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.core import item_ids
from gitive.errors import GitiveError
from gitive.index.queries import VERIFIED

_BY_ANCHOR = VERIFIED + " AND m.role = 'anchor'"


def anchors(index: sqlite3.Connection) -> list[str]:
    return [r[0] for r in index.execute("SELECT machine FROM members WHERE role = 'anchor' ORDER BY machine")]


def until_of(index: sqlite3.Connection, anchor: str, item: str) -> int | None:
    """The ``until`` of the newest decision ``anchor`` signed about ``item`` (a hold's end), from git."""
    for d in decisions(index, item=item):
        if d["anchor"] == anchor:
            return d.get("until")
    return None


def decisions(index: sqlite3.Connection, *, item: str | None = None, person: str | None = None,
              since: int | None = None, limit: int = 10_000) -> list[dict[str, Any]]:
    """Verified decisions signed by anchors, newest first: the ledger record (``type`` ledger, ``person`` included,
    whatever the entry's format), with ``anchor``, ``seq``, ``n`` (its place in a format 2 entry; 0 in format
    1) and ``at``.

    ``item`` may be a prefix of at least 6 hex characters.
    """
    found = _single(index, item, person, since, limit) + _batched(index, item, person, since, limit)
    found.sort(key=lambda d: (d["at"], d["seq"], d["n"]), reverse=True)
    return found[:limit]


def _single(index: sqlite3.Connection, item: str | None, person: str | None, since: int | None, limit: int
            ) -> list[dict[str, Any]]:
    """Format 1: one ``ledger`` entry per decision."""
    sql = _BY_ANCHOR + " AND e.log = 'ledger' AND e.kind = 'ledger'"
    args: list[Any] = []
    if item is not None:
        sql += " AND json_extract(e.envelope, '$.body.record.item') LIKE ?"
        args.append(item.lower() + "%")
    if person is not None:
        sql += " AND json_extract(e.envelope, '$.body.record.person') = ?"
        args.append(person)
    if since is not None:
        sql += " AND e.at >= ?"
        args.append(since)
    sql += " ORDER BY e.at DESC, e.seq DESC LIMIT ?"
    out = []
    for author, _, seq, _, _, at, envelope, _, _ in index.execute(sql, [*args, limit]):
        out.append(json.loads(envelope)["body"]["record"] | {"anchor": author, "seq": seq, "n": 0, "at": at})
    return out


def _batched(index: sqlite3.Connection, item: str | None, person: str | None, since: int | None, limit: int
             ) -> list[dict[str, Any]]:
    """Format 2: one ``ledger-batch`` entry per tick, each decision a row of its ``decisions``."""
    inner = _BY_ANCHOR + " AND e.log = 'ledger' AND e.kind = 'ledger-batch'"
    args: list[Any] = []
    if since is not None:
        inner += " AND e.at >= ?"
        args.append(since)
    sql = (f"SELECT b.author, b.seq, b.at, d.key, d.value FROM ({inner}) b "
           "JOIN json_each(b.envelope, '$.body.record.decisions') d WHERE 1 = 1")
    for field, value in (("item", item), ("person", person)):
        if value is not None:
            sql += f" AND json_extract(d.value, '$.{field}') " + ("LIKE ?" if field == "item" else "= ?")
            args.append(value.lower() + "%" if field == "item" else value)
    sql += " ORDER BY b.at DESC, b.seq DESC, d.key DESC LIMIT ?"
    out = []
    for author, seq, at, n, value in index.execute(sql, [*args, limit]):
        decision = json.loads(value)
        if isinstance(decision, dict) and isinstance(decision.get("person"), str):
            out.append(decision | {"type": "ledger", "anchor": author, "seq": seq, "n": n, "at": at})
    return out


def item_records(index: sqlite3.Connection, ids: list[str] | None = None, *, prefix: str | None = None,
                 key: Any = None) -> dict[str, dict[str, Any]]:
    """item id -> its verified ``item`` record (with ``author``): an anchor's own, or a member's proposal.

    A record counts under the id derived from its content (:func:`gitive.core.item_ids.derived_id`), and only
    when that is the id it names: a member's record claiming another id (the anchor's next firing's, issue 23)
    is nobody's item. An anchor's format 2 item gets its ``title`` when it was sealed to this machine (``key``,
    default the machine key of ``GITIVE_HOME``), and none otherwise.
    """
    sql = VERIFIED.replace("SELECT e.author,", "SELECT m.role, e.author,", 1) + " AND e.kind = 'item'"
    args: list[Any] = []
    if prefix is not None:
        sql += " AND json_extract(e.envelope, '$.body.record.id') LIKE ?"
        args.append(prefix.lower() + "%")
    elif ids is not None:
        if not ids:
            return {}
        sql += f" AND json_extract(e.envelope, '$.body.record.id') IN ({','.join('?' * len(ids))})"
        args += ids
    out: dict[str, dict[str, Any]] = {}
    opener: list[Any] = [key]  # loaded at the first sealed title
    for row in index.execute(sql, args):
        role, author, envelope = row[0], row[1], row[7]
        record = json.loads(envelope)["body"]["record"]
        ident = item_ids.derived_id(record, author, role == "anchor")
        if ident is None or ident != record.get("id") or ident in out:
            continue  # only an anchor makes items of other sources (see gating._proposal); first one counts
        if record.get("v") is not None:
            if opener[0] is None:
                opener[0] = _machine_key()
            title = item_ids.open_title(record, author, opener[0]) if opener[0] is not None else None
            record = record | ({"title": title} if title is not None else {})
        out[ident] = record | {"author": author, "author_role": role}
    return out


def title_or_why(record: dict[str, Any] | None) -> tuple[str | None, str]:
    """An item record's title as :func:`item_records` opened it, or None with why this machine cannot show one:
    the one wording ``gitive why``, the daemon and the dashboard give."""
    if not record:
        return None, "its record has not reached this machine yet"
    if record.get("title"):
        return str(record["title"]), ""
    if record.get("sealed"):
        return None, "its title is sealed to the machines of the person it is for"
    return None, "it has no title"


def _machine_key() -> Any:
    """This machine's key, to open the titles sealed to it (None where there is none: a bare reader)."""
    from gitive.core.keys import load_key

    try:
        return load_key()
    except GitiveError:  # no machine key here: titles stay sealed
        return None
