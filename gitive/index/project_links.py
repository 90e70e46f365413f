"""Projects that move: an admin's signed ``project-link`` says a new project id is also an old one.

A project id is blake3 of the remote URL (gitive/team/projects.py), so a moved or renamed repository gets a new
id and every lesson, grant, obligation and sealed scope keyed by the old one stops applying. A ``project-link``
record (format v1, ``refs_schema/project-link.schema.json``) from ``from`` (the old id) to ``to`` (the id of the
new remote) makes a repository whose remote id is ``to`` read as project ``from``: everything keyed by the old
id follows, and nothing keyed by ``to`` gains any authority (so a self-claim on the new id squats nothing).

A link counts only when all of these hold, all computed from stored entries (the index holds no table of its
own, so the incremental index equals a rebuild by construction):

- its gesture is by a key registered for its author's person, not written by an anchor machine;
- that person was an admin when they signed it (by the signed time, so a demotion ends the power);
- it is not dated ahead beyond the skew; its time is the one signed under the gesture, so an agent holding
  only the machine key can neither re-date it nor make a copy count twice. Copies are told apart here, not by
  index.decisions' first-appearance rule: only copies whose gesture verifies for their own author are read, so
  a copy lifted into another machine's log (which does not verify) cannot displace the real one;
- ``to`` is not already linked (the first counted link by signed time wins), ``to`` is not itself the old
  name of a counted link (re-rooting another project's history), and following ``from`` back never reaches
  ``to`` (no cycle). So the links form a forest, and each id resolves to exactly one root.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.core import decisions
from gitive.core.clock import now_ms
from gitive.core.ids import is_hex64
from gitive.errors import GitiveError, NotAllowed

if TYPE_CHECKING:
    from gitive.core.personkey import Signer
    from gitive.team.hive import Hive

KIND = "project-link"
VERSION = 1
MAX_CHAIN = 64  # a forest by construction; the bound only guards a corrupted index


def all_links(conn: sqlite3.Connection, team_id: str, now: int | None = None) -> list[dict[str, Any]]:
    """Every ``project-link`` record the index admits, in signed-time order, with ``counted`` and ``problem``."""
    from gitive.index.projects import granters

    now = now_ms() if now is None else now
    admins = granters(conn)
    parent: dict[str, str] = {}
    out = []
    for link in _candidates(conn, team_id):
        problem = link.pop("_problem") or _admin_problem(link, admins) or _graph_problem(link, parent)
        if problem is None and link["decided_at"] > now + decisions.SKEW_MS:
            problem = "it is dated ahead: it counts from its signed time"
        if problem is None:
            parent[link["to"]] = link["from"]
        out.append({**link, "counted": problem is None, "problem": problem})
    return out


def _candidates(conn: sqlite3.Connection, team_id: str) -> list[dict[str, Any]]:
    """The admitted link records with their problems, replays marked, ordered by signed time (a fixed tie)."""
    from gitive.index.deciding import counts_as_decision
    from gitive.index.queries import VERIFIED

    sql = VERIFIED.replace("SELECT e.author,", "SELECT m.role, e.author,", 1) + " AND e.kind = ?"
    found = []
    for row in conn.execute(sql, (KIND,)):
        role, author, log, seq, at, envelope, person = row[0], row[1], row[2], row[3], row[6], row[7], row[8]
        record = json.loads(envelope)["body"]["record"]
        stamp = decisions.stamp_of(record)
        problem = None
        if record.get("v") != VERSION:
            problem = f"format v{str(record.get('v'))[:12]} is not understood here (v{VERSION})"
        elif role == "anchor" or not counts_as_decision(conn, author, log, seq, person, record, team_id):
            problem = "it carries no valid gesture of a person's key"
        elif stamp is None:
            problem = "it carries no signed time"
        elif record.get("from") == record.get("to"):
            problem = "it links a project to itself"
        found.append({"from": record.get("from"), "to": record.get("to"), "label": record.get("label", ""),
                      "was": record.get("was", ""), "person": person, "author": author, "log": log, "seq": seq,
                      "at": at, "decided_at": stamp.at if stamp else at,
                      "gesture": decisions.gesture_id(record) or "", "_problem": problem})
    found.sort(key=lambda r: (r["_problem"] is not None, r["decided_at"], r["gesture"], r["at"], r["log"],
                              r["author"], r["seq"]))
    seen: set[str] = set()
    for r in found:  # a valid gesture binds its author machine: every valid copy is the same link, replayed
        if r["_problem"] is None and r["gesture"] in seen:
            r["_problem"] = "a copy of a link already read (a replay): it changes nothing"
        seen.add(r["gesture"])
    found.sort(key=lambda r: (r["decided_at"], r["gesture"], r["at"], r["log"], r["author"], r["seq"]))
    return found


def _admin_problem(link: dict[str, Any], admins: dict[str, int | None]) -> str | None:
    until = admins.get(link["person"], 0)
    if link["person"] not in admins or (until is not None and link["decided_at"] >= until):
        return f"{link['person']} was not an admin when they signed it"
    return None


def _graph_problem(link: dict[str, Any], parent: dict[str, str]) -> str | None:
    if link["to"] in parent:
        return f"{link['to'][:12]} is linked already (the first link counts)"
    if link["to"] in parent.values():
        return f"{link['to'][:12]} is the old name of a moved project: link that project's newest id"
    if root(parent, link["from"]) == link["to"]:
        return "it would close a cycle"
    return None


def root(parent: dict[str, str], pid: str) -> str:
    """The oldest id ``pid`` is known as: follow links back from new to old."""
    seen = 0
    while pid in parent and seen < MAX_CHAIN:
        pid, seen = parent[pid], seen + 1
    return pid


def parents(conn: sqlite3.Connection, team_id: str, now: int | None = None) -> dict[str, str]:
    """new id -> old id, of every counted link."""
    return {r["to"]: r["from"] for r in all_links(conn, team_id, now) if r["counted"]}


def resolve(conn: sqlite3.Connection, team_id: str, remote_id: str, now: int | None = None) -> str:
    """The project id a repository whose remote has id ``remote_id`` reads as (itself when nothing links it)."""
    if conn.execute("SELECT 1 FROM entries WHERE kind = ? LIMIT 1", (KIND,)).fetchone() is None:
        return remote_id  # the hot path: most teams never move a project
    return root(parents(conn, team_id, now), remote_id)


def names(conn: sqlite3.Connection, team_id: str, project: str) -> list[dict[str, Any]]:
    """The counted links that lead to ``project`` (the ids it is also known as), oldest first."""
    links = [r for r in all_links(conn, team_id) if r["counted"]]
    parent = {r["to"]: r["from"] for r in links}
    return [r for r in links if root(parent, r["to"]) == project]


def moved_from(hive: Hive) -> tuple[str, str] | None:
    """(old id, its label) when this repository's remote changed and no link joins the old id to it yet."""
    try:
        text = (hive.common_dir / "gitive" / "project-moved").read_text().strip()
    except OSError:
        return None
    old, _, label = text.partition(" ")
    return (old, label) if is_hex64(old) and old != hive.project_id else None


def check_id(pid: str) -> None:
    """Refuse anything but a project id before a person is asked for a passphrase.

    Raises:
        GitiveError: ``pid`` is not a project id.
    """
    if not is_hex64(pid):
        raise GitiveError(f"{pid[:80]!r} is not a project id (64 hex characters; `gitive project --json` shows it)")


def link(hive: Hive, conn: sqlite3.Connection, old: str, signer: Signer | None, now: int) -> dict[str, Any]:
    """Sign and append a link from project ``old`` to this repository's remote id, as this machine's person.

    Checks everything readers check first, so nothing is written that would not count.

    Raises:
        NotAllowed: an anchor machine, no registered person key, or not an admin.
        GitiveError: a bad id, or a link readers would refuse (linked already, a cycle, the same project).
    """
    from gitive.core.records import TEAM_SCOPE
    from gitive.index import deciding
    from gitive.index.catchup import catch_up
    from gitive.store import logs
    from gitive.team.projects import project_id, project_label

    check_id(old)
    catch_up(hive, conn)
    person = deciding.decider(conn, hive.me, signer)
    if signer is None or not deciding.is_admin(conn, person):
        raise NotAllowed(f"{person} is not an admin: only an admin of the team links a moved project")
    new = project_id(hive.project)
    record = {"type": KIND, "v": VERSION, "from": old, "to": new, "label": project_label(hive.project)[:200],
              "was": _label_of(hive, old)[:200], "created": now}
    problem = _write_problem(conn, hive.team_id, record, now)
    if problem:
        raise GitiveError(f"this link would not count: {problem}")
    done = deciding.signed(hive.team_id, hive.me, record, signer, conn)
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE, done, at=now)
    catch_up(hive, conn)
    return done


def _write_problem(conn: sqlite3.Connection, team_id: str, record: dict[str, Any], now: int) -> str | None:
    parent = parents(conn, team_id, now)
    if root(parent, record["to"]) == root(parent, record["from"]):
        return f"this repository reads as project {record['from'][:12]} already"
    return _graph_problem(record, parent)


def _label_of(hive: Hive, pid: str) -> str:
    moved = moved_from(hive)
    return moved[1] if moved is not None and moved[0] == pid else ""
