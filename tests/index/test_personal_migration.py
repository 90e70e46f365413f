"""A personal store from before sealed scopes moves into the team store, sealed, with nothing lost
(docs/scopes.md, "Migration"): both old paths (``personal.git`` for the first team, ``personal/<team>.git``
for others), states, reviews, citations and a retraction as they were, the old store kept as a backup, an
interrupted move resumed without copying twice, and another repository's index that read the old store rebuilt.

The old stores are written the way versions before 2026-12 wrote them: ``lessons.propose`` with the old
placement (``Hive.personal_store(create=True)``, then ``bodies.put`` and ``logs.append`` into it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gitive.core.lessons import body_hash, lesson_id
from gitive.index import db, ingest
from gitive.index.deciding import signed
from gitive.lessons import catalog, evidence
from gitive.lessons.model import body, body_bytes
from gitive.store import bodies, logs
from gitive.team.hive import open_hive
from testing import fixtures, people, sealed
from testing.machines import Fleet, Machine

FIELDS = ("id", "kind", "state", "scope", "text", "applicability", "tags", "evidence", "reviewer", "at",
          "citations", "successes", "author_machine")


def _clone(fleet: Fleet, home_of: Machine, remote: Path, name: str) -> Machine:
    return Machine(name, home_of.home, fixtures.clone(remote, fleet.base / "clones" / name))


class Legacy:
    """Writes ``machine``'s personal records as an old version did, without opening the index."""

    def __init__(self, machine: Machine) -> None:
        os.environ["GITIVE_HOME"] = str(machine.home)
        self.machine = machine
        self.hive = open_hive(machine.clone)
        self.repo = self.hive.personal_store(create=True)
        self.scope = {"personal": "alice"}

    def append(self, record: dict[str, Any], at: int) -> None:
        logs.append(self.repo, self.hive.key, self.hive.team_id, "personal", self.scope, record, at=at)

    def lesson(self, text: str, at: int, tags: list[str] | None = None) -> tuple[str, str]:
        item = evidence.resolve(self.hive.project, "file:notes.txt").item
        lesson = lesson_id(self.hive.me, self.scope, "Preference", text, "", None, [item])
        content = body(text, "", None)
        digest = body_hash(lesson, content)
        bodies.put(self.repo, self.hive.key, self.hive.team_id, digest, body_bytes(content))
        self.append({"type": "lesson", "id": lesson, "kind": "Preference", "evidence": [item],
                     "tags": sorted(tags or []), "body_hash": digest, "hearsay": False}, at)
        return lesson, digest

    def review(self, lesson: str, at: int, edit: str | None = None) -> None:
        record: dict[str, Any] = {"type": "review", "about": lesson, "approver": "alice", "approved": True,
                                  "note": "mine", "scope": self.scope}
        if edit is not None:
            content = body(edit, "", None)
            record["edits"] = body_hash(lesson, content)
            bodies.put(self.repo, self.hive.key, self.hive.team_id, record["edits"], body_bytes(content))
        self.append(signed(self.hive.team_id, self.hive.me, record, people.person_key(self.machine.home)), at)

    def retract(self, lesson: str, digest: str, at: int) -> None:
        record = {"type": "tombstone", "lesson": lesson, "reason": "no longer true", "bodies": [digest]}
        self.append(signed(self.hive.team_id, self.hive.me, record, people.person_key(self.machine.home)), at)
        bodies.delete(self.repo, self.hive.key, self.hive.team_id, [digest])

    def cite(self, lesson: str, at: int) -> None:
        self.append({"type": "citation", "lesson": lesson, "session": "alice/api", "success": True,
                     "tests_passed": True, "reverted": False}, at)


def _as_old_versions_read_it(machine: Machine, tmp: Path) -> list[dict[str, Any]]:
    """The personal lessons as an index that reads the old store in place (every version before) shows them."""
    hive = open_hive(machine.clone)
    path = tmp / f"old-{machine.name}.sqlite"
    with db.connect(path) as conn:
        ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, hive.me)
        return _view(catalog.listing(conn, scope="personal"))


def _view(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: item[k] for k in FIELDS} for item in items), key=lambda i: i["id"])


def _personal(machine: Machine) -> list[dict[str, Any]]:
    return _view(machine.json("lessons", "list", "--scope", "personal"))


def _old_records(machine: Machine, tmp: Path, name: str) -> Legacy:
    (machine.clone / "notes.txt").write_text("tabs, not spaces\n")
    machine.git("add", "notes.txt")
    machine.git("commit", "--quiet", "-m", "notes")
    old = Legacy(machine)
    kept, _ = old.lesson(f"{name}: Alice prefers tabs", 1_790_000_000_000, tags=["tabs-habit"])
    old.review(kept, 1_790_000_100_000, edit=f"{name}: Alice prefers tabs, width 4")
    gone, digest = old.lesson(f"{name}: Alice prefers the old build", 1_790_000_200_000)
    old.retract(gone, digest, 1_790_000_300_000)
    old.cite(kept, 1_790_000_400_000)
    return old


def test_both_old_personal_stores_move_sealed_with_nothing_lost(fleet: Fleet, make_bare, tmp_path: Path) -> None:
    remotes = [make_bare("r0.git"), make_bare("r1.git")]
    r0 = fleet.found(fleet.machine("r0", remotes[0]), "alice")
    r1 = _clone(fleet, r0, remotes[1], "r1")
    r1.decided("init", "--person", "alice", "--name", "beta")
    r1.ok("sync")
    old0, old1 = _old_records(r0, tmp_path, "alpha"), _old_records(r1, tmp_path, "beta")
    assert (old0.repo.path.rstrip("/").endswith("personal.git")
            and old1.repo.path.rstrip("/").endswith(f"personal/{r1.team_id}.git"))
    before = {m.name: _as_old_versions_read_it(m, tmp_path) for m in (r0, r1)}
    assert [i["state"] for i in before["r0"]] and {i["state"] for i in before["r0"]} == {"verified", "retracted"}
    backups = {}
    for m, old in ((r0, old0), (r1, old1)):
        path = Path(old.repo.path.rstrip("/"))
        backups[m.name] = (path.with_name(path.name + ".migrated"), fixtures.ref_tips(path))

    for m in (r0, r1):
        moved = m.run("lessons", "list", "--scope", "personal", "--json")
        assert moved.code == 0, str(moved)
        assert "moved 5 personal record(s) into the team store" in moved.err
        assert _personal(m) == before[m.name]  # ids, states, edited text, tags, times, citations: as they were
        backup, tips = backups[m.name]
        assert fixtures.ref_tips(backup) == tips  # the old store is kept as it was
        assert m.run("lessons", "list").err.count("moved") == 0  # said once
        assert m.json("sync")["ok"]

    for remote, name in ((remotes[0], "alpha"), (remotes[1], "beta")):
        found = sealed.read(remote)
        assert not [b for b in found.blobs if name.encode() + b": Alice" in b or b"tabs-habit" in b]
        assert len(found.records) == 5
        migrated = sealed.opened_with(found, r0.key).records
        assert all(len(p.get("migrated", "")) == 64 for p in migrated)
    for m in (r0, r1):
        report = m.run("doctor", "--json")
        assert report.code == 0, str(report)


def test_another_repository_of_the_team_rebuilds_an_index_that_read_the_old_store(
        fleet: Fleet, bare_remote: Path, make_bare) -> None:
    first = fleet.found(fleet.machine("laptop", bare_remote), "alice")
    other = _clone(fleet, first, make_bare("other.git"), "other")
    other.ok("attach")
    old = _old_records(first, Path("."), "shared")
    expected = _as_old_versions_read_it(first, fleet.base)
    # the other clone's index as an old version left it: it read the old personal store in place
    hive = open_hive(other.clone)
    with db.connect(hive.index_path) as conn:
        ingest.ingest(conn, [*hive.stores()], hive.team_id, hive.founder, hive.me)
        assert conn.execute("SELECT COUNT(*) FROM entries WHERE log = 'personal'").fetchone()[0] == 5
    assert Path(old.repo.path.rstrip("/")).exists()

    first.ok("lessons", "list")  # moves the store
    first.ok("sync")
    other.ok("sync")
    assert _personal(other) == expected  # the other index, rebuilt from refs, reads the sealed copies
    rows = sealed.index_rows(hive.index_path, "SELECT kind FROM problems")
    assert rows == []  # no equivocation between the old entries and their sealed copies


def test_an_interrupted_move_resumes_without_copying_twice(fleet: Fleet, bare_remote: Path) -> None:
    a = fleet.found(fleet.machine("laptop", bare_remote), "alice")
    old = _old_records(a, Path("."), "resume")
    path = Path(old.repo.path.rstrip("/"))
    expected = _as_old_versions_read_it(a, fleet.base)
    # a crash after the first two copies: the store is already renamed, two sealed copies are written
    from gitive.index import personal_migration, scopes
    from gitive.index.catchup import catch_up

    moving = path.with_name(path.name + ".migrating")
    os.rename(path, moving)
    hive = open_hive(a.clone)
    store = _open(moving)
    with db.connect(hive.index_path) as conn:
        catch_up(hive, conn)
        for entry in logs.entries(store, f"refs/hive/logs/{a.id}/personal")[:2]:
            record = entry.body["record"]
            items = {h: bodies.get(store, a.id, h) for h in (record.get("body_hash"), record.get("edits")) if h}
            scopes.write(hive, conn, hive.store, "personal", entry.body["scope"], record,
                         {h: d for h, d in items.items() if d}, migrated=entry.hash, at=entry.body["at"])
    assert personal_migration.before_open(hive)
    a.ok("lessons", "list")
    assert _personal(a) == expected
    assert len(sealed.read(a.clone).records) == 5  # the two already copied were not copied again
    assert path.with_name(path.name + ".migrated").exists() and not path.exists()


def test_a_machine_that_cannot_write_keeps_reading_its_old_store(fleet: Fleet, bare_remote: Path) -> None:
    a = fleet.found(fleet.machine("laptop", bare_remote), "alice")
    old = _old_records(a, Path("."), "removed")
    expected = _as_old_versions_read_it(a, fleet.base)
    a.git("config", "hive.removed", "true")  # what the index sets when the roster shows this machine removed
    assert _personal(a) == expected
    assert Path(old.repo.path.rstrip("/")).exists()


def _open(path: Path) -> Any:
    import pygit2

    return pygit2.Repository(str(path))
