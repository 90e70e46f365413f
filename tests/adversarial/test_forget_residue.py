"""Forgetting leaves no residue (issue 23, seen item 6): the attacker reads the disk, not gitive.

Someone who later gets a copy of a teammate's ``.git`` (a stolen laptop, a backup, a support bundle) reads
every byte: the index file, its WAL, every object git still holds, reachable or not. After a retraction and
one sync by each machine, none of them may hold the author's text or a reviewer's edit, nor the search
index's words for them. On the remote, nothing reachable may hold it; what the host's own garbage collection
must still drop (gitive says so at ``retract``) is checked after a ``git gc`` as the host would run it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from testing import teams
from testing.lessons import confirmed, index_db, restored_trio, reviewed_with_edit
from testing.machines import Machine
from testing.residue import file_hits, object_hits, ref_hits

ORIGINAL = "Customer zebracorpq still calls the legacy endpoint"
EDIT = "Customer wombatdraxx still calls the legacy v1 endpoint"
# The words the search index stores for them (lowercased, as FTS5's unicode61 tokenizer writes its terms)
NEEDLES = [ORIGINAL, EDIT, "zebracorpq", "wombatdraxx"]


@pytest.fixture
def trio(place: teams.Place) -> list[Machine]:
    """alice a, bob b and carol c sharing ``api.proto`` (restored, not founded again: ``testing.lessons``)."""
    return restored_trio(place)


@pytest.fixture
def bare_remote(place: teams.Place) -> Path:
    return place.live / teams.REMOTE


def _residue(machines: list[Machine], remote: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for m in machines:
        for where, hits in ((f"{m.name}: files in .git", file_hits(m.clone / ".git", NEEDLES)),
                            (f"{m.name}: files in GITIVE_HOME", file_hits(m.home, NEEDLES)),
                            (f"{m.name}: objects", object_hits(m.clone / ".git", NEEDLES))):
            if hits:
                found[where] = hits
    if ref_hits(remote, NEEDLES):
        found["remote: reachable"] = ref_hits(remote, NEEDLES)
    return found


def test_one_sync_after_a_retraction_leaves_no_byte_of_the_text_on_any_machine(
        trio: list[Machine], bare_remote: Path) -> None:
    a, b, c = trio
    lesson = reviewed_with_edit(trio, ORIGINAL, EDIT)
    before = _residue(trio, bare_remote)
    for m in trio:  # the texts are really there to be found: in the index and in git, on every machine
        assert f"{m.name}: files in .git" in before and f"{m.name}: objects" in before, before

    confirmed(a, "retract", lesson, "--reason", "names a customer", prompt="Retract it for everyone?")
    for m in (a, b, c):  # one sync each: the tombstone reaches b and c, b drops its edit and pushes
        m.ok("sync")

    assert _residue(trio, bare_remote) == {}
    # What the remote still holds is unreachable: the host's own gc drops it (NOT_ERASED says so)
    subprocess.run(["git", "gc", "--quiet", "--prune=now"], cwd=bare_remote, check=True)
    assert object_hits(bare_remote, NEEDLES) == {}
    for m in trio:
        shown = m.json("lessons", "show", lesson)
        assert (shown["state"], shown["text"]) == ("retracted", None)


def test_a_late_re_push_of_a_retracted_body_is_refused_every_time(trio: list[Machine], bare_remote: Path) -> None:
    """Bob's agent, with a shell and bob's machine key, saved the bodies before the retraction and writes
    them back into bob's own (genuinely signed, newer) body store after it and pushes that by hand, three
    times: each time the readers neither show the text nor keep its bytes."""
    from gitive.store import bodies
    from testing.bodies import held_anywhere

    a, b, c = trio
    lesson = reviewed_with_edit(trio, ORIGINAL, EDIT)
    hashes = [c.json("lessons", "show", lesson)["body_hash"]]
    with index_db(b) as conn:
        hashes += [h for (h,) in conn.execute("SELECT edits FROM reviews WHERE about = ? AND edits IS NOT NULL",
                                              (lesson,))]
    saved = {h: held_anywhere(b.repo, h) for h in hashes}
    assert len(saved) == 2 and all(saved.values()), saved  # the author's body and bob's edit, bytes in hand

    confirmed(a, "retract", lesson, "--reason", "names a customer", prompt="Retract it for everyone?")
    for m in (a, b, c):
        m.ok("sync")
    tries, accepted = 0, 0
    for hashes in ([*saved][:1], [*saved][1:], [*saved]):
        bodies.delete(b.repo, b.key, b.team_id, [*saved])  # each round writes a newer version than the last
        assert bodies.put_many(b.repo, b.key, b.team_id, {h: saved[h] for h in hashes})  # a newer, signed store
        ref = f"refs/hive/bodies/{b.id}"
        b.git("push", "--quiet", "origin", f"+{ref}:{ref}")  # by hand: bob's own sync would drop them again
        assert ref_hits(bare_remote, NEEDLES)  # the remote took it: readers are the last line
        for m in (a, c):
            m.ok("sync")
        tries += 1
        residue = {k: v for k, v in _residue([a, c], bare_remote).items() if not k.startswith("remote")}
        texts = [m.json("lessons", "show", lesson)["text"] for m in (a, c)]
        accepted += bool(residue) or texts != [None, None]
    assert (tries, accepted) == (3, 0)
