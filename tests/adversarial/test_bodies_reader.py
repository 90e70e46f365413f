"""An honest reader against body snapshots pushed by someone else (issue 8 item 2, docs/verification.md §5).

The remote here has no guard: anyone may push anything to it. Readers refuse unsigned and stranger-signed
snapshots, and any snapshot whose version does not go above the newest they accepted; they pin the newest,
so a replay neither erases a body nor revives one, and ``doctor`` names a body only a refused snapshot holds.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.core.ids import blake3_hex
from gitive.index import db
from gitive.index.bodies import refresh_locations
from gitive.store import bodies, refs, snapshots
from testing import fixtures
from testing.bodies import rewrap
from testing.builders import TEAM_ID, machine
from testing.lessons import confirmed, index_db, propose
from testing.machines import Fleet, Machine

STRANGER = machine("stranger")


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return Fleet(tmp_path / "fleet")


@pytest.fixture
def pair(fleet: Fleet, bare_remote: Path) -> list[Machine]:
    from tests.lessons.conftest import share_file

    machines = fleet.team(bare_remote, ("alice", "a"), ("bob", "b"))
    share_file(machines)
    return machines


def _bodies_tip(remote: Path, who: Machine) -> str:
    return fixtures.run_git(["rev-parse", refs.bodies_ref(who.id)], cwd=remote).strip()


def _force(attacker: Machine, commit: str, ref: str) -> None:
    attacker.git("push", "--quiet", "origin", f"+{commit}:{ref}")


def _kinds(m: Machine) -> list[str]:
    return [p["kind"] for p in m.run("doctor", "--json").json()["problems"]]


def _locations(m: Machine, body_hash: str) -> int:
    with index_db(m) as conn:
        return conn.execute("SELECT count(*) FROM body_locations WHERE body_hash = ?", (body_hash,)).fetchone()[0]


def test_an_unsigned_snapshot_shadows_nothing_and_a_new_member_is_told(
        pair: list[Machine], fleet: Fleet, bare_remote: Path) -> None:
    a, b = pair
    text = "Deploy windows close at 16:00 on Fridays"
    lesson = propose(a, text)
    code = fleet.invite(a)  # (inviting publishes Alice's refs: do it before the attack)
    for m in (a, b):
        m.ok("sync")
    honest = _bodies_tip(bare_remote, a)
    unsigned = rewrap(b.repo, honest, "bodies of a\n\nHive-Version: 99\nHive-Layout: fanout-2\n")
    _force(b, unsigned, refs.bodies_ref(a.id))

    b.ok("sync")
    assert b.json("lessons", "show", lesson)["text"] == text  # the pinned snapshot still serves it
    assert "snapshot-refused" in _kinds(b)

    c = fleet.join(fleet.machine("c", bare_remote), code, "carol")
    c.ok("sync")
    assert c.json("lessons", "show", lesson)["text"] is None  # the remote serves only the forgery
    problems = c.run("doctor", "--json").json()["problems"]
    [missing] = [p for p in problems if p["kind"] == "body-only-in-refused-snapshot"]
    assert lesson[:12] in missing["detail"] and "unsigned" in missing["detail"]

    a.ok("sync")  # the owner's next sync puts its own snapshot back
    c.ok("sync")
    assert c.json("lessons", "show", lesson)["text"] == text
    assert not {"snapshot-refused", "body-only-in-refused-snapshot"} & set(_kinds(c))


def test_a_strangers_snapshot_cannot_shadow_a_body(pair: list[Machine], fleet: Fleet, bare_remote: Path) -> None:
    a, b = pair
    text = "The billing queue is drained by the night job"
    lesson = propose(a, text)
    a.ok("sync")
    digest = a.json("lessons", "show", lesson)["body_hash"]
    # a stranger signs a store of its own holding a wrong body under that hash, and one under Alice's name
    repo = b.repo
    bodies.put(repo, STRANGER.key, b.team_id, digest, b'{"applicability":"","quote":null,"text":"wrong"}')
    planted = refs.tip(repo, refs.bodies_ref(STRANGER.id))
    _force(b, planted, refs.bodies_ref(STRANGER.id))
    c = fleet.join(fleet.machine("c", bare_remote), fleet.invite(a), "carol")
    c.ok("sync")
    assert c.json("lessons", "show", lesson)["text"] == text
    assert _locations(c, digest) == 2  # both stores list it; only Alice's body matches the signed hash


def test_a_replayed_older_snapshot_neither_erases_nor_revives(pair: list[Machine], bare_remote: Path) -> None:
    a, b = pair
    first = propose(a, "Old lesson that will be retracted")
    for m in (a, b):
        m.ok("sync")  # Bob, the attacker here, keeps a copy of this snapshot
    old = _bodies_tip(bare_remote, a)
    b.git("update-ref", "refs/attacker/old-bodies", old)  # kept out of gitive's reach: it purges retracted bodies
    second = propose(a, "Newer lesson the replay would erase")
    for m in (a, b):
        m.ok("sync")
    shown = {lid: b.json("lessons", "show", lid) for lid in (first, second)}

    _force(b, old, refs.bodies_ref(a.id))  # replay: an older snapshot, genuinely signed by Alice
    b.ok("sync")
    assert b.json("lessons", "show", second)["text"] == shown[second]["text"]  # not erased
    assert _locations(b, shown[second]["body_hash"]) == 1

    confirmed(a, "retract", first, "--reason", "wrong", prompt="Retract it for everyone?")
    a.ok("sync")  # pushes the tombstone and the store without the body (a version above the replay)
    b.ok("sync")
    _force(b, old, refs.bodies_ref(a.id))  # replay the snapshot that still holds the retracted body
    b.ok("sync")
    assert b.json("lessons", "show", first)["text"] is None  # not revived
    assert _locations(b, shown[first]["body_hash"]) == 0
    assert refs.tip(b.repo, refs.pinned_bodies_ref(a.id)) == refs.tip(a.repo, refs.bodies_ref(a.id))
    b.ok("index", "rebuild")  # a rebuild from refs alone (pins included) agrees
    assert b.json("lessons", "show", second)["text"] == shown[second]["text"]
    assert b.json("lessons", "show", first)["text"] is None


# ---- property: random interleavings of honest writes and hostile pushes ------------------------------------

OWNER = machine("owner")
_REMOTE_REF = f"refs/hive-remotes/origin/bodies/{OWNER.id}"
_MIRROR_REF = f"refs/hive-remotes/mirror/bodies/{OWNER.id}"


class World:
    """The owner's store in its own repository; the reader's repository sees its objects as an alternate
    and its remote-tracking refs are set as a fetch (honest or not) would leave them."""

    def __init__(self, base: Path) -> None:
        self.owner = pygit2.init_repository(str(base / "owner.git"), bare=True)
        reader_path = Path(pygit2.init_repository(str(base / "reader.git"), bare=True).path)
        (reader_path / "objects" / "info" / "alternates").write_text(f"{base / 'owner.git' / 'objects'}\n")
        self.reader = pygit2.Repository(str(reader_path))
        self.history: list[str] = []
        self.seen_newest: snapshots.Snapshot | None = None
        self.index = base / "index.sqlite"
        self.n = 0

    def snapshot(self, commit: str) -> snapshots.Snapshot:
        return snapshots.check(self.owner, TEAM_ID, "bodies", OWNER.id, commit)

    def honest_write(self, delete: bool) -> None:
        have = bodies.hashes(self.owner, OWNER.id)
        if delete and have:
            bodies.delete(self.owner, OWNER.key, TEAM_ID, have[:1])
        else:
            self.n += 1
            data = f"body {self.n}".encode()
            bodies.put(self.owner, OWNER.key, TEAM_ID, blake3_hex(data), data)
        self.history.append(refs.tip(self.owner, refs.bodies_ref(OWNER.id)))

    def point(self, ref: str, commit: str) -> None:
        refs.force_set(self.reader, ref, commit, "test")

    def ingest(self, conn: sqlite3.Connection) -> None:
        """What the reader is shown now; the model's newest is the highest version of the owner's genuine
        snapshots it was ever shown (a genuine newer one, delivered by anyone, is simply news)."""
        for ref in (_REMOTE_REF, _MIRROR_REF):
            tip = refs.tip(self.reader, ref)
            if tip in self.history:
                found = self.snapshot(tip)
                if self.seen_newest is None or found.version > self.seen_newest.version:
                    self.seen_newest = found
        refresh_locations(conn, [self.reader], TEAM_ID)

    def hostile(self, kind: str, pick: int) -> str:
        repo = self.owner
        base = self.history[pick % len(self.history)]
        if kind == "replay":
            return base
        if kind == "unsigned":
            return rewrap(repo, base, "bodies\n\nHive-Version: 1000\nHive-Layout: fanout-2\n")
        if kind == "stranger":
            return snapshots.write(repo, STRANGER.key, TEAM_ID, "bodies", repo[base].tree_id, "forged", 1000)
        bumped = repo[base].message.replace("Hive-Version: ", "Hive-Version: 10")
        return rewrap(repo, base, bumped)  # a genuine signature under a higher claimed version


def _state(conn: sqlite3.Connection) -> tuple[Any, ...]:
    pins = conn.execute("SELECT machine, commit_id, version FROM body_pins ORDER BY machine").fetchall()
    where = conn.execute("SELECT body_hash, machine, blob FROM body_locations ORDER BY body_hash").fetchall()
    return pins, where


_STEP = st.one_of(
    st.tuples(st.just("write"), st.booleans(), st.sampled_from([_REMOTE_REF, _MIRROR_REF, None])),
    st.tuples(st.sampled_from(["replay", "unsigned", "stranger", "bumped"]), st.integers(0, 50),
              st.sampled_from([_REMOTE_REF, _MIRROR_REF])),
)


def test_the_reader_follows_only_the_owners_newest_snapshot_and_equals_a_rebuild(tmp_path: Path) -> None:
    runs = iter(range(10_000))

    @settings(max_examples=40)
    @given(st.lists(_STEP, min_size=1, max_size=14))
    def run(steps: list[tuple[Any, ...]]) -> None:
        world = World(tmp_path / f"run{next(runs)}")
        world.honest_write(False)
        world.point(_REMOTE_REF, world.history[-1])
        with db.connect(world.index) as conn:
            world.ingest(conn)
            for kind, arg, ref in steps:
                if kind == "write":
                    world.honest_write(arg)
                    if ref is not None:  # a fetch from that remote brings the new snapshot
                        world.point(ref, world.history[-1])
                else:
                    world.point(ref, world.hostile(kind, arg))
                world.ingest(conn)
                newest = world.seen_newest
                assert newest is not None
                pins, where = _state(conn)
                assert pins == [(OWNER.id, newest.commit, newest.version)], (kind, arg)
                expected = sorted((h, OWNER.id, blob) for h, blob in bodies.entries(world.owner, newest.tree,
                                                                                     newest.layout))
                assert where == expected
            incremental = _state(conn)
        rebuilt_path = world.index.with_name("rebuilt.sqlite")
        with db.connect(rebuilt_path) as fresh:
            refresh_locations(fresh, [world.reader], TEAM_ID)
            assert _state(fresh) == incremental

    run()
