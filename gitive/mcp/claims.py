"""Advisory file claims for MCP clients: ``claim_files`` says which files the calling session is changing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitive.daemon import claims, presence
from gitive.daemon import db as daemon_db
from gitive.mcp.mail import _context, caller


def claim_files(repo: Path | str | None, *, paths: list[str], minutes: int = claims.DEFAULT_MINUTES,
                note: str | None = None, session: str | None = None) -> dict[str, Any]:
    """Claim ``paths`` for the calling session (0 minutes releases them); say who else claimed any of them."""
    from gitive.capture import daemon_client

    with daemon_db.connect() as db:
        me = caller(repo, session, db)
        hive, person, name = me.hive, me.person, me.name
        root = str(hive.project.workdir or "")
        clean = [claims.clean_path(p, root) for p in paths]
        held = claims.claim(db, name, clean, int(minutes), note)
    mine = next((s for s in me.sessions if s["name"] == name), {})
    # Other sessions' claims: this machine's own (as collected, with the claims they hold now) and peers'
    if me.members:
        rows = [s | {"address": f"{person}/{s['name']}", "live": True} for s in me.sessions] \
            + presence.directory(hive, None, me.members)
    else:  # no index yet: the caller came from the full team view, which has the peers' rows too
        rows = _context(repo)[1]
    others = claims.conflicts(rows, clean, f"{person}/{name}", mine.get("project"))
    daemon_client.notify({"op": "publish"})  # teammates see the claim at their next sync, not in 15 s
    return {"session": f"{person}/{name}", "claims": held, "claimed_by_others": others,
            "note": "advisory: nothing stops an edit; teammates' sessions that change these files are told who "
                    "claimed them" + ("; some are claimed by others: coordinate with send_message" if others
                                      else "")}
