"""The anchor member: an admin's anchor invite, and the rules that keep an anchor from deciding anything.

An anchor is a machine of the reserved person ``anchor`` with role ``anchor``. It joins with an invite an admin
made with ``gitive invite --anchor``; readers admit a machine as the anchor only through such an invite, and
never take the name ``anchor`` for a person's machine. Nothing an anchor signs changes the roster (beyond its own
departure), verifies a lesson or counts as a decision (``gitive/team/roster.py``, the index's review and
obligation projections).
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.constants import INVITE_DEFAULT_TTL_MS
from gitive.core.clock import now_ms
from gitive.core.keys import machine_id
from gitive.core.records import TEAM_SCOPE
from gitive.errors import GitiveError
from gitive.store import logs
from gitive.team import invites
from gitive.team.hive import Hive

if TYPE_CHECKING:
    from gitive.core.personkey import Signer

ANCHOR_PERSON = "anchor"
ANCHOR_ROLE = "anchor"


def is_admin(conn: sqlite3.Connection, machine: str, founder: str = "") -> bool:
    """Whether ``machine`` is an active, non-anchor machine of a current admin (the roster's ``admins``; in a
    team founded before roles, the founder's person: docs/verification.md §3)."""
    return conn.execute("SELECT 1 FROM members m JOIN admins a ON a.person = m.person AND a.current = 1 "
                        "WHERE m.machine = ? AND m.active = 1 AND m.role != 'anchor'", (machine,)).fetchone() \
        is not None


def invite_anchor(hive: Hive, conn: sqlite3.Connection, ttl_ms: int = INVITE_DEFAULT_TTL_MS,
                  signer: Signer | None = None, *, dry_run: bool = False) -> tuple[str, dict[str, Any]]:
    """Write a one-time invite, gestured by ``signer`` (an admin's person key), that admits one anchor machine;
    return the code and the record. ``dry_run`` checks everything but the key and writes nothing.

    Raises:
        GitiveError: this machine is not an admin's, or the decision would not count.
    """
    from gitive.index import deciding

    deciding.decider(conn, hive.me, signer, key_known=not dry_run)
    if not is_admin(conn, hive.me):
        admins = " or ".join(deciding.admins(conn)) or "an admin"
        raise GitiveError(f"only an admin invites an anchor; ask {admins} to run `gitive invite --anchor`")
    if dry_run:
        return "", {}
    secret = invites.new_secret()
    code = invites.InviteCode(hive.team_id, hive.founder, secret)
    record: dict[str, Any] = {"type": "invite", "id": code.invite_id, "key": machine_id(code.key()),
                              "reusable": False, "expires": now_ms() + ttl_ms, "person": ANCHOR_PERSON,
                              "role": ANCHOR_ROLE}
    record = deciding.signed(hive.team_id, hive.me, record, signer)
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
