"""Sealed scopes end to end (issue 9 item 3, docs/scopes.md): personal lessons reach the person's other machines
through the team remote and nobody else, a removed machine cannot open what is sealed after its removal, and
``--sealed`` project lessons are read by the team only, however public the project repository is.

"Nobody else" is checked the hard way: every sealed entry and body on the remote is tried with every key of
the team that is not a recipient, and with a stranger's, outside gitive's index (``testing.sealed``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testing import sealed
from testing.lessons import propose
from testing.machines import Fleet, Machine, make_key
from tests.lessons.conftest import share_file


def _ids(machine: Machine) -> set[str]:
    return {item["id"] for item in machine.json("lessons", "list")}


def _second_machine(fleet: Fleet, first: Machine, remote: Path, name: str) -> Machine:
    code = fleet.invite(first, "--person", "alice")
    machine = fleet.join(fleet.machine(name, remote), code, "alice", same_person_as=first)
    machine.git("pull", "--quiet", "--ff-only", "origin", "main")
    return machine


@pytest.fixture
def alice_and_bob(fleet: Fleet, bare_remote: Path) -> tuple[Machine, Machine]:
    laptop, bob = fleet.team(bare_remote, ("alice", "laptop"), ("bob", "desk"))
    share_file([laptop, bob])
    return laptop, bob


def test_personal_lessons_reach_the_persons_second_machine_and_no_one_else(
        alice_and_bob: tuple[Machine, Machine], fleet: Fleet, bare_remote: Path, tmp_path: Path) -> None:
    laptop, bob = alice_and_bob
    early = "Alice keeps her staging token in the keychain, never in .env"
    first = propose(laptop, early, "--scope", "personal", "--tag", "keychain-habit")
    laptop.ok("sync")

    desk = _second_machine(fleet, laptop, bare_remote, "studio")
    assert first not in _ids(desk)  # nothing sealed to it yet
    assert laptop.json("sync")["resealed"] == 1  # the laptop gives the new machine the scope's keys
    desk.ok("sync")
    shown = desk.json("lessons", "show", first)
    assert (shown["scope"], shown["text"], shown["author"], shown["sealed"]) == ("personal", early, "alice", True)

    later = "Alice rebases before lunch so the afternoon review is small"
    second = propose(desk, later, "--scope", "personal")
    desk.ok("sync")
    laptop.ok("sync")
    assert laptop.json("lessons", "show", second)["text"] == later
    assert {first, second} <= _ids(laptop) and {first, second} <= _ids(desk)

    bob.ok("sync")
    assert {first, second}.isdisjoint(_ids(bob))
    assert bob.run("lessons", "show", first).code == 1

    found = sealed.read(bare_remote)
    for key in (bob.key, make_key(fleet.machine("stranger", bare_remote))):
        opened = sealed.opened_with(found, key)
        assert opened == sealed.Opened([], []), "a key that is not alice's opened something"
    for machine in (laptop, desk):
        opened = sealed.opened_with(found, machine.key)
        assert {first, second} <= sealed.lesson_ids(opened)
        assert {early, later} <= sealed.texts(opened)
    for text in (early, later, "keychain-habit", first, second):
        assert not [blob for blob in found.blobs if text.encode() in blob]


def test_a_removed_machine_cannot_open_what_is_sealed_after_it_left(
        fleet: Fleet, bare_remote: Path) -> None:
    laptop = fleet.found(fleet.machine("laptop", bare_remote), "alice")
    share_file([laptop])
    desk = _second_machine(fleet, laptop, bare_remote, "old-desk")
    before = propose(laptop, "Alice's note from before the desk was retired", "--scope", "personal")
    laptop.ok("sync")
    desk.ok("sync")
    assert before in _ids(desk)

    laptop.decided("team", "remove", "alice/old-desk")
    laptop.ok("sync")
    secret = "Alice's new note the retired desk must never read"
    after = propose(laptop, secret, "--scope", "personal")
    laptop.ok("sync")

    desk.run("sync")  # a removed machine still fetches; it writes nothing shared
    assert after not in _ids(desk)
    assert desk.run("lessons", "show", after).code == 1
    found = sealed.read(bare_remote)
    opened = sealed.opened_with(found, desk.key)
    assert before in sealed.lesson_ids(opened)  # what it held before stays readable to it (docs/scopes.md)
    assert after not in sealed.lesson_ids(opened)
    assert secret not in sealed.texts(opened)
    newest = max((r for copies in found.epochs.values() for r in copies), key=lambda r: len(r["wraps"]))
    assert desk.id not in newest["recipients"] and laptop.id in newest["recipients"]
    assert laptop.json("lessons", "show", after)["text"] == secret


def test_a_sealed_project_lesson_is_read_by_the_team_only(trio: list[Machine], fleet: Fleet,
                                                           bare_remote: Path) -> None:
    a, b, c = trio
    text = "The billing retry budget is three attempts; the fourth pages the on-call"
    lesson = propose(a, text, "--sealed", "--tag", "billing-retry-budget")
    plain = propose(a, "This one is an ordinary project lesson")
    a.ok("sync")
    for m in (b, c):
        m.ok("sync")
        shown = m.json("lessons", "show", lesson)
        assert (shown["scope"], shown["text"]) == ("project", text)

    a.decided("project", "confirm", "bob")  # so that bob's review counts here
    a.ok("sync")
    b.ok("sync")
    b.decided("review", "approve", lesson, "--note", "matches-the-billing-runbook")
    b.ok("sync")
    a.ok("sync")
    assert a.json("lessons", "show", lesson)["state"] == "verified"

    found = sealed.read(bare_remote)
    stranger = make_key(fleet.machine("reader-of-the-public-repo", bare_remote))
    assert sealed.opened_with(found, stranger) == sealed.Opened([], [])
    for machine in (a, b, c):
        assert lesson in sealed.lesson_ids(sealed.opened_with(found, machine.key))
    kinds = {p["record"]["type"] for p in sealed.opened_with(found, c.key).records}
    assert kinds == {"lesson", "review"}  # the review of a sealed lesson is sealed too
    for secret in (text, "billing-retry-budget", "matches-the-billing-runbook", lesson):
        assert not [blob for blob in found.blobs if secret.encode() in blob]
    assert [blob for blob in found.blobs if b"This one is an ordinary project lesson" in blob]
    assert plain in _ids(b)
    assert (b.json("lessons", "show", lesson)["sealed"], b.json("lessons", "show", plain)["sealed"]) == (True, False)
    assert "scope: project, sealed" in b.ok("lessons", "show", lesson).out


def test_hive_sealed_makes_project_lessons_sealed_by_default(founder: Machine, bare_remote: Path) -> None:
    a = founder
    a.git("config", "hive.sealed", "true")
    hidden = "Sealed by the repository's default"
    shown = "Written in the clear on purpose"
    propose(a, hidden)
    propose(a, shown, "--no-sealed")
    a.ok("sync")
    found = sealed.read(bare_remote)
    assert not [blob for blob in found.blobs if hidden.encode() in blob]
    assert [blob for blob in found.blobs if shown.encode() in blob]
    assert hidden in sealed.texts(sealed.opened_with(found, a.key))


def test_a_retracted_sealed_lesson_leaves_the_stores(trio: list[Machine], bare_remote: Path) -> None:
    a, b, _ = trio
    text = "A sealed lesson that turns out to be wrong"
    lesson = propose(a, text, "--sealed")
    a.ok("sync")
    b.ok("sync")
    assert b.json("lessons", "show", lesson)["text"] == text
    a.decided("retract", lesson, "--reason", "wrong")
    a.ok("sync")
    b.ok("sync")
    assert b.json("lessons", "show", lesson)["state"] == "retracted"
    assert b.json("lessons", "show", lesson)["text"] is None
    assert text not in sealed.texts(sealed.opened_with(sealed.read(bare_remote), a.key))


def test_team_scope_is_never_sealed(founder: Machine) -> None:
    from testing.machines import one_line_error

    one_line_error(founder.run("lessons", "propose", "--kind", "Gotcha", "--text", "x", "-e", "file:api.proto",
                               "--scope", "team", "--sealed"), "never sealed")


def test_personal_records_pushed_in_the_clear_count_for_no_one_else(
        alice_and_bob: tuple[Machine, Machine]) -> None:
    """A personal lesson is one person's, read on that person's machines: bob's own, pushed unsealed, and one
    he claims is alice's, reach neither alice's index nor (the second) his own."""
    from gitive.store import logs

    laptop, bob = alice_and_bob
    claims = {}
    for person, lesson in (("bob", "c" * 64), ("alice", "d" * 64)):
        record = {"type": "lesson", "id": lesson, "kind": "Preference", "tags": [], "body_hash": "e" * 64,
                  "evidence": [{"kind": "file", "path": "api.proto"}], "hearsay": False}
        logs.append(bob.repo, bob.key, bob.team_id, "personal", {"personal": person}, record)
        claims[person] = record["id"]
    bob.ok("sync")
    laptop.ok("sync")
    assert set(claims.values()).isdisjoint(_ids(laptop))
    assert claims["alice"] not in _ids(bob)


def test_a_new_teammate_reads_the_sealed_project_history_after_one_holder_syncs(
        trio: list[Machine], fleet: Fleet, bare_remote: Path) -> None:
    a, b, c = trio
    text = "Sealed before dave joined"
    lesson = propose(a, text, "--sealed")
    a.ok("sync")
    dave = fleet.join(fleet.machine("d", bare_remote), fleet.invite(a), "dave")
    dave.git("pull", "--quiet", "--ff-only", "origin", "main")
    assert lesson not in _ids(dave)
    resealed = [m.json("sync")["resealed"] for m in (a, b, c)]
    assert resealed.count(1) == 1 and resealed.count(0) == 2  # the first holder by id; the others wait their turn
    dave.ok("sync")
    assert dave.json("lessons", "show", lesson)["text"] == text
