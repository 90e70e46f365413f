"""Bodies in the index: found through ``body_locations``, caught up by diffing snapshots, old stores still read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from gitive.core.ids import blake3_hex
from gitive.store import bodies, logs, refs, snapshots
from testing.bodies import v1_store
from testing.lessons import index_db, propose
from testing.machines import Fleet, Machine


@pytest.fixture
def pair(fleet: Fleet, bare_remote: Path) -> list[Machine]:
    from tests.lessons.conftest import share_file

    machines = fleet.team(bare_remote, ("alice", "a"), ("bob", "b"))
    share_file(machines)
    return machines


def _text(m: Machine, lesson: str) -> str | None:
    return m.json("lessons", "show", lesson)["text"]


def test_catching_up_after_a_write_never_lists_a_whole_store(pair: list[Machine],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = pair
    filler = {blake3_hex(f"filler {i}".encode()): f"filler {i}".encode() for i in range(2_000)}
    bodies.put_many(a.repo, a.key, a.team_id, filler)
    a.ok("sync")
    b.ok("sync")  # both have listed Alice's store once, when they first accepted it

    def no_listing(*args: object) -> None:
        raise AssertionError("a whole body store was listed")

    monkeypatch.setattr(bodies, "entries", no_listing)
    lesson = propose(a, "Catching up costs what the write changed")
    assert _text(a, lesson) == "Catching up costs what the write changed"
    a.ok("sync")
    b.ok("sync")
    assert _text(b, lesson) == "Catching up costs what the write changed"


def test_a_v1_store_from_an_old_client_reads_and_the_next_write_migrates_it(
        fleet: Fleet, bare_remote: Path) -> None:
    from tests.lessons.conftest import share_file

    a = fleet.found(fleet.machine("a", bare_remote), "alice")
    share_file([a])
    lessons = [propose(a, f"Old lesson number {i}") for i in range(3)]
    # what an older gitive left: the same bodies in a flat, unversioned store
    old = {h: bodies.get(a.repo, a.id, h) for h in bodies.hashes(a.repo, a.id)}
    v1_store(a.repo, a.key, a.team_id, old)  # type: ignore[arg-type]
    (a.clone / ".git" / "gitive" / "index.sqlite").unlink()
    a.ok("sync")  # publishes the v1 store, as the old client did
    b = fleet.join(fleet.machine("b", bare_remote), fleet.invite(a), "bob")
    b.ok("sync")
    assert [_text(b, lid) for lid in lessons] == [f"Old lesson number {i}" for i in range(3)]
    with index_db(b) as conn:
        assert conn.execute("SELECT version, layout FROM body_pins WHERE machine = ?", (a.id,)).fetchone() == \
            (0, snapshots.FLAT)

    newer = propose(a, "The first write by a newer gitive")
    tip = refs.tip(a.repo, refs.bodies_ref(a.id))
    found = snapshots.check(a.repo, a.team_id, "bodies", a.id, tip)
    assert (found.version, found.layout) == (1, snapshots.FANOUT)
    a.ok("sync")
    b.ok("sync")
    assert [_text(b, lid) for lid in [*lessons, newer]] == [
        *[f"Old lesson number {i}" for i in range(3)], "The first write by a newer gitive"]


def test_an_index_from_before_the_body_tables_migrates_and_reads(pair: list[Machine]) -> None:
    a, b = pair
    lesson = propose(a, "Written before the index knew where bodies are")
    a.ok("sync")
    b.ok("sync")
    path = b.clone / ".git" / "gitive" / "index.sqlite"
    conn = sqlite3.connect(path)
    with conn:
        for table in ("body_sources", "body_pins", "body_locations"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DROP INDEX lessons_body_hash")
        conn.execute("DROP INDEX reviews_edits")
        conn.execute("DELETE FROM migrations WHERE name = '0006-body-store'")
    conn.close()
    later = propose(a, "Written after the upgrade")
    a.ok("sync")
    b.ok("sync")
    assert (_text(b, lesson), _text(b, later)) == ("Written before the index knew where bodies are",
                                                  "Written after the upgrade")
    with index_db(b) as check:
        assert check.execute("SELECT count(*) FROM body_locations WHERE machine = ?", (a.id,)).fetchone()[0] == 2


def test_a_tombstone_listing_another_lessons_hash_leaves_that_lesson_alone(pair: list[Machine]) -> None:
    a, b = pair
    kept = propose(a, "This lesson must keep its text")
    gone = propose(a, "This one is retracted")
    a.ok("sync")
    shown = {lid: a.json("lessons", "show", lid) for lid in (kept, gone)}
    # a tombstone for one lesson that also lists the other's body hash (written past the CLI, which lists
    # only the retracted lesson's own bodies)
    logs.append(a.repo, a.key, a.team_id, "project", {"project": shown[gone]["project"]},
                {"type": "tombstone", "lesson": gone, "reason": "test",
                 "bodies": [shown[gone]["body_hash"], shown[kept]["body_hash"]]})
    for m in (a, b, a):
        m.ok("sync")
    for m in (a, b):
        assert _text(m, kept) == "This lesson must keep its text"
    assert bodies.has(a.repo, a.id, shown[kept]["body_hash"])
