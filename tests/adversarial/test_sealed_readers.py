"""What a reader opens of a sealed scope, attacked (docs/scopes.md, "Reading"): a teammate who holds the team's
sealed project key and can push anything tries to make alice's machines take something as a record it is not,
or to give them a key that is not the one an epoch names; a stranger's and a teammate's keys try to open alice's
personal records. And whatever order entries arrive in, the index opens what a rebuild opens.

In-memory indexes fed signed envelopes (``testing.index.build``), with alice's, bob's and a stranger's real keys.
"""

from __future__ import annotations

import base64
import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.core import sealing
from gitive.index import sealed as sealed_index
from testing.authority import PROJECT, TEAM_ID, Team, t
from testing.builders import LogBook, machine
from testing.index import build, projections
from testing.sealed import epoch_record, sealed_record

PERSONAL = {"personal": "alice"}
ATTACKS = ("copy alice's box into bob's log", "seal as alice's personal record", "a box that does not open",
           "seal a roster record", "seal team scope", "another log in the plaintext",
           "a wrong key under alice's epoch id", "a forged wrap of alice's key", "a review of another scope")


class World:
    """alice (laptop, desk) and bob; alice's personal epoch sealed to her machines; a project epoch sealed to
    every member; one honest sealed personal lesson and one sealed project lesson by alice."""

    def __init__(self, rng: random.Random) -> None:
        self.team = Team("alice")
        self.laptop = self.team.founder
        self.desk = self.team.join("alice-desk", "alice", 10)
        self.bob = self.team.join("bob-desk", "bob", 20)
        self.stranger = machine("stranger")
        self.personal_key, self.project_key = sealing.new_key(), sealing.new_key()
        self.books = {"personal/alice": LogBook(TEAM_ID, "personal", PERSONAL),
                      "personal/bob": LogBook(TEAM_ID, "personal", {"personal": "bob"}),
                      "project": LogBook(TEAM_ID, "project-" + PROJECT[:16], {"project": PROJECT}),
                      "team": LogBook(TEAM_ID, "team", None)}
        alice = [self.laptop.id, self.desk.id]
        self.add("personal/alice", self.laptop, epoch_record(self.personal_key, alice), 30)
        everyone = [self.laptop.id, self.desk.id, self.bob.id]
        self.add("project", self.laptop, epoch_record(self.project_key, everyone), 31)
        self.mine = self.lesson_record(f"alice's own {rng.randrange(10**9)}")
        self.add("personal/alice", self.laptop, sealed_record(self.personal_key, self.laptop.id, "personal",
                                                              self.mine), 32)
        self.shared = self.lesson_record(f"the team's {rng.randrange(10**9)}")
        self.add("project", self.laptop, sealed_record(self.project_key, self.laptop.id,
                                                       self.books["project"].log, self.shared), 33)

    @staticmethod
    def lesson_record(text: str) -> dict[str, Any]:
        import blake3

        return {"type": "lesson", "id": blake3.blake3(f"lesson/{text}".encode()).hexdigest(), "kind": "Gotcha",
                "evidence": [{"kind": "file", "path": "a.py"}], "tags": [],
                "body_hash": blake3.blake3(text.encode()).hexdigest(), "hearsay": False}

    def add(self, book: str, author: Any, record: dict[str, Any], minutes: int) -> dict[str, Any]:
        return self.books[book].add(author, record, at=t(minutes))

    @property
    def envelopes(self) -> list[dict[str, Any]]:
        return self.team.entries + [env for book in self.books.values() for env in book.entries]

    def attack(self, name: str, payload: dict[str, Any]) -> None:
        """bob's move; ``payload`` is the record he wants alice's machines to take."""
        bob, log = self.bob, self.books["project"].log
        if name == "copy alice's box into bob's log":
            honest = self.books["personal/alice"].entries[-1]["body"]["record"]
            self.add("personal/alice", bob, dict(honest), 40)
        elif name == "seal as alice's personal record":
            key = sealing.new_key()
            self.add("personal/alice", bob, epoch_record(key, [self.laptop.id, self.desk.id, bob.id]), 40)
            self.add("personal/alice", bob, sealed_record(key, bob.id, "personal", payload), 41)
        elif name == "a box that does not open":
            record = sealed_record(self.project_key, bob.id, log, payload)
            raw = bytearray(base64.b64decode(record["box"]))
            raw[-1] ^= 1
            self.add("project", bob, {**record, "box": base64.b64encode(bytes(raw)).decode()}, 40)
        elif name == "seal a roster record":
            member = {"type": "member", "machine": bob.id, "person": "bob", "name": "bob-desk", "role": "admin",
                      "active": True, "emails": [], "ts": t(40)}
            self.add("project", bob, sealed_record(self.project_key, bob.id, log, member), 40)
        elif name == "seal team scope":
            self.add("team", bob, sealed_record(self.project_key, bob.id, "team", payload), 40)
        elif name == "another log in the plaintext":
            self.add("project", bob, sealed_record(self.project_key, bob.id, "team", payload), 40)
        elif name == "a wrong key under alice's epoch id":
            fake = epoch_record(sealing.new_key(), [self.laptop.id, self.desk.id])
            fake["epoch"] = sealing.epoch_id(self.personal_key)
            self.add("personal/bob", bob, fake, 40)
        elif name == "a forged wrap of alice's key":
            key = sealing.new_key()
            record = epoch_record(key, [self.laptop.id, bob.id])
            record["wraps"] = {sealing.epoch_id(self.personal_key): sealing.wrap(key, sealing.new_key())}
            self.add("personal/bob", bob, record, 40)
            self.add("personal/bob", bob, sealed_record(key, bob.id, "personal", payload), 41)
        elif name == "a review of another scope":
            review = {"type": "review", "about": self.shared["id"], "approver": "bob", "approved": True,
                      "note": "", "scope": {"team": True}}
            self.add("project", bob, sealed_record(self.project_key, bob.id, log, review), 40)


def _lessons(conn: Any) -> set[str]:
    return {r[0] for r in conn.execute("SELECT id FROM visible_lessons")}


def _opened(conn: Any) -> list[tuple[Any, ...]]:
    return sorted(conn.execute("SELECT author, log, seq, state, kind FROM sealed_entries"))


@settings(max_examples=30, deadline=None)
@given(attack=st.sampled_from(ATTACKS), seed=st.integers(0, 2**32 - 1))
def test_an_attacker_never_gets_a_sealed_record_taken_for_what_it_is_not(attack: str, seed: int) -> None:
    world = World(random.Random(seed))
    payload = world.lesson_record(f"bob's plant {seed}")
    world.attack(attack, payload)
    for reader in (world.laptop, world.desk):
        conn = build(world.envelopes, TEAM_ID, world.laptop.id, key=reader.key)
        assert {world.mine["id"], world.shared["id"]} <= _lessons(conn)  # the honest records still open
        assert payload["id"] not in _lessons(conn)
        assert conn.execute("SELECT COUNT(*) FROM reviews").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM members").fetchone()[0] == 3  # no sealed roster change
        refused = {r[0] for r in conn.execute("SELECT kind FROM problems")}
        assert refused <= {sealed_index.REFUSED}
        opened_bad = conn.execute("SELECT COUNT(*) FROM sealed_entries WHERE author = ? AND state = ?",
                                  (world.bob.id, sealed_index.OPEN)).fetchone()[0]
        assert opened_bad == 0
        keys = sealed_index.Keyring(conn, reader.key).keys()  # a false claim never replaces the real key
        assert keys[sealing.epoch_id(world.personal_key)] == world.personal_key
        assert keys[sealing.epoch_id(world.project_key)] == world.project_key


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_no_other_key_opens_alices_personal_records(seed: int) -> None:
    world = World(random.Random(seed))
    for outsider in (world.bob, world.stranger):
        conn = build(world.envelopes, TEAM_ID, world.laptop.id, key=outsider.key)
        assert world.mine["id"] not in _lessons(conn)
        keys = sealed_index.Keyring(conn, outsider.key).keys()
        assert sealing.epoch_id(world.personal_key) not in keys
        for env in world.books["personal/alice"].entries:
            record = env["body"]["record"]
            for box in record.get("recipients", {}).values():
                assert sealing.open_key(outsider.key, box, record["epoch"]) is None
    conn = build(world.envelopes, TEAM_ID, world.laptop.id, key=world.bob.key)
    assert world.shared["id"] in _lessons(conn)  # bob is in the project's audience


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), attack=st.sampled_from(ATTACKS), cut=st.floats(0, 1))
def test_entries_opened_in_any_arrival_order_equal_a_rebuild(seed: int, attack: str, cut: float) -> None:
    """Keys may arrive after the records sealed with them: an index fed in two batches, in any order, opens
    exactly what one built from everything at once opens."""
    rng = random.Random(seed)
    world = World(rng)
    world.attack(attack, world.lesson_record(f"plant {seed}"))
    everything = world.envelopes
    roster = world.team.entries
    rest = [e for e in everything if e not in roster]
    rng.shuffle(rest)
    first, second = rest[:int(len(rest) * cut)], rest[int(len(rest) * cut):]
    for reader in (world.laptop, world.bob):
        stepwise = build(roster + first, TEAM_ID, world.laptop.id, key=reader.key)
        stepwise = build(second, TEAM_ID, world.laptop.id, conn=stepwise, key=reader.key)
        rebuilt = build(everything, TEAM_ID, world.laptop.id, key=reader.key)
        assert projections(stepwise) == projections(rebuilt)
        assert _opened(stepwise) == _opened(rebuilt)
        assert _lessons(stepwise) == _lessons(rebuilt)
