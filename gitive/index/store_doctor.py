"""What ``gitive doctor`` says about the body store and upkeep: bodies only refused snapshots hold, refused
snapshots, garbage that upkeep has not pruned, and a remote whose objects nobody packs."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.constants import LOOSE_REFS_PACK_THRESHOLD
from gitive.index.bodies import missing_bodies, refused_snapshots
from gitive.store import maintenance, sync
from gitive.store import repo as repos

if TYPE_CHECKING:
    from gitive.team.hive import Hive


def _finding(kind: str, where: str, detail: str, hint: str) -> dict[str, Any]:
    return {"kind": kind, "where": where, "seq": None, "detail": detail, "hint": hint}


def body_problems(hive: Hive, conn: sqlite3.Connection) -> list[dict[str, Any]]:
    found = []
    for ref, tip, reason in refused_snapshots(conn):
        found.append(_finding("snapshot-refused", ref, f"{tip[:12]} {reason.removeprefix('refused: ')}",
                              "someone pushed a body snapshot its machine did not sign; it is ignored, and the "
                              "owner's next sync replaces it on the remote"))
    for m in missing_bodies(conn, hive.stores()):
        found.append(_finding("body-only-in-refused-snapshot", m.ref,
                              f"the text of lesson {m.lesson[:12]} (body {m.body_hash[:12]}) is only in a "
                              f"snapshot this reader refused ({m.reason})",
                              "it stays hidden: ask the lesson's author (or reviewer) to run `gitive sync`"))
    return found


def upkeep_problems(hive: Hive) -> list[dict[str, Any]]:
    found = []
    for repo in hive.stores():
        h = maintenance.health(repo)
        last = maintenance.last_upkeep(repo)
        if maintenance.due(repo, h):
            since = f"; upkeep last ran at {last['at']} ms" if last.get("at") else "; upkeep never ran here"
            found.append(_finding("garbage", repo.path, f"about {h.loose_objects} loose objects{since}",
                                  "run `gitive sync` (it packs and prunes when due) or `gitive gc` now"))
        if h.loose_refs > LOOSE_REFS_PACK_THRESHOLD:
            found.append(_finding("loose-refs", repo.path, f"{h.loose_refs} loose refs", "run `gitive gc`"))
    for repo in hive.shared_stores():
        for remote in sync.sync_remotes(repo):  # the remotes sync talks to (doctor checks what sync does)
            seen = maintenance.remote_upkeep(repos.remote_url(repo, remote) or "")
            if seen is not None and seen.unpacked:
                how = "git's auto gc is off there" if not seen.auto_gc else "git's auto gc has not run"
                found.append(_finding(
                    "remote-unpacked", f"{repo.path}:{remote}",
                    f"remote {remote!r} holds about {seen.loose_objects} loose objects ({how})",
                    f"run `git gc` in {seen.path}, or enable `receive.autogc` there"))
    return found



