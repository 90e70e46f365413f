"""Items as an attacker sees them (issue 23, items 4 and 5): bob's agent, holding bob's machine key, writes
whatever ``item`` record it likes to bob's team log, claiming any id. It must not be able to take the id of an
item the anchor will make (and so swallow the anchor's firing, or show its own title for it), and nothing the
anchor writes may put an item's text on the remote, where the whole team reads it.

The attacker writes with ``gitive.store.logs`` directly, past every write-time check the CLI and MCP make.
"""

from __future__ import annotations

import subprocess

from gitive.anchor.gate import items
from gitive.core.ids import record_id
from testing.anchor import MERGED, AnchoredTeam, Ticker, merge, owe, push_branch
from tests.anchor.test_gate_tick import ledger_decisions

SQUAT_TITLE = "fyi: nothing to see here"


def _squat(team: AnchoredTeam, obligation: str, reason: str) -> None:
    """bob's agent claims the id the anchor's firing of ``obligation`` has had (``blake3("item", ob, reason)``),
    the id every reader now derives for it, and (under an honest id) the firing's fingerprint, which would make
    the firing a duplicate of bob's item; each as a session proposal with its own title."""
    about = [{"kind": "obligation", "id": obligation}]
    honest = items.proposal(team.bob.id, "bob", "squat", SQUAT_TITLE, about, [], "alice", 1).record()
    firing = items.make({"kind": "obligation", "ref": obligation}, "obligation.fired", f"{obligation}:{reason}",
                        "alice", SQUAT_TITLE, 1, about=about)
    for ident in _ids_of_the_firing(obligation, reason):
        team.bob.append(honest | {"id": ident})
    team.bob.append(honest | {"fingerprint": firing.fingerprint})
    team.bob.append(firing.record())  # and claiming the anchor's own source (a member may only propose)
    team.bob.ok("sync")


def _ids_of_the_firing(obligation: str, reason: str) -> list[str]:
    ids = [record_id("item", obligation, reason)]
    derive = getattr(items, "anchor_item_id", None)
    if derive is not None:
        ids.append(derive({"kind": "obligation", "ref": obligation}, "obligation.fired", f"{obligation}:{reason}"))
    return ids


def test_a_members_item_cannot_swallow_the_anchors_firing(team: AnchoredTeam) -> None:
    push_branch(team.bob, "release-notes")
    ob = owe(team.alice, MERGED.format(branch="release-notes"), "publish the release notes", "--to", "bob")
    tick = Ticker(team.anchor)
    tick()
    _squat(team, ob["id"], "condition")
    tick()  # the anchor takes bob's proposals in (they are decided like any proposal)
    merge(team.bob, "release-notes")
    tick()
    decided = [d for d in ledger_decisions(team.anchor) if d["source"] == f"obligation:{ob['id']}"]
    assert len(decided) == 1, decided  # the firing reached the gate: it was decided for its owner
    [firing] = decided
    assert firing["person"] == "alice"
    team.alice.ok("sync")
    why = team.alice.json("why", firing["item"])
    assert why["record"]["source"] == {"kind": "obligation", "ref": ob["id"]}
    assert why["record"]["author"] == team.anchor.id
    text = team.alice.ok("why", firing["item"]).out
    assert "publish the release notes" in text and SQUAT_TITLE not in text
    # none of bob's records is an item: each claims an id or a fingerprint that is not its own
    assert [d for d in ledger_decisions(team.anchor) if d["source"] == "session:bob/squat"] == []
    assert team.bob.run("why", _ids_of_the_firing(ob["id"], "condition")[0]).code == 1


def test_no_item_title_reaches_the_remote(team: AnchoredTeam) -> None:
    """The anchor's items (a fired obligation, a digest note) reach their person with their titles, yet no
    object on the remote holds a title's text: the ledger is metadata, the title is sealed to its audience."""
    team.alice.decided("gate", "live")
    push_branch(team.bob, "secret-migration")
    ob = owe(team.alice, MERGED.format(branch="secret-migration"), "rotate the zebra-42 credentials", "--to", "bob")
    tick = Ticker(team.anchor)
    tick()
    merge(team.bob, "secret-migration")
    assert tick().gate["delivered"] == 1
    [firing] = [d for d in ledger_decisions(team.anchor) if d["source"] == f"obligation:{ob['id']}"]
    team.alice.ok("sync")
    [shown] = team.alice.json("inbox", "--items")
    title = shown["title"]
    assert title.startswith("now due: rotate the zebra-42") and shown["item"] == firing["item"]
    assert _remote_objects_holding(team, title.encode()) == []
    assert _remote_objects_holding(team, b"now due:") == []
    # bob, who reads the same remote, cannot read alice's item's title
    team.bob.ok("sync")
    assert "now due" not in team.bob.ok("why", firing["item"]).out


def _remote_objects_holding(team: AnchoredTeam, needle: bytes) -> list[str]:
    """Every object of the remote (loose or packed, reachable or not) whose content holds ``needle``."""
    listed = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch-check=%(objectname)"],
                            cwd=team.remote, capture_output=True, check=True, text=True).stdout.split()
    batch = subprocess.run(["git", "cat-file", "--batch"], cwd=team.remote, input="\n".join(listed).encode(),
                           capture_output=True, check=True).stdout
    holding, at = [], 0
    while at < len(batch):  # "<oid> <type> <size>\n<content>\n", one after another
        header_end = batch.index(b"\n", at)
        oid, _, size = batch[at:header_end].split()
        content = batch[header_end + 1:header_end + 1 + int(size)]
        if needle in content:
            holding.append(oid.decode())
        at = header_end + 1 + int(size) + 1
    return holding
