"""Standing approvals on real repositories: earned from a review, a use inside the perimeter lands without
asking (and is listed for the sponsor), an attempt outside it is refused and suspends the approval, a revert of
a use suspends it, it expires, it is revoked, and readers refuse one signed by an anchor or without a gesture."""

from __future__ import annotations

import json
import socket
import threading
from pathlib import Path
from typing import Any

from testing import fixtures, live
from testing import prepared as prep
from testing.anchor import AnchoredTeam, dated_now
from testing.machines import Machine

LOCK = "requests==2.31.0\nflask==3.0.0\nclick==8.1.7\n"


def _project(machine: Machine) -> None:
    with dated_now():
        fixtures.commit_file(machine.clone, "calc.py", "def add(a, b):\n    return a + b\n", "calc")
        fixtures.commit_file(machine.clone, "check_calc.py", prep.CHECK, "its check")
        fixtures.commit_file(machine.clone, "deps.lock", LOCK, "deps")
        machine.git("push", "--quiet", "origin", "main")


def _bump(team: AnchoredTeam, old: str, new: str) -> dict[str, Any]:
    return prep.hand(team.alice, f"bump {old}\nreplace: deps.lock: {old} => {new}", "--kind", "dep-bump")


def _last(team: AnchoredTeam, task: dict[str, Any]) -> dict[str, Any]:
    return [r for r in prep.prepared_records(team.anchor) if r["task"] == task["id"]][-1]


def _standing(machine: Machine) -> list[dict[str, Any]]:
    machine.ok("sync")
    return machine.json("standing", "list")["standing"]


def _grant(machine: Machine, *extra: str) -> dict[str, Any]:
    out = machine.decided("standing", "create", "--kind", "dep-bump", "--path", "deps.lock", "--change",
                          "version-lines", "--max-lines", "4", "--check", prep.TEST, *extra, "--json")
    return json.loads(out.out)["record"]


def test_a_standing_approval_covers_uses_inside_its_perimeter_and_suspends_itself(team: AnchoredTeam) -> None:
    _project(team.alice)
    tick = prep.ticker(team)
    first = _bump(team, "requests==2.31.0", "requests==2.31.1")
    tick()
    refused = team.alice.decide("standing", "create", "--kind", "other", "--path", "deps.lock")
    assert refused.code == 1 and "no draft of kind 'other'" in refused.err
    team.alice.decided("review", "prepared", first["id"][:12], "--approve")
    tick()
    assert _last(team, first)["state"] == "landed"
    approval = _grant(team.alice)
    assert approval["earned_from"] and approval["sponsor"] == "alice" and "gesture" in approval

    # a use inside the perimeter: landed without a review, the use listed for the sponsor
    second = _bump(team, "flask==3.0.0", "flask==3.0.1")
    tick()  # drafted
    tick()  # covered
    used = _last(team, second)
    assert used["state"] == "landed" and used["standing"] == approval["id"] and "review" not in used
    assert prep.remote_tip(team, "refs/heads/main") == used["commit"]
    team.alice.ok("sync")
    digest = team.alice.json("digest")
    assert any("used your standing approval" in line["title"] for line in digest["lines"]), digest

    # an attempt outside it (a change to calc.py): not landed, and the approval suspends itself
    outside = prep.hand(team.alice, "bump and tweak\nreplace: calc.py: a + b => b + a", "--kind", "dep-bump")
    tick()
    tick()
    assert _last(team, outside)["state"] == "drafted"
    [state] = [a for a in _standing(team.alice) if a["id"] == approval["id"]]
    assert state["status"] == "suspended" and state["ended"]["reason"] == "out-of-perimeter attempt"

    # a new one, a use, then a revert of that use: suspended again
    again = _grant(team.alice)
    third = _bump(team, "click==8.1.7", "click==8.1.8")
    tick()
    tick()
    landed = _last(team, third)
    assert landed["state"] == "landed" and landed["standing"] == again["id"]
    team.bob.git("pull", "--quiet", "--ff-only", "origin", "main")
    with dated_now():
        team.bob.git("revert", "--no-edit", landed["commit"])
        team.bob.git("push", "--quiet", "origin", "main")
    tick()
    [state] = [a for a in _standing(team.alice) if a["id"] == again["id"]]
    assert state["status"] == "suspended" and state["ended"]["reason"] == "revert"

    # revoked by its sponsor; an expired one covers nothing
    latest = _grant(team.alice, "--days", "1")
    team.alice.decided("standing", "revoke", latest["id"][:12], "--reason", "done with bumps")
    [state] = [a for a in _standing(team.alice) if a["id"] == latest["id"]]
    assert state["status"] == "revoked"
    expiring = _grant(team.alice, "--days", "1")
    from gitive.anchor.prepared import standing
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    with live.on(team.anchor), fresh_index(open_hive(team.anchor.clone)) as (conn, _):
        team.anchor.ok("sync")
        later = expiring["created"] + 2 * 86_400_000
        assert [a["status"] for a in standing.all_approvals(conn, team.anchor.team_id, later)
                if a["id"] == expiring["id"]] == ["expired"]
        assert not standing.active(conn, team.anchor.team_id, later, kind="dep-bump")


def test_readers_refuse_a_standing_approval_by_an_anchor_or_without_a_gesture(team: AnchoredTeam) -> None:
    from gitive.anchor.prepared import standing
    from gitive.core import gesture

    _project(team.alice)
    now = live.now_ms()
    body = {"type": "standing-approval", "kind": "dep-bump", "repo": "ab" * 32,
            "perimeter": {"paths": ["deps.lock"], "changes": [], "max_lines": 4, "checks": []},
            "earned_from": [{"author": team.alice.id, "log": "team", "seq": 1}], "sponsor": "alice",
            "expires": now + 86_400_000, "created": now}
    bare = {**body, "id": standing.standing_id(team.alice.id, body)}
    team.alice.append(bare)  # no gesture
    as_anchor = {**body, "sponsor": "anchor"}
    as_anchor = gesture.sign(team.alice.signer, team.alice.team_id, team.anchor.id,
                             {**as_anchor, "id": standing.standing_id(team.anchor.id, as_anchor)})
    team.anchor.append(as_anchor, log="ledger")  # an anchor's, even with a person key's gesture
    long = {**body, "expires": now + 31 * 86_400_000}
    long = gesture.sign(team.alice.signer, team.alice.team_id, team.alice.id,
                        {**long, "id": standing.standing_id(team.alice.id, long)})
    team.alice.append(long)  # past 30 days
    ci = {**body, "perimeter": {**body["perimeter"], "paths": [".github/**"]}}
    ci = gesture.sign(team.alice.signer, team.alice.team_id, team.alice.id,
                      {**ci, "id": standing.standing_id(team.alice.id, ci)})
    team.alice.append(ci)  # reaching CI config
    team.alice.ok("sync")
    team.anchor.ok("sync")
    found = {a["id"]: a for a in _standing(team.alice)}
    assert {a["status"] for a in found.values()} == {"refused"}
    assert "no valid gesture" in found[bare["id"]]["problem"]
    assert "anchor" in found[as_anchor["id"]]["problem"]
    assert "30 days" in found[long["id"]]["problem"]
    assert "CI" in found[ci["id"]]["problem"]
    result = team.anchor.decide("standing", "create", "--kind", "dep-bump", "--path", "deps.lock")
    assert result.code == 1 and "anchor machine makes no decisions" in result.err


def test_the_anchor_proposes_one_at_the_threshold_and_an_edit_request_or_a_failed_check_suspends(
        team: AnchoredTeam, tmp_path: Any) -> None:
    _project(team.alice)
    # passes once (on the draft), fails after (the post-merge check): the sandbox lets a check write nothing
    # that outlives it, so the count is kept by this test's own process, asked over a socket in a listed path
    flaky = _counter(tmp_path / "counter")
    check = f"python3 {flaky}"
    tick = prep.ticker(team, threshold=1, test_commands=(prep.TEST, check), read=(str(flaky.parent),))
    first = _bump(team, "requests==2.31.0", "requests==2.31.1")
    tick()
    team.alice.decided("review", "prepared", first["id"][:12], "--approve")
    tick()  # landed: one approval as prepared, no edit, no revert: the threshold of 1 is reached
    decisions = [e for e in _ledger(team) if e["type"] == "item" and e["source"].get("ref", "").startswith(
        "standing:")]
    [proposal] = decisions
    assert proposal["kind"] == "standing.proposal" and proposal["owner"] == "alice"
    out = team.alice.decided("standing", "create", "--kind", "dep-bump", "--path", "deps.lock", "--check", check,
                             "--json")
    approval = json.loads(out.out)["record"]
    second = _bump(team, "flask==3.0.0", "flask==3.0.1")
    tick()
    tick()
    assert _last(team, second)["standing"] == approval["id"]
    [state] = [a for a in _standing(team.alice) if a["id"] == approval["id"]]
    assert state["status"] == "suspended" and state["ended"]["reason"] == "failed post-merge check"

    # an edit request on a task of that kind suspends a fresh one
    fresh = json.loads(team.alice.decided("standing", "create", "--kind", "dep-bump", "--path", "deps.lock",
                                          "--path", "calc.py", "--json").out)["record"]
    third = prep.hand(team.alice, "tweak\nreplace: calc.py: a + b => b + a\nsleep: 0", "--kind", "dep-bump")
    tick()
    draft = _last(team, third)
    team.alice.git("fetch", "--quiet", "origin")
    team.alice.git("checkout", "--quiet", "-B", "my-edit", draft["head"])
    fixtures.commit_file(team.alice.clone, "calc.py", "def add(a, b):\n    return a + b  # as it was\n", "keep it")
    # the draft is covered before the owner answers, unless the edit came first: answer, then tick
    team.alice.decided("review", "prepared", third["id"][:12], "--edit", "my-edit")
    tick()
    [state] = [a for a in _standing(team.alice) if a["id"] == fresh["id"]]
    assert state["status"] == "suspended" and state["ended"]["reason"] == "edit request"


def _counter(folder: Path) -> Path:
    """A check script in ``folder`` that passes the first time it runs and fails after; the count is served by a
    thread of this process on a Unix socket beside it."""
    folder.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "sock"))
    server.listen()
    runs = []

    def serve() -> None:
        while True:
            conn, _ = server.accept()
            runs.append(1)
            conn.sendall(b"pass" if len(runs) == 1 else b"fail")
            conn.close()

    threading.Thread(target=serve, daemon=True).start()
    script = folder / "flaky.py"
    script.write_text(f"import socket, sys\ns = socket.socket(socket.AF_UNIX)\ns.connect({str(folder / 'sock')!r})\n"
                      "sys.exit(0 if s.recv(4) == b'pass' else 4)\n")
    return script


def _ledger(team: AnchoredTeam) -> list[dict[str, Any]]:
    from gitive.store import logs, refs

    return [e.body["record"] for e in logs.entries(team.anchor.repo, refs.log_ref(team.anchor.id, "ledger"))]
