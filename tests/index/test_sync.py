"""``gitive sync``: what it pushes, how it reports refusals, and the repository upkeep it does."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.store import maintenance, refs
from testing import fixtures
from testing.machines import Machine, note


def test_sync_with_nothing_new_pushes_nothing(pair: tuple[Machine, Machine], bare_remote: Path) -> None:
    alice, _ = pair
    remote_before = fixtures.ref_tips(bare_remote)
    report = alice.json("sync")
    assert report["pushed"] == {"origin": []}
    assert report["fetched"] == {"origin": 0}
    assert report["received"] == 0 and report["problems"] == []
    assert report["rejected"] == [] and report["unreachable"] == {}
    assert report["ok"] is True and report["packed"] is False
    assert fixtures.ref_tips(bare_remote) == remote_before


def test_sync_pushes_only_this_machines_own_refs(pair: tuple[Machine, Machine], bare_remote: Path) -> None:
    alice, bob = pair
    bob.append(note(1, alice.id))
    bob.ok("sync")
    alice.append(note(2, alice.id))
    report = alice.json("sync")
    assert report["pushed"] == {"origin": [refs.log_ref(alice.id, "team")]}
    assert report["received"] == 2  # bob's entry, and alice's own that the index had not seen yet
    served = set(fixtures.ref_tips(bare_remote, "refs/hive/"))
    assert {refs.log_ref(m.id, "team") for m in (alice, bob)} <= served
    assert all(r.startswith((f"refs/hive/logs/{alice.id}/", f"refs/hive/logs/{bob.id}/")) for r in served)
    assert not [r for r in fixtures.ref_tips(bare_remote) if r.startswith(("refs/hive-", "refs/remotes/"))]
    # alice holds bob's refs (fetched and pinned) but never wrote them under refs/hive/
    assert not [r for r in fixtures.ref_tips(alice.clone, "refs/hive/") if bob.id in r]
    assert refs.pinned_ref(bob.id, "team") in fixtures.ref_tips(alice.clone)


def test_push_refused_by_the_remote_is_one_line_and_exit_1(pair: tuple[Machine, Machine],
                                                            bare_remote: Path) -> None:
    alice, _ = pair
    ours = refs.log_ref(alice.id, "roster")
    before = fixtures.ref_tips(bare_remote)[ours]
    hook = bare_remote / "hooks" / "pre-receive"  # a server that refuses every update, with its reason
    hook.parent.mkdir(exist_ok=True)
    hook.write_text("#!/bin/sh\necho 'refs are frozen on this server' >&2\nexit 1\n")
    hook.chmod(0o755)
    alice.decided("invite", "--no-push")  # a new entry of alice's for the server to refuse
    local = refs.tip(alice.repo, ours)

    result = alice.run("sync")
    assert result.code == 1, str(result)
    assert "Traceback" not in result.out + result.err
    naming = [ln for ln in (result.out + result.err).splitlines() if ours in ln]
    assert len(naming) == 1 and "origin" in naming[0], str(result)
    assert fixtures.ref_tips(bare_remote)[ours] == before  # nothing moved
    assert refs.tip(alice.repo, ours) == local  # and alice's own log is untouched

    report = alice.run("sync", "--json")
    assert report.code == 1
    [rejected] = report.json()["rejected"]
    assert rejected["remote"] == "origin" and rejected["ref"] == ours and rejected["reason"]
    assert report.json()["ok"] is False


def test_sync_no_push_only_fetches(pair: tuple[Machine, Machine], bare_remote: Path) -> None:
    alice, _ = pair
    alice.append(note(1, alice.id))
    report = alice.json("sync", "--no-push")
    assert report["pushed"] == {}
    assert refs.log_ref(alice.id, "team") not in fixtures.ref_tips(bare_remote)


def test_sync_over_two_remotes_reports_each(pair: tuple[Machine, Machine], make_bare) -> None:
    alice, _ = pair
    mirror = make_bare("mirror.git")
    alice.git("remote", "add", "mirror", str(mirror))
    alice.git("config", "--add", "remote.mirror.fetch", "+refs/hive/*:refs/hive-remotes/mirror/*")
    report = alice.json("sync")  # a remote with the hive refspec syncs: no other setting needed
    assert set(report["fetched"]) == {"origin", "mirror"}
    assert report["pushed"]["origin"] == []
    assert report["pushed"]["mirror"] == [refs.log_ref(alice.id, "roster")]
    assert fixtures.ref_tips(mirror)[refs.log_ref(alice.id, "roster")] == refs.tip(
        alice.repo, refs.log_ref(alice.id, "roster"))


def _fill_until_loose(machine: Machine, founder: str, limit: int = 400) -> int:
    """Append entries until the loose-object estimate (a sample of fan-out directories) is above zero."""
    n = 0
    while maintenance.health(machine.repo).loose_objects == 0:
        n += 1
        assert n <= limit, "no loose object landed in the sampled fan-out directory"
        machine.append(note(n, founder))
    return n


def _loose(machine: Machine) -> set[str]:
    objects = machine.clone / ".git" / "objects"
    return {d.name + f.name for d in objects.glob("[0-9a-f][0-9a-f]") for f in d.iterdir()}


def _unreachable(machine: Machine) -> set[str]:
    out = machine.git("fsck", "--unreachable", "--no-progress")
    return {line.split()[-1] for line in out.splitlines() if line.startswith("unreachable ")}


def _all_objects(machine: Machine) -> set[str]:
    out = machine.git("cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(out.split())


def test_sync_packs_and_keeps_every_user_commit(pair: tuple[Machine, Machine],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    alice, _ = pair
    # the user's own work: a branch, a commit on main, and an object no ref reaches
    alice.git("checkout", "--quiet", "-b", "feature")
    for i in range(3):
        fixtures.commit_file(alice.clone, f"f{i}.txt", f"{i}\n")
    alice.git("checkout", "--quiet", "main")
    fixtures.commit_file(alice.clone, "main.txt", "m\n")
    dangling = fixtures.run_git(["hash-object", "-w", "--stdin"], cwd=alice.clone, input=b"dangling\n").strip()
    _fill_until_loose(alice, alice.id)
    user_commits = set(alice.git("rev-list", "--branches", "--tags").split())
    reachable = set(alice.git("rev-list", "--all").split())
    objects, loose = _all_objects(alice), _loose(alice)

    monkeypatch.setattr(maintenance, "UPKEEP_LOOSE_GROWTH", 0)
    monkeypatch.setattr(maintenance, "LOOSE_REFS_PACK_THRESHOLD", 0)
    report = alice.json("sync")
    assert report["packed"] is True
    left = _loose(alice)
    assert len(left) < len(loose) // 10
    assert left <= _unreachable(alice)  # everything a ref reaches is packed; the rest is kept loose
    assert dangling in left
    assert maintenance.health(alice.repo).loose_refs == 0
    assert list((alice.clone / ".git" / "objects" / "pack").glob("*.pack"))

    assert set(alice.git("rev-list", "--branches", "--tags").split()) == user_commits
    assert reachable <= set(alice.git("rev-list", "--all").split())
    assert objects <= _all_objects(alice)  # nothing deleted, not even the unreachable blob
    assert alice.git("cat-file", "-p", dangling) == "dangling\n"
    fsck = fixtures.run_git(["fsck", "--full", "--no-dangling"], cwd=alice.clone)
    assert "error" not in fsck and "missing" not in fsck
    # packed refs still work for gitive: append (compare-and-swap on a packed ref) and sync again
    alice.append(note("after packing", alice.id))
    assert alice.json("sync")["pushed"] == {"origin": [refs.log_ref(alice.id, "team")]}
    assert alice.git("status", "--porcelain") == ""


def test_sync_does_not_pack_below_the_thresholds(pair: tuple[Machine, Machine]) -> None:
    alice, _ = pair
    _fill_until_loose(alice, alice.id)
    loose = maintenance.health(alice.repo)
    assert not maintenance.due(alice.repo)
    assert alice.json("sync")["packed"] is False
    assert maintenance.health(alice.repo).loose_objects == loose.loose_objects


def test_sync_says_what_the_changed_refs_hold_when_no_entry_came(pair: tuple[Machine, Machine]) -> None:
    """A teammate's presence moved: "fetched 1 changed refs ...; received 0 new entries" read as a contradiction."""
    from gitive.core import canonical
    from gitive.store import presence

    alice, bob = pair
    for at in (1, 2):
        snap = {"v": 1, "person": "bob", "machine": bob.id, "at": at, "sessions": {}}
        assert presence.publish(bob.repo, bob.key, bob.team_id, canonical.dumps(snap))
        bob.ok("sync")
        if at == 1:
            assert "changed refs from 1 remote(s) (1 presence); received 0 new entries" in alice.ok("sync").out
        else:
            report = alice.json("sync")
            assert report["received"] == 0 and report["moved"] == {"presence": 1}
    bob.append(note(3, alice.id))
    bob.ok("sync")
    assert "fetched 1 changed refs from 1 remote(s) (1 logs); received 1 new entries" in alice.ok("sync").out
