"""The anchor member: an admin's anchor invite, and the rules that keep an anchor from deciding anything.

An anchor is a machine of the reserved person ``anchor`` with role ``anchor``. It joins with an invite an admin
made with ``gitive invite --anchor``; readers admit a machine as the anchor only through such an invite, and
never take the name ``anchor`` for a person's machine. Nothing an anchor signs changes the roster (beyond its own
departure), verifies a lesson or counts as a decision (``gitive/team/roster.py``, the index's review and
obligation projections).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.constants import INVITE_DEFAULT_TTL_MS
from gitive.core.clock import now_ms
from gitive.core.keys import machine_id
from gitive.core.records import TEAM_SCOPE
from gitive.errors import GitiveError
from gitive.store import logs
from gitive.team import invites
from gitive.team.hive import Hive

ANCHOR_PERSON = "anchor"
ANCHOR_ROLE = "anchor"


def is_admin(conn: sqlite3.Connection, machine: str, founder: str) -> bool:
    """Whether ``machine`` belongs to an admin. Until roles carry ``admin``, the founder's person is the admin
    (docs/verification.md §3: a team founded before roles existed)."""
    rows = dict(conn.execute("SELECT machine, person FROM members WHERE active = 1 AND role != 'anchor'").fetchall())
    return machine in rows and rows.get(machine) == _founder_person(conn, founder)


def _founder_person(conn: sqlite3.Connection, founder: str) -> str | None:
    row = conn.execute("SELECT person FROM members WHERE machine = ?", (founder,)).fetchone()
    return row[0] if row else None


def invite_anchor(hive: Hive, conn: sqlite3.Connection, ttl_ms: int = INVITE_DEFAULT_TTL_MS) -> tuple[str, dict[str, Any]]:
    """Write a one-time invite that admits one anchor machine; return the code and the record.

    Raises:
        GitiveError: this machine is not an admin's.
    """
    if not is_admin(conn, hive.me, hive.founder):
        raise GitiveError("only an admin invites an anchor; ask the team's founder to run `gitive invite --anchor`")
    secret = invites.new_secret()
    code = invites.InviteCode(hive.team_id, hive.founder, secret)
    record: dict[str, Any] = {"type": "invite", "id": code.invite_id, "key": machine_id(code.key()),
                              "reusable": False, "expires": now_ms() + ttl_ms, "person": ANCHOR_PERSON,
                              "role": ANCHOR_ROLE}
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE, record)
    return code.encode(), record


def invite_role(conn: sqlite3.Connection, invite_id: str) -> str | None:
    """The role the fetched roster's invite ``invite_id`` admits (None: an ordinary invite, or unknown)."""
    from gitive.index import queries

    for entry in queries.verified_entries(conn, log="roster", kind="invite", limit=1 << 30):
        if entry["record"]["id"] == invite_id:
            return entry["record"].get("role")
    return None


def check_person_name(person: str, role: str | None) -> None:
    """The reserved name goes only with the anchor role, and the anchor role only with it.

    Raises:
        GitiveError: a person tried to take the name ``anchor``, or an anchor invite another name.
    """
    if role == ANCHOR_ROLE and person != ANCHOR_PERSON:
        raise GitiveError(f"this is an anchor invite: it admits the person {ANCHOR_PERSON!r} only "
                          f"(run `gitive join CODE --person {ANCHOR_PERSON}`)")
    if role != ANCHOR_ROLE and person == ANCHOR_PERSON:
        raise GitiveError(f"the person name {ANCHOR_PERSON!r} is reserved for the team's anchor machine; "
                          "choose another name")
