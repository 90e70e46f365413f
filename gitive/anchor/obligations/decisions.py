"""Person decisions about obligations: recording one for someone else, and marking done, cancelling or renewing
one someone else owns.

A record made at a terminal carries ``actor: "person"``; readers let it act for someone else only when it also
carries the person's *gesture* (a signature by a key registered for that person, docs/verification.md §3), which
an agent with a shell cannot make: it has the machine key, not the passphrase (``gitive/index/obligations.py``).
A person's own obligations need no gesture (their agents may record and change them too), so the passphrase is
asked only for a decision that needs it. This is the one place that adds the gesture.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from gitive.team.hive import Hive

if TYPE_CHECKING:
    from gitive.core.personkey import Signer

Unlock = Callable[[], "Signer | None"]  # asks for the person key (None where the home has none)


def needs_gesture(actor: str, me_person: str, owner: str) -> bool:
    """Whether a record by ``me_person`` about ``owner``'s obligation counts only as a person's decision."""
    return actor == "person" and owner != me_person


def person_decision(hive: Hive, conn: sqlite3.Connection, record: dict[str, Any], unlock: Unlock | None
                    ) -> dict[str, Any]:
    """``record`` signed with this person's gesture, once sure it will count; ``unlock`` is called only here,
    after every other check passed.

    Raises:
        NotAllowed: an anchor machine, no person key where the team needs one, or not the registered one.
    """
    from gitive.index import deciding

    deciding.decider(conn, hive.me, None, key_known=False)
    signer = unlock() if unlock is not None else None
    deciding.decider(conn, hive.me, signer)
    return deciding.signed(hive.team_id, hive.me, record, signer, conn)
