"""The gate as an attacker sees it: any admitted machine (or an agent with a shell and the machine key) signs
whatever ``ledger``, ``item``, ``prefs`` and ``gate-live`` records it likes. None of it delivers anything to
anyone, changes someone else's preferences or takes their gate live; only an anchor's ledger delivers, and only
a person's own records at a terminal set their gate.

The attacker writes with ``gitive.store.logs`` directly, past every write-time check the CLI and MCP make.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitive.anchor.gate import gestures, items
from gitive.anchor.gate import prefs as prefs_mod
from gitive.core.records import GATE_BRANCHES
from gitive.index import ledger as ledger_reads
from gitive.index.refresh import fresh_index
from gitive.team.hive import open_hive
from testing import anchor as anchoring
from testing import live, people, teams
from testing.anchor import AnchoredTeam, Ticker
from testing.machines import Machine

BRANCHES = st.sampled_from(GATE_BRANCHES)
forged_ledger = st.fixed_dictionaries({
    "branch": BRANCHES, "shadow": st.booleans(), "person": st.sampled_from(["alice", "bob"]),
    "log": st.sampled_from(["ledger", "team", "mail"])})
forged_prefs = st.fixed_dictionaries({
    "person": st.sampled_from(["alice", "bob"]), "actor": st.sampled_from(["agent", "person"]),
    "writer": st.sampled_from(["bob", "anchor"]), "gesture": st.sampled_from(people.FORGERIES),
    "budget": st.integers(0, 100), "live": st.booleans(), "kind": st.sampled_from(["prefs", "gate-live"])})


def _index_view(machine: Machine) -> dict[str, Any]:
    from gitive.daemon import anchor_items
    from gitive.daemon import db as daemon_db

    with live.on(machine), fresh_index(open_hive(machine.clone)) as (index, _), daemon_db.connect() as db:
        taken = anchor_items.take(index, db, machine.team_id, "alice")
        return {"decisions": ledger_reads.decisions(index, person="alice"), "taken": taken,
                "prefs": prefs_mod.all_current(index), "live": gestures.live_people(index)}


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=st.lists(forged_ledger, min_size=1, max_size=6), writer=st.sampled_from(["bob", "alice"]))
def test_a_members_ledger_entries_deliver_nothing(team: AnchoredTeam, plans: list[dict[str, Any]],
                                                  writer: str) -> None:
    machine = team.bob if writer == "bob" else team.alice
    for i, plan in enumerate(plans):
        c = items.make({"kind": "watcher", "ref": "scan"}, "watch.scan.security", f"forged-{i}", plan["person"],
                       "your keys leaked, run this", 1, about=[{"kind": "event", "id": "e"}])
        machine.append(c.record(), log=plan["log"])
        decision = {"type": "ledger", "item": c.id, "person": plan["person"], "branch": plan["branch"],
                    "rule": "floor", "fingerprint": c.fingerprint, "source": "watcher:scan", "shadow": plan["shadow"]}
        machine.append(decision, log=plan["log"])
        # and the same in ledger format 2, one entry holding the decision twice
        machine.append({"type": "ledger-batch", "v": 2, "decisions": [
            {k: v for k, v in decision.items() if k != "type"}] * 2}, log=plan["log"])
    machine.ok("sync")
    team.alice.ok("sync")
    view = _index_view(team.alice)
    assert view["decisions"] == [] and view["taken"] == 0
    assert Ticker(team.anchor)().gate == {}  # the anchor's gate takes no member's non-session item either


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plans=st.lists(forged_prefs, min_size=1, max_size=5))
def test_only_a_persons_own_gesture_sets_their_gate(place: teams.Place, plans: list[dict[str, Any]]) -> None:
    """bob's machine (an agent with a shell: the machine key, not the passphrase) and the anchor write prefs and
    gate-live records for alice or bob, with no gesture, a stranger's, bob's real one lifted from another
    record or made for another machine; only bob's own records with his real gesture count, and only for him."""
    _write_and_judge(anchoring.restored(place), plans)  # a fresh team per example: no records leak between them


def _write_and_judge(team: AnchoredTeam, plans: list[dict[str, Any]]) -> None:
    writers = {"bob": team.bob, "anchor": team.anchor}
    signers = {"bob": team.bob.signer, "anchor": people.person_key(team.base / "stranger")}
    for i, plan in enumerate(plans):
        machine = writers[plan["writer"]]
        if plan["kind"] == "prefs":
            record = prefs_mod.Prefs(plan["person"], budget=plan["budget"], muted_kinds=("obligation",)
                                     ).record(10**12 + i) | {"actor": plan["actor"]}
        else:
            record = {"type": "gate-live", "person": plan["person"], "live": plan["live"], "ts": 10**12 + i,
                      "actor": plan["actor"]}
        machine.append(people.gestured_as(record, plan["gesture"], signers[plan["writer"]], machine.team_id,
                                          machine.id, team.alice.id))
    for name in {p["writer"] for p in plans}:
        writers[name].ok("sync")
    team.alice.ok("sync")
    view = _index_view(team.alice)
    assert "alice" not in view["prefs"] and "alice" not in view["live"]  # only alice's own machines set hers
    counted = [p for p in plans if (p["writer"], p["person"], p["actor"], p["gesture"]) == ("bob", "bob", "person",
                                                                                           "real")]
    kinds = {p["kind"] for p in counted}
    assert ("bob" in view["prefs"], "bob" in view["live"]) == ("prefs" in kinds, "gate-live" in kinds)
    if "gate-live" in kinds:
        assert view["live"]["bob"][0] == [p for p in counted if p["kind"] == "gate-live"][-1]["live"]


def test_an_agent_cannot_set_preferences_or_take_a_gate_live(team: AnchoredTeam) -> None:
    for args in (("prefs", "set", "--budget", "50"), ("prefs", "set", "--budget", "50", "--passphrase-stdin"),
                 ("gate", "live"), ("gate", "live", "--passphrase-stdin")):
        result = team.alice.run(*args, env={"CLAUDECODE": "1"})
        assert result.code == 1 and "agent harness" in result.err, result
    # An agent that scrubbed its environment still has no passphrase: a guess opens nothing, writes nothing.
    for args in (("prefs", "set", "--budget", "50"), ("gate", "live")):
        result = team.alice.run(*args, "--passphrase-stdin", stdin="hunter2\n")
        assert result.code == 1 and "passphrase" in result.err and "Traceback" not in result.err, result
    view = _index_view(team.alice)
    assert "alice" not in view["prefs"] and "alice" not in view["live"]
    refused = team.anchor.run("prefs", "set", "--budget", "1", "--passphrase-stdin")
    assert refused.code == 1 and "anchor machine makes no decisions" in refused.err
    # and the one who has it decides
    team.alice.decided("gate", "live")
    assert _index_view(team.alice)["live"]["alice"][0] is True


def test_one_noisy_session_cannot_spend_the_whole_budget(team: AnchoredTeam) -> None:
    """Twelve urgent proposals (each citing an obligation someone waits on) from one session: its share goes
    through, the rest is digested; another session's item still gets its own share."""
    from gitive.mcp.items import propose_item
    from testing.anchor import owe

    team.alice.decided("gate", "live")
    ob = owe(team.alice, 'e.event.action == "vcs.tag_created"', "ship it", "--to", "bob")
    with live.on(team.bob):
        for i in range(12):
            propose_item(team.bob.clone, title=f"look at this {i}", about=[f"obligation:{ob['id']}"],
                         files=[f"f{i}.py"], session="bob/noisy")
        propose_item(team.bob.clone, title="and this", about=[f"obligation:{ob['id']}"], files=["g.py"],
                     session="bob/quiet")
    team.bob.ok("sync")
    report = Ticker(team.anchor)()
    assert report.gate["decided"] == {"attention": 3, "digest": 10}
    from tests.anchor.test_gate_tick import ledger_entries

    sources = [e["source"] for e in ledger_entries(team.anchor) if e["branch"] == "attention"]
    assert sorted(sources) == ["session:bob/noisy", "session:bob/noisy", "session:bob/quiet"]
