"""Retraction is replicated forgetting: a signed tombstone, bodies dropped everywhere, late copies refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from gitive.index import lesson_text
from gitive.lessons.retract import NOT_ERASED
from gitive.store import bodies, logs, refs
from testing import fixtures
from testing.bodies import age_loose_objects, blob_of, held_anywhere
from testing.lessons import PASSPHRASE_ANSWER, as_person, confirmed, hive_tips, index_db, propose
from testing.machines import Machine

RETRACT_PROMPT = "Retract it for everyone?"


def _retract(machine: Machine, lesson: str, reason: str = "leaked a customer name") -> str:
    return confirmed(machine, "retract", lesson, "--reason", reason, prompt=RETRACT_PROMPT)


def _assert_forgotten(machine: Machine, lesson: str, hashes: list[str]) -> None:
    """No body store (own or fetched) and no index table on ``machine`` holds the lesson's text any more."""
    for h in hashes:
        assert held_anywhere(machine.repo, h) is None, f"{machine.name} still has body {h[:12]}"
    _assert_index_forgot(machine, lesson, hashes)


def _assert_index_forgot(machine: Machine, lesson: str, hashes: list[str]) -> None:
    """A reader (``show``, which brings the index up to date first) and the index tables have no text."""
    shown = machine.json("lessons", "show", lesson)
    assert (shown["state"], shown["text"], shown["original_text"]) == ("retracted", None, None)
    assert shown["retraction"]["reason"]
    with index_db(machine) as conn:
        for h in hashes:
            assert conn.execute("SELECT 1 FROM lesson_bodies WHERE body_hash = ?", (h,)).fetchone() is None
        assert conn.execute("SELECT 1 FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone() is None
        # No search row outlives its lesson's text: the index holds terms only of shown lessons' rows.
        assert lesson_text.indexed_rows(conn) == {r for (r,) in conn.execute("SELECT fts_rowid FROM lesson_text")}


def _has_text(machine: Machine, lesson: str, hashes: list[str]) -> None:
    for h in hashes:
        assert held_anywhere(machine.repo, h) is not None, f"{machine.name} lacks body {h[:12]}"
    with index_db(machine) as conn:
        row = conn.execute("SELECT fts_rowid FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone()
        assert row and row[0] in lesson_text.indexed_rows(conn)
    assert machine.json("lessons", "show", lesson)["text"]


def test_author_retraction_reaches_every_machine_and_late_copies_are_refused(
        trio: list[Machine], bare_remote: Path) -> None:
    a, b, c = trio
    text = "The staging database password is hunter2"
    lesson = propose(a, text)
    body_hash = a.json("lessons", "show", lesson)["body_hash"]
    data = held_anywhere(a.repo, body_hash)
    assert data is not None
    for m in (a, b, c):
        m.ok("sync")
    for m in (a, b, c):
        _has_text(m, lesson, [body_hash])

    out = _retract(a, lesson)
    assert "retracted" in out
    assert " ".join(NOT_ERASED.split()) in " ".join(out.split())  # copies outside gitive are not erased
    for m in (a, b, c):  # one sync round, in order
        m.ok("sync")
    for m in (a, b, c):
        _assert_forgotten(m, lesson, [body_hash])
    assert held_anywhere(pygit2.Repository(str(bare_remote)), body_hash) is None  # nor does the remote serve it

    # a peer that kept a copy (an old client) puts the body back and pushes it: every reader refuses it
    bodies.put(c.repo, c.key, c.team_id, body_hash, data)
    c.git("push", "--quiet", "--force", "origin", f"{refs.bodies_ref(c.id)}:{refs.bodies_ref(c.id)}")
    for m in (a, b):
        m.ok("sync")
        shown = m.json("lessons", "show", lesson)
        assert (shown["state"], shown["text"]) == ("retracted", None)
        with index_db(m) as conn:
            assert conn.execute("SELECT 1 FROM lesson_bodies WHERE body_hash = ?", (body_hash,)).fetchone() is None
            assert conn.execute("SELECT 1 FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone() is None
    assert c.json("lessons", "show", lesson)["text"] is None
    b.ok("index", "rebuild")  # a reader that rebuilds its index from refs still refuses the copy
    assert b.json("lessons", "show", lesson)["text"] is None
    assert a.json("lessons", "list", "--state", "retracted")[0]["text"] is None
    # and C's own next sync drops the copy from its store again, so the remote stops serving it
    c.ok("sync")
    assert body_hash not in bodies.hashes(c.repo, c.id)
    assert held_anywhere(pygit2.Repository(str(bare_remote)), body_hash) is None


def test_reviewer_retraction_drops_the_author_body_and_the_reviewer_edit(trio: list[Machine]) -> None:
    a, b, c = trio
    lesson = propose(a, "Customer acme uses the legacy endpoint")
    code, out = as_person(a, "project", "confirm", "bob", answers=[("Confirm bob", "y\n"), PASSPHRASE_ANSWER])
    assert code == 0, out
    a.ok("sync")
    b.ok("sync")
    confirmed(b, "review", "approve", lesson, "--text", "Customer ACME Corp uses the legacy endpoint")
    for m in (b, a, c):
        m.ok("sync")
    shown = c.json("lessons", "show", lesson)
    assert (shown["state"], shown["text"]) == ("verified", "Customer ACME Corp uses the legacy endpoint")
    hashes = [shown["body_hash"]]
    with index_db(c) as conn:
        hashes += [r[0] for r in conn.execute("SELECT edits FROM reviews WHERE about = ? AND edits IS NOT NULL",
                                              (lesson,))]
    assert len(hashes) == 2
    for m in (a, b, c):
        _has_text(m, lesson, hashes)

    _retract(b, lesson, "names a customer")
    # at once on B: its index forgets the text and its own body store drops its edit
    _assert_index_forgot(b, lesson, hashes)
    assert hashes[1] not in bodies.hashes(b.repo, b.id)
    for m in (b, a, c):  # the tombstone travels B -> A; A drops the body it serves; C sees both
        m.ok("sync")
    for m in (a, c):
        _assert_forgotten(m, lesson, hashes)
    # B still holds what it last fetched of A's body store (and of its own, as last pushed) until it fetches
    # again: the author's machine is the only one that can rewrite the author's store
    b.ok("sync")
    _assert_forgotten(b, lesson, hashes)


def test_retraction_by_someone_else_is_refused_and_writes_nothing(trio: list[Machine]) -> None:
    a, _, c = trio
    lesson = propose(a, "Deploys go out on Tuesdays")
    for m in (a, c):
        m.ok("sync")
    before = hive_tips(c)
    code, out = as_person(c, "retract", lesson, "--reason", "I do not like it", answers=[])
    assert code == 1, out
    assert RETRACT_PROMPT not in out  # refused before anyone is asked to confirm
    assert "only the lesson's author, a reviewer of it, or the project's owner may retract it" in out
    assert hive_tips(c) == before
    assert c.json("lessons", "show", lesson)["state"] == "proposed"


def test_a_tombstone_signed_without_the_right_is_ignored_by_readers(trio: list[Machine]) -> None:
    a, b, c = trio
    lesson = propose(a, "Deploys go out on Tuesdays")
    a.ok("sync")
    c.ok("sync")
    shown = c.json("lessons", "show", lesson)
    # C writes a tombstone itself, past the CLI's check, and publishes it
    logs.append(c.repo, c.key, c.team_id, "project", {"project": shown["project"]},
                {"type": "tombstone", "lesson": lesson, "reason": "forged", "bodies": [shown["body_hash"]]})
    c.ok("sync")
    for m in (a, b, c):
        m.ok("sync")
        shown = m.json("lessons", "show", lesson)
        assert (shown["state"], shown["retraction"]) == ("proposed", None)
        assert shown["text"] == "Deploys go out on Tuesdays"
    assert held_anywhere(a.repo, shown["body_hash"]) is not None


def test_the_project_owner_may_retract_a_members_lesson(trio: list[Machine]) -> None:
    a, b, c = trio
    lesson = propose(b, "Deploys go out on Tuesdays")
    b.ok("sync")
    a.ok("sync")
    _retract(a, lesson, "wrong")
    for m in (a, b, c, a):  # B, the author, drops its body when the tombstone reaches it; A fetches that
        m.ok("sync")
    for m in (a, b, c):
        _assert_forgotten(m, lesson, [m.json("lessons", "show", lesson)["body_hash"]])


def test_retract_twice_is_refused(founder: Machine) -> None:
    lesson = propose(founder, "Deploys go out on Tuesdays")
    _retract(founder, lesson)
    code, out = as_person(founder, "retract", lesson, "--reason", "again", answers=[(RETRACT_PROMPT, "y\n"), PASSPHRASE_ANSWER])
    assert code == 1, out
    assert "already retracted" in out



def _body_blob(machine: Machine, body_hash: str) -> str:
    return blob_of(pygit2.Repository(str(machine.clone)), machine.id, body_hash)


def test_gc_removes_a_retracted_body_blob_from_the_object_database(founder: Machine) -> None:
    a = founder
    lesson = propose(a, "The staging database password is hunter2")
    body_hash = a.json("lessons", "show", lesson)["body_hash"]
    blob = _body_blob(a, body_hash)
    a.ok("sync")
    _retract(a, lesson)
    a.ok("sync")
    assert held_anywhere(a.repo, body_hash) is None
    # the retraction's own catch-up already deleted the retracted blob from disk (issue 23), not only from refs
    assert subprocess.run(["git", "cat-file", "-e", blob], cwd=a.clone, capture_output=True).returncode != 0
    age_loose_objects(a.clone / ".git", 60)  # the lesson was written a minute ago (gc keeps the last 10 s)
    done = a.json("gc")
    assert done["pruned"]  # the snapshot commits and trees that held it
    assert subprocess.run(["git", "cat-file", "-e", blob], cwd=a.clone, capture_output=True).returncode != 0
    # what the user's own refs reach survives, and the hive still reads
    assert fixtures.run_git(["rev-parse", "--verify", "main"], cwd=a.clone).strip()
    assert a.json("lessons", "show", lesson)["state"] == "retracted"
