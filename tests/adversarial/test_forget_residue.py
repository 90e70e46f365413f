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

from testing.lessons import PASSPHRASE_ANSWER, as_person, confirmed, propose
from testing.machines import Fleet, Machine
from testing.residue import file_hits, object_hits, ref_hits

ORIGINAL = "Customer zebracorpq still calls the legacy endpoint"
EDIT = "Customer wombatdraxx still calls the legacy v1 endpoint"
# The words the search index stores for them (lowercased, as FTS5's unicode61 tokenizer writes its terms)
NEEDLES = [ORIGINAL, EDIT, "zebracorpq", "wombatdraxx"]


@pytest.fixture
def trio(tmp_path: Path, bare_remote: Path) -> list[Machine]:
    from tests.lessons.conftest import share_file

    machines = Fleet(tmp_path / "fleet").team(bare_remote, ("alice", "a"), ("bob", "b"), ("carol", "c"))
    share_file(machines)
    return machines


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
    lesson = propose(a, ORIGINAL)
    code, out = as_person(a, "project", "confirm", "bob", answers=[("Confirm bob", "y\n"), PASSPHRASE_ANSWER])
    assert code == 0, out
    for m in (a, b):
        m.ok("sync")
    confirmed(b, "review", "approve", lesson, "--text", EDIT)
    for m in (b, a, c):
        m.ok("sync")
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
