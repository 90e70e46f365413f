"""Standing approvals: a person's approval of a kind of change, inside a perimeter code checks, for at most 30 days.

A ``standing-approval`` record (the sponsor's team log, with the gesture of their person key) covers tasks of
one ``kind`` in one repository whose draft stays inside its ``perimeter``:

- ``paths``: globs every changed path must match (``*`` within a folder, ``**`` across folders);
- ``changes``: change types every file's change must be: ``version-lines`` (each changed line carries a
  version number, as a lockfile or manifest bump does), ``additions`` (no line removed), ``text`` (no binary);
- ``max_lines``: lines added plus removed, at most;
- ``checks``: commands that must pass on the draft before it is used, and on the target after it lands.

Readers refuse an approval signed by an anchor machine, without a valid gesture by a key registered for the
sponsor (the author machine's person), with an id that does not match its content, expiring more than 30 days
after it was made, whose paths reach CI configuration, repository settings or CODEOWNERS, or whose kind is a
security kind. It never covers a change that removes a test or a check, or a task that comes from a security
finding.

It suspends by itself (a ``standing-state`` record the anchor writes) on a revert of a use, an edit request (a
review of a task of that kind with an edit), an attempt outside its perimeter, or a failed post-merge check;
``gitive standing revoke ID`` ends it (the sponsor or an admin, with a gesture). Each use is an info item to the
sponsor, so it is listed in their digest. The anchor proposes one (an item to the owner) once a kind's record
reaches the team's threshold: that many approvals as prepared, none edited and none reverted.
"""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitive.anchor.prepared import tiers
from gitive.core.ids import record_id
from gitive.index import prepared as prepared_reads

if TYPE_CHECKING:
    from gitive.store.types import Repo

MAX_DAYS = 30
DAY_MS = 86_400_000
CHANGE_TYPES = ("version-lines", "additions", "text")
REASONS = ("revert", "edit request", "out-of-perimeter attempt", "failed post-merge check")
_VERSION = re.compile(r"\d+\.\d+")
_TEST_PATHS = ("tests/**", "test/**", "**/tests/**", "**/test/**", "**/test_*.py", "**/*_test.py", "**/*_test.go",
               "**/*.spec.*", "**/*.test.*", "test_*.py", "*_test.py", "*_test.go", "*.spec.*", "*.test.*")
_CHECK_LINE = re.compile(r"^\s*(def test_|async def test_|assert\b|it\(|test\(|expect\(|describe\(|func Test)")



@dataclass(frozen=True)
class Perimeter:
    paths: tuple[str, ...]
    changes: tuple[str, ...]
    max_lines: int
    checks: tuple[str, ...]

    def record(self) -> dict[str, Any]:
        return {"paths": list(self.paths), "changes": list(self.changes), "max_lines": self.max_lines,
                "checks": list(self.checks)}


def standing_id(author: str, record: dict[str, Any]) -> str:
    return record_id("standing-approval", author, {k: v for k, v in record.items() if k not in ("id", "gesture")})


def perimeter_problem(p: dict[str, Any]) -> str | None:
    """Why a perimeter cannot be granted, or None."""
    paths, changes = p.get("paths"), p.get("changes")
    if not isinstance(paths, list) or not paths or not all(isinstance(x, str) and x for x in paths):
        return "a perimeter needs at least one path glob"
    if not isinstance(changes, list) or not all(c in CHANGE_TYPES for c in changes):
        return f"change types are {', '.join(CHANGE_TYPES)}"
    if isinstance(p.get("max_lines"), bool) or not isinstance(p.get("max_lines"), int) or p["max_lines"] < 1:
        return "max_lines must be a whole number, at least 1"
    if not isinstance(p.get("checks"), list) or not all(isinstance(c, str) and c for c in p["checks"]):
        return "checks must be commands"
    reach = [s for s in tiers.outside_samples() if tiers.matches(s, paths)]
    if reach:
        return (f"its paths reach {reach[0]}: CI, repository settings and CODEOWNERS are never covered by a "
                "standing approval")
    return None


def record_problem(record: dict[str, Any], author: str, now: int) -> str | None:
    """Why a standing approval would not count (everything but who signed it), or None."""
    if record.get("id") != standing_id(author, record):
        return "its id does not match its content"
    if str(record.get("kind", "")).startswith("security"):
        return "a standing approval never covers security findings"
    if not isinstance(record.get("expires"), int) or not isinstance(record.get("created"), int):
        return "it needs created and expires times"
    if record["expires"] - record["created"] > MAX_DAYS * DAY_MS or record["expires"] <= record["created"]:
        return f"it must expire within {MAX_DAYS} days of being made"
    if not record.get("earned_from"):
        return "it names no reviews that earned it"
    return perimeter_problem(record.get("perimeter") or {})


def _rows(index: sqlite3.Connection, kind: str) -> list[tuple[str, str, str, str, int, int, dict[str, Any]]]:
    from gitive.index.queries import VERIFIED

    sql = VERIFIED.replace("SELECT e.author,", "SELECT m.role, e.author,", 1) + " AND e.kind = ? ORDER BY e.at, e.seq"
    out = []
    for row in index.execute(sql, (kind,)):
        role, author, log, seq, _, _, at, envelope, person = row[:9]
        out.append((role, author, person, log, seq, at, json.loads(envelope)["body"]["record"]))
    return out


def _gestured(index: sqlite3.Connection, team_id: str, author: str, person: str, record: dict[str, Any]) -> bool:
    from gitive.core import gesture

    key = gesture.key_of(team_id, author, record)
    return key is not None and index.execute("SELECT 1 FROM person_keys WHERE person = ? AND key = ?",
                                             (person, key)).fetchone() is not None


def _ended(index: sqlite3.Connection, team_id: str) -> dict[str, dict[str, Any]]:
    """standing id -> the first counting suspension or revocation."""
    admins = {r[0] for r in index.execute("SELECT person FROM admins WHERE current = 1")}
    approvals = {r["id"]: (role, person) for role, _, person, _, _, _, r in _rows(index, "standing-approval")}
    out: dict[str, dict[str, Any]] = {}
    for role, author, person, _, _, at, r in _rows(index, "standing-state"):
        sid = r.get("standing")
        if sid in out or sid not in approvals:
            continue
        # A suspension only takes authority away: anyone's counts (the anchor writes them). A revocation is a
        # decision: the sponsor's or an admin's, with a gesture.
        revoked = r.get("state") == "revoked" and role != "anchor" and (
            person == approvals[sid][1] or person in admins) and _gestured(index, team_id, author, person, r)
        if r.get("state") == "suspended" or revoked:
            out[sid] = {**r, "at": at, "by": person}
    return out


def all_approvals(index: sqlite3.Connection, team_id: str, now: int) -> list[dict[str, Any]]:
    """Every standing approval readers count, with its ``status`` (active, expired, suspended, revoked) and
    ``problem`` (why it does not count, for those that do not)."""
    ended = _ended(index, team_id)
    out = []
    for role, author, person, _, _, at, r in _rows(index, "standing-approval"):
        problem = None
        if role == "anchor":
            problem = "signed by an anchor machine: only a person grants a standing approval"
        elif person != r.get("sponsor"):
            problem = "its sponsor is not the person whose machine signed it"
        elif not _gestured(index, team_id, author, person, r):
            problem = "it carries no valid gesture of its sponsor's person key"
        else:
            problem = record_problem(r, author, now)
        status = "refused" if problem else "revoked" if ended.get(r["id"], {}).get("state") == "revoked" else \
            "suspended" if r["id"] in ended else "expired" if r["expires"] <= now else "active"
        out.append({**r, "author": author, "at": at, "status": status, "problem": problem,
                    "ended": ended.get(r["id"])})
    return out


def active(index: sqlite3.Connection, team_id: str, now: int, repo: str | None = None, kind: str | None = None
           ) -> list[dict[str, Any]]:
    return [a for a in all_approvals(index, team_id, now) if a["status"] == "active"
            and (repo is None or a["repo"] == repo) and (kind is None or a["kind"] == kind)]


def removes_a_check(repo: Repo, base: str, head: str) -> str | None:
    """A test or a check the change removes (a test file deleted, a test or assertion line removed), or None."""
    from gitive.store import diffs

    stat = diffs.stat(repo, base, head)
    for path in stat.removed:
        if tiers.matches(path, _TEST_PATHS):
            return f"it deletes {path}"
    for path, (gone, _) in diffs.line_changes(repo, base, head).items():
        if tiers.matches(path, _TEST_PATHS) and any(_CHECK_LINE.match(line) for line in gone):
            return f"it removes a test or an assertion from {path}"
    return None


def outside_perimeter(repo: Repo, base: str, head: str, perimeter: dict[str, Any]) -> str | None:
    """Why the change ``base..head`` is outside ``perimeter`` (checked mechanically), or None."""
    from gitive.store import diffs

    stat = diffs.stat(repo, base, head)
    stray = [p for p in stat.paths if not tiers.matches(p, perimeter["paths"])]
    if stray:
        return f"{stray[0]} is outside its paths"
    if stat.insertions + stat.deletions > perimeter["max_lines"]:
        return f"{stat.insertions + stat.deletions} lines changed, over its {perimeter['max_lines']}"
    lines = diffs.line_changes(repo, base, head)
    changes = perimeter["changes"]
    if ("text" in changes or "version-lines" in changes or "additions" in changes) and len(lines) < stat.files:
        return "it changes a binary file"
    for path, (gone, added) in lines.items():
        if "additions" in changes and gone:
            return f"it removes lines from {path}"
        if "version-lines" in changes and (len(gone) != len(added) or
                                           not all(_VERSION.search(ln) for ln in gone + added)):
            return f"{path} changes more than version lines"
    return removes_a_check(repo, base, head)


# --- a person's decisions: create and revoke (at a terminal, with the gesture of their person key) ----------


def create(hive: Any, conn: sqlite3.Connection, *, kind: str, perimeter: Perimeter, days: int, signer: Any,
           now: int) -> dict[str, Any]:
    """Sign a standing approval as this machine's person; the record written.

    Raises:
        NotAllowed: an anchor or removed machine, or no (registered) person key: it would not count.
        GitiveError: a bad perimeter, an expiry past 30 days, a security kind, or no approval earned it.
    """
    from gitive.anchor.prepared import approvals, tasks
    from gitive.core import gesture
    from gitive.core.records import TEAM_SCOPE
    from gitive.errors import GitiveError, NotAllowed
    from gitive.index import deciding
    from gitive.store import logs

    if signer is None:
        raise NotAllowed("a standing approval needs your person key (`gitive person init` or `gitive person "
                         "import`): readers refuse one without its gesture")
    person = deciding.decider(conn, hive.me, signer)
    if not 1 <= days <= MAX_DAYS:
        raise GitiveError(f"--days must be 1 to {MAX_DAYS}: a standing approval expires within {MAX_DAYS} days")
    repo = hive.project_id
    earned, _ = approvals.earned(tasks.all_tasks(conn), prepared_reads.progress(conn), repo, kind, conn)
    if not earned:
        raise GitiveError(f"no draft of kind {kind!r} was approved as prepared here yet: a standing approval is "
                          "earned from such reviews (`gitive review prepared`)")
    record: dict[str, Any] = {"type": "standing-approval", "kind": kind, "repo": repo,
                              "perimeter": perimeter.record(), "earned_from": earned[-20:], "sponsor": person,
                              "expires": now + days * DAY_MS, "created": now}
    record = {**record, "id": standing_id(hive.me, record)}
    problem = record_problem(record, hive.me, now)
    if problem:
        raise GitiveError(f"this standing approval would be refused: {problem}")
    done = gesture.sign(signer, hive.team_id, hive.me, record)
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, done, at=now)
    return done


def revoke(hive: Any, conn: sqlite3.Connection, ident: str, reason: str, signer: Any, now: int) -> dict[str, Any]:
    """Revoke a standing approval (its sponsor or an admin); the record written.

    Raises:
        GitiveError: no such approval, or it is not this person's to revoke.
        NotAllowed: the revocation would not count (no person key, an anchor machine).
    """
    from gitive.core.records import TEAM_SCOPE
    from gitive.errors import GitiveError, NotAllowed
    from gitive.index import deciding
    from gitive.store import logs

    if signer is None:
        raise NotAllowed("revoking needs your person key (`gitive person init` or `gitive person import`)")
    person = deciding.decider(conn, hive.me, signer)
    found = [a for a in all_approvals(conn, hive.team_id, now) if a["id"].startswith(ident.lower()) and len(ident) >= 4]
    if len(found) != 1:
        raise GitiveError(f"{'no' if not found else 'more than one'} standing approval {ident!r}: "
                          "`gitive standing list` shows them")
    approval = found[0]
    if person != approval["sponsor"] and not deciding.is_admin(conn, person):
        raise GitiveError(f"only its sponsor ({approval['sponsor']}) or an admin revokes this standing approval")
    record = {"type": "standing-state", "standing": approval["id"], "state": "revoked",
              "reason": (reason or "revoked")[:500]}
    done = deciding.signed(hive.team_id, hive.me, record, signer, conn)  # stamped: its own time and place
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, done, at=now)
    return done
