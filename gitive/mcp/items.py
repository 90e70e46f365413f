"""``propose_item``: a session proposes something for a person's attention; only the anchor's gate decides.

The proposal is an ``item`` record in this machine's team log (source ``session``). Nothing here says how
urgent it is: the gate computes urgency from the records the item cites (an obligation's deadline, a session
waiting), never from its wording, so an item that says URGENT pages nobody. Its owner comes from the graph
(the obligation it cites, the code owner of its files) and, when nothing it cites names one, from ``to`` or
the calling agent's own person.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitive.capture.framing import defang
from gitive.mcp import shape
from gitive.mcp.memory import opened


def propose_item(repo: Path | str | None, *, title: str, about: list[str] | None = None,
                 files: list[str] | None = None, to: str | None = None, session: str | None = None
                 ) -> dict[str, Any]:
    """Write the proposal; its id, owner and fingerprint.

    Raises:
        GitiveError: an empty title, a bad ``about`` reference, an unknown ``to``, or this machine is not a
            member; nothing was written.
    """
    from gitive.anchor.gate import items
    from gitive.core.clock import now_ms
    from gitive.core.records import TEAM_SCOPE
    from gitive.errors import GitiveError
    from gitive.store import logs

    if not title or not title.strip():
        raise GitiveError("an item needs a title (at most 140 characters): what your person should know")
    cited = items.parse_about(list(about or []))
    clean = shape.clean_files(files)[: items.MAX_FILES]
    with opened(repo) as (hive, conn, _):
        person, role = items.person_of(conn, hive.me)
        if person is None or role == "anchor":
            raise GitiveError("this machine is not a member that can propose items")
        people = items.active_people(conn)
        target = (to or "").strip().split("/", 1)[0] or None
        if target is not None and target not in people:
            raise GitiveError(f"to {to!r} names no active person of the team (list_team shows them)")
        owner, reason = items.owner_of(conn, hive.project, clean, cited, target or person)
        owner = owner if owner in people else person
        name = shape.cut(session, shape.MAX_NAME).split("/", 1)[-1] if session else None
        c = items.proposal(hive.me, person, name, title, cited, clean, owner, now_ms())
        logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, c.record())
    _share(repo)
    return {"id": c.id[:16], "owner": owner, "owner_reason": reason, "fingerprint": c.fingerprint[:16],
            "title": defang(c.title),
            "note": "proposed; the team's anchor decides whether and when it reaches its owner (urgency comes "
                    "from the records it cites, never from its wording)"}


def _share(repo: Path | str | None) -> None:
    from gitive.mcp.obligations import _share as share

    share(repo)
