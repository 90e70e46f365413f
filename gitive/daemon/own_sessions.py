"""The sessions of this machine that a lesson may name as where it was learned.

A lesson never claims another machine's or another person's session: the label is checked against the
sessions this machine's hooks registered and the ones its presence publishes, before anything is written.
"""

from __future__ import annotations

from gitive.daemon import db as daemon_db
from gitive.daemon.service import team_view
from gitive.errors import InvalidRecord
from gitive.team.hive import Hive


def session_label(hive: Hive, label: str) -> str:
    """``label`` as ``person/session`` when it names one of this machine's own sessions (as hooks registered
    them); a lesson never claims another machine's or another person's session.

    Raises:
        InvalidRecord: it names someone else's session, or none this machine has seen.
    """
    view = team_view(hive.project.workdir or hive.project.path)
    person, sep, name = label.partition("/")
    if not sep:
        person, name = view.person, label
    if person != view.person:
        raise InvalidRecord(f"session {label!r} is not yours: this machine proposes as {view.person}/…")
    with daemon_db.connect() as db:
        known = {row[0] for row in db.execute("SELECT name FROM sessions")}
    known |= {str(r["name"]) for r in view.directory if r.get("machine") == hive.me}
    if name not in known:
        listed = ", ".join(f"{view.person}/{n}" for n in sorted(known)[:8]) or "none yet (sessions appear once " \
            "a harness with gitive hooks runs here)"
        raise InvalidRecord(f"session {label!r} is not a session of this machine; its sessions: {listed}")
    return f"{person}/{name}"
