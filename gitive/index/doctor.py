"""``gitive doctor``: every problem the index and the repositories show, each with what to do about it."""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.index import queries, store_doctor
from gitive.store import repo as repos
from gitive.store import sync
from gitive.team.hive import Hive

_HINTS = {
    "equivocation": "a machine signed two different entries for one seq: its key may be copied or stolen; "
                    "remove it (`gitive team remove`) and investigate",
    "rollback": "a source served a shorter log than before (force-push or lost data); what was verified is kept",
    "bad-signature": "an entry does not verify: forged or corrupted; it is ignored",
    "wrong-signer": "an entry signed by another machine sits in this machine's log: forged; it is ignored",
    "seq-gap": "a log skips or repeats a sequence number; entries after the gap are ignored",
    "malformed": "a commit in a hive log is not a well-formed entry; that log is ignored from there",
    "wrong-log": "an entry names a different log than the ref it sits in; it is ignored",
    "future": "an entry is stamped more than a day ahead of this clock; it is used once that time comes",
    "roster-refused": "a roster entry broke a membership rule and is ignored",
}


def diagnose(hive: Hive, conn: sqlite3.Connection) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for p in queries.problems(conn):
        found.append({"kind": p["kind"], "where": p["source"], "seq": p["seq"], "detail": p["detail"],
                      "hint": _HINTS.get(p["kind"], "")})
    for u in queries.unknown_signers(conn):
        found.append({"kind": "unknown-signer", "where": u["author"][:16], "seq": None,
                      "detail": f"{u['entries']} entries by a machine the roster does not admit",
                      "hint": "they are ignored until the roster admits that machine"})
    for repo in hive.stores():
        for remote in repos.remotes(repo):
            if sync.missing_refspec(repo, remote):
                found.append({"kind": "missing-refspec", "where": f"{repo.path}:{remote}", "seq": None,
                              "detail": f"remote {remote!r} does not fetch refs/hive/*",
                              "hint": f"run `git config --add remote.{remote}.fetch '{sync.fetch_refspec(remote)}'`"})
    return found + store_doctor.body_problems(hive, conn) + store_doctor.upkeep_problems(hive)
