"""``gitive doctor``: every problem is reported with a hint, and the exit code says whether there is one."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.index import store_doctor
from gitive.store import maintenance, refs
from testing.machines import Fleet, Machine, entry_commit, note, push_commit, signed_entry


@pytest.fixture
def alice(fleet: Fleet, bare_remote: Path) -> Machine:
    return fleet.found(fleet.machine("laptop", bare_remote), "alice")


def test_doctor_on_a_healthy_team_exits_0(alice: Machine) -> None:
    assert {k: v for k, v in alice.json("doctor").items() if k in ("ok", "problems")} == {"ok": True, "problems": []}
    result = alice.ok("doctor")
    assert "no problems" in result.out


def test_doctor_reports_a_remote_that_does_not_fetch_hive_refs(alice: Machine) -> None:
    alice.git("config", "--unset", "remote.origin.fetch", "refs/hive")
    result = alice.run("doctor", "--json")
    assert result.code == 1
    [problem] = result.json()["problems"]
    assert problem["kind"] == "missing-refspec" and "origin" in problem["where"]
    assert "+refs/hive/*:refs/hive-remotes/origin/*" in problem["hint"]
    human = alice.run("doctor")
    assert human.code == 1 and "missing-refspec" in human.out and "git config --add" in human.out
    alice.git("config", "--add", "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*")
    assert alice.run("doctor").code == 0


def test_doctor_reports_a_remote_added_after_init(alice: Machine, make_bare) -> None:
    alice.git("remote", "add", "upstream", str(make_bare("upstream.git")))
    problems = alice.run("doctor", "--json").json()["problems"]
    assert [(p["kind"], p["where"].rsplit(":", 1)[-1]) for p in problems] == [("missing-refspec", "upstream")]


def test_doctor_reports_loose_objects_until_sync_packs_them(alice: Machine,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    n = 0
    while maintenance.health(alice.repo).loose_objects == 0:
        n += 1
        assert n < 400
        alice.append(note(n, alice.id))
    monkeypatch.setattr(maintenance, "UPKEEP_LOOSE_GROWTH", 0)
    result = alice.run("doctor", "--json")
    assert result.code == 1
    [problem] = result.json()["problems"]
    assert problem["kind"] == "garbage" and "upkeep never ran" in problem["detail"] and problem["hint"]
    assert alice.json("sync")["packed"] is True
    assert {k: v for k, v in alice.json("doctor").items() if k in ("ok", "problems")} == {"ok": True, "problems": []}


def test_doctor_reports_loose_refs(alice: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_doctor, "LOOSE_REFS_PACK_THRESHOLD", 0)
    problems = alice.run("doctor", "--json").json()["problems"]
    assert [p["kind"] for p in problems] == ["loose-refs"]
    assert "gitive gc" in problems[0]["hint"]


def test_doctor_prints_each_problem_with_its_hint(fleet: Fleet, alice: Machine, bare_remote: Path) -> None:
    bob = fleet.join(fleet.machine("desk", bare_remote), fleet.invite(alice), "bob")
    bad = signed_entry(bob.key, bob.team_id, bob.id, 2, note("gap", alice.id))  # seq 1 missing
    push_commit(bob, entry_commit(bob.repo, bad, None), refs.log_ref(bob.id, "team"))
    alice.ok("sync")
    problems = alice.run("doctor", "--json").json()["problems"]
    assert [p["kind"] for p in problems] == ["seq-gap"]
    human = alice.run("doctor")
    assert human.code == 1
    lines = human.out.splitlines()
    assert any(ln.startswith("seq-gap") and "seq 2" in ln for ln in lines), human.out
    assert any("skips or repeats" in ln for ln in lines), human.out


def test_doctor_problems_survive_an_index_rebuild(fleet: Fleet, alice: Machine, bare_remote: Path) -> None:
    bob = fleet.join(fleet.machine("desk", bare_remote), fleet.invite(alice), "bob")
    bad = signed_entry(bob.key, bob.team_id, bob.id, 1, note("x", alice.id))
    bad["sig"] = "00" * 64
    push_commit(bob, entry_commit(bob.repo, bad, None), refs.log_ref(bob.id, "team"))
    alice.ok("sync")
    before = alice.run("doctor", "--json").json()["problems"]
    assert [p["kind"] for p in before] == ["bad-signature"]
    assert alice.json("index", "rebuild")["problems"] == 1
    assert alice.run("doctor", "--json").json()["problems"] == before
