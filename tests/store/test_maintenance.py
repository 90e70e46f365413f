"""Upkeep: gitive's own garbage is pruned on a schedule; nothing of the user's is ever touched."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import time
from pathlib import Path

import pygit2
import pytest

from gitive.cli import fastsync
from gitive.core.ids import blake3_hex
from gitive.store import bodies, maintenance, presence, refs
from testing import fixtures
from testing.bodies import age_loose_objects
from testing.builders import TEAM_ID, machine
from testing.machines import Fleet, Machine

OWNER = machine("owner")


def _git(repo: Path, *args: str, check: bool = True) -> str:
    return fixtures.run_git(list(args), cwd=repo, check=check)


def _exists(repo: Path, oid: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", oid], cwd=repo, capture_output=True).returncode == 0


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, pygit2.Repository]:
    """A user's clone with history, a stash, work only its reflog reaches, and dangling objects."""
    path = fixtures.init_repo(tmp_path / "project")
    fixtures.commit_file(path, "a.txt", "one\n", "first")
    fixtures.commit_file(path, "a.txt", "two\n", "second")
    (path / "a.txt").write_text("stashed work\n")
    _git(path, "stash", "push", "-q", "-m", "wip")
    fixtures.commit_file(path, "b.txt", "undone\n", "undone commit")
    _git(path, "reset", "-q", "--hard", "HEAD~1")  # "undone commit" now only in the HEAD reflog
    return path, pygit2.Repository(str(path))


def _user_objects(path: Path) -> dict[str, str]:
    proc = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=path, input=b"a blob the user staged once\n",
                          capture_output=True, check=True)
    (path / "a.txt").write_text("dropped stash\n")
    _git(path, "stash", "push", "-q", "-m", "dropped")
    dropped = _git(path, "rev-parse", "stash@{0}").strip()
    _git(path, "stash", "drop", "-q")
    return {
        "branch": _git(path, "rev-parse", "main").strip(),
        "stash": _git(path, "rev-parse", "stash@{0}").strip(),
        "reflogged": _git(path, "rev-parse", "HEAD@{1}").strip(),
        "dangling-blob": proc.stdout.decode().strip(),
        "dropped-stash": dropped,
    }


def _garbage(repo: pygit2.Repository, n: int = 30) -> list[str]:
    """Write ``n`` bodies one by one (each rewrite leaves the previous snapshot unreachable), then drop one."""
    old = []
    for i in range(n):
        data = f"garbage body {i}".encode()
        bodies.put(repo, OWNER.key, TEAM_ID, blake3_hex(data), data)
        old.append(refs.tip(repo, refs.bodies_ref(OWNER.id)))
    presence.publish(repo, OWNER.key, TEAM_ID, b'{"a":1}')
    presence.publish(repo, OWNER.key, TEAM_ID, b'{"a":2}')
    bodies.delete(repo, OWNER.key, TEAM_ID, [blake3_hex(b"garbage body 0")])
    return old


def test_upkeep_deletes_gitive_garbage_and_nothing_of_the_users(project) -> None:
    path, repo = project
    user = _user_objects(path)
    old_snapshots = _garbage(repo)
    retracted_blob = str(repo.create_blob(b"garbage body 0"))
    age_loose_objects(path / ".git")
    result = maintenance.upkeep(repo, force=True)
    assert result.pruned > 60  # old snapshot commits, their root and folder trees, old presence
    assert not any(_exists(path, c) for c in old_snapshots[:-1])
    assert not _exists(path, retracted_blob)
    for what, oid in user.items():
        assert _exists(path, oid), f"the user's {what} was deleted"
    assert _git(path, "fsck", "--no-dangling", "--connectivity-only", check=True) is not None
    assert bodies.hashes(repo, OWNER.id) == sorted(blake3_hex(f"garbage body {i}".encode()) for i in range(1, 30))


def test_upkeep_keeps_garbage_younger_than_the_grace_period(project) -> None:
    path, repo = project
    old_snapshots = _garbage(repo, 5)
    result = maintenance.upkeep(repo, force=True)
    assert result.pruned == 0 and all(_exists(path, c) for c in old_snapshots)  # a writer may still use them


def test_gc_prunes_at_once_even_what_was_packed_before_it_became_garbage(project) -> None:
    path, repo = project
    user = _user_objects(path)
    data = b"packed, then retracted"
    bodies.put(repo, OWNER.key, TEAM_ID, blake3_hex(data), data)
    _git(path, "repack", "-a", "-d", "-q")  # the body is in a pack now
    bodies.delete(repo, OWNER.key, TEAM_ID, [blake3_hex(data)])
    blob = str(pygit2.hash(data))
    assert _exists(path, blob)
    past = time.time() - 60  # written a minute ago: gc keeps only what is younger than ten seconds
    for pack in (path / ".git" / "objects" / "pack").iterdir():
        os.utime(pack, (past, past))
    age_loose_objects(path / ".git", 60)
    result = maintenance.prune(repo)
    assert result.pruned > 0 and not _exists(path, blob)
    for what, oid in user.items():
        assert _exists(path, oid), f"the user's {what} was deleted"


def test_the_schedule_follows_growth_not_an_absolute_count(project, monkeypatch: pytest.MonkeyPatch) -> None:
    _path, repo = project
    monkeypatch.setattr(maintenance, "UPKEEP_LOOSE_GROWTH", 300)
    # the user's own loose objects, which upkeep must not delete, are over the threshold on their own
    for i in range(3 * 300):
        repo.create_blob(f"user blob {i}".encode())  # unreachable: the user's garbage, kept by upkeep
    assert maintenance.due(repo)
    first = maintenance.upkeep(repo)
    assert first.packed and first.after.loose_objects > 300
    assert maintenance.last_upkeep(repo)["loose_objects"] == first.after.loose_objects
    assert not maintenance.due(repo)  # still many loose objects, but none since upkeep: no repack again
    assert not maintenance.upkeep(repo).packed


def _fast(m: Machine, monkeypatch: pytest.MonkeyPatch) -> int | None:
    monkeypatch.setenv("GITIVE_HOME", str(m.home))
    monkeypatch.chdir(m.clone)
    with contextlib.redirect_stdout(io.StringIO()):
        return fastsync.try_noop(["sync"])


def test_after_many_writes_a_no_op_sync_stays_on_the_fast_path(tmp_path: Path, bare_remote: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # A lower threshold keeps the test short; benchmarks/store.py checks 10,000 writes at the real one.
    monkeypatch.setattr(maintenance, "UPKEEP_LOOSE_GROWTH", 400)
    (alice,) = Fleet(tmp_path / "fleet").team(bare_remote, ("alice", "lap"))
    repo, key, team = alice.repo, alice.key, alice.team_id
    for i in range(300):  # presence rewrites: each leaves three objects unreachable
        presence.publish(repo, key, team, f'{{"n":{i}}}'.encode())
    age_loose_objects(alice.clone / ".git")
    assert maintenance.due(repo) and _fast(alice, monkeypatch) is None  # upkeep due: the full command runs
    assert alice.json("sync")["packed"] is True
    assert maintenance.last_upkeep(repo)["pruned"] >= 890
    assert not maintenance.due(repo)
    assert _fast(alice, monkeypatch) == 0  # the no-op sync does not repack again
    assert alice.json("sync")["packed"] is False


def test_doctor_reports_a_local_remote_nobody_packs(tmp_path: Path, bare_remote: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (alice,) = Fleet(tmp_path / "fleet").team(bare_remote, ("alice", "lap"))
    remote = pygit2.Repository(str(bare_remote))
    for i in range(600):
        remote.create_blob(f"pushed object {i}".encode())  # small pushes arrive as loose objects
    monkeypatch.setattr(maintenance, "LOOSE_OBJECTS_PACK_THRESHOLD", 100)
    monkeypatch.setattr(maintenance, "GIT_GC_AUTO", 300)
    seen = maintenance.remote_upkeep(str(bare_remote))
    assert seen is not None and seen.auto_gc and seen.unpacked  # auto gc is on, yet it has not run
    _git(bare_remote, "config", "receive.autogc", "false")
    problems = alice.run("doctor", "--json").json()["problems"]
    [found] = [p for p in problems if p["kind"] == "remote-unpacked"]
    assert "auto gc is off" in found["detail"] and "git gc" in found["hint"]
    _git(bare_remote, "gc", "--quiet", "--prune=now")  # what its admin would run
    assert "remote-unpacked" not in [p["kind"] for p in alice.run("doctor", "--json").json()["problems"]]
    assert maintenance.remote_upkeep("https://example.invalid/team.git") is None  # a hosted remote: unseen
