"""Retraction forgets every derived body everywhere (issue 8 item 2, docs/verification.md §5).

Three clones and the remote. The author's body, a reviewer's edit made before the retraction, and a
reviewer's edit made after it but before the tombstone reached the reviewer: after retraction and syncs, no
object reachable from any ref (or reflog) of any of the four repositories holds any of the three texts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testing import teams
from testing.bodies import reachable_text
from testing.lessons import confirmed, index_db, restored_trio, reviewed_with_edit
from testing.machines import Machine

ORIGINAL = "Customer zebracorp-4471 still calls the legacy endpoint"
EDIT = "Customer zebracorp-4471 (Zebra Corp) still calls the legacy v1 endpoint"
LATE_EDIT = "Customer zebracorp-4471 calls the legacy endpoint, late-edit-9931"
TEXTS = [ORIGINAL, EDIT, LATE_EDIT]


@pytest.fixture
def trio(place: teams.Place) -> list[Machine]:
    """alice a, bob b and carol c sharing ``api.proto`` (restored, not founded again: ``testing.lessons``)."""
    return restored_trio(place)


@pytest.fixture
def bare_remote(place: teams.Place) -> Path:
    return place.live / teams.REMOTE


def _git_dirs(machines: list[Machine], remote: Path) -> list[str]:
    return [str(m.clone / ".git") for m in machines] + [str(remote)]


def _found(machines: list[Machine], remote: Path) -> dict[str, list[str]]:
    out = {}
    for git_dir in _git_dirs(machines, remote):
        hits = reachable_text(git_dir, TEXTS)
        if hits:
            out[git_dir] = sorted({text for _, text in hits})
    return out


def test_retraction_leaves_no_derived_text_reachable_in_any_clone_or_the_remote(
        trio: list[Machine], bare_remote: Path) -> None:
    a, b, c = trio
    lesson = reviewed_with_edit(trio, ORIGINAL, EDIT)
    assert c.json("lessons", "show", lesson)["text"] == EDIT
    assert set(_found(trio, bare_remote)) == set(_git_dirs(trio, bare_remote))  # the texts are really there

    confirmed(a, "retract", lesson, "--reason", "names a customer", prompt="Retract it for everyone?")
    # Bob edits again before the tombstone reaches him, and publishes that edit; then everyone syncs
    confirmed(b, "review", "approve", lesson, "--text", LATE_EDIT)
    b.ok("sync")
    assert LATE_EDIT in [t for _, t in reachable_text(str(bare_remote), TEXTS)]
    for _ in range(2):  # the tombstone spreads, then the rewritten stores and the pins that follow them
        for m in (a, c, b):
            m.ok("sync")

    assert _found(trio, bare_remote) == {}
    for m in trio:
        shown = m.json("lessons", "show", lesson)
        assert (shown["state"], shown["text"], shown["original_text"]) == ("retracted", None, None)
        with index_db(m) as conn:
            assert conn.execute("SELECT count(*) FROM lesson_bodies WHERE lesson = ?", (lesson,)).fetchone() == (0,)
            refused = {r[0] for r in conn.execute("SELECT body_hash FROM refused_bodies WHERE lesson = ?", (lesson,))}
        assert len(refused) == 3  # the body and both edits, the late one included
    # and a rebuilt index, from refs alone, agrees
    b.ok("index", "rebuild")
    assert b.json("lessons", "show", lesson)["text"] is None
