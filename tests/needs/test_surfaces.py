"""One account of each item on every surface: a shadow-mode item through ``gitive inbox``, ``digest``, ``why``
and ``next`` (the dashboard's half is tests/ui/test_next.py), and ``why`` taking any id a surface shows."""

from __future__ import annotations

from typing import Any

from testing import needs
from testing.anchor import AnchoredTeam
from testing.machines import one_line_error

SHADOW = "would have been delivered: your gate is in shadow (`gitive gate live` to turn it on)"


def _watched(team: AnchoredTeam) -> dict[str, Any]:
    [row] = [r for r in team.alice.json("next") if r["kind"] == "item"]
    return row


def test_a_shadow_item_has_one_account_on_every_surface(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    team, _ = needy
    a = team.alice
    item = _watched(team)["id"]
    short = item[:12]
    # inbox: the item is listed (not "no items from the anchor"), with its id and the account
    [row] = [r for r in a.json("inbox", "--items") if r["item"] == item]
    assert row["state"] == "would-deliver" and row["account"] == SHADOW and row["title"] == needs.WATCH_TITLE
    text = a.ok("inbox").out
    assert "no items from the anchor" not in text
    assert f"{short} " in text and SHADOW in text and f"gitive why {short}" in text
    # digest: counted as would-be-delivered, never as delivered, and listed with its id
    digest = a.json("digest")
    assert [w["item"] for w in digest["would_deliver"] if w["item"] == item] == [item]
    assert all(w["account"] == SHADOW for w in digest["would_deliver"])
    assert digest["delivered"] == 0  # nothing reached alice: her gate is in shadow
    text = a.ok("digest").out
    assert f"0 delivered, {len(digest['would_deliver'])} would have been: your gate is in shadow" in text
    assert short in text and SHADOW in text
    markdown = a.ok("digest", "--markdown").out
    assert "## Would have been delivered" in markdown and f"`gitive why {short}`" in markdown
    # why: where it stands now, in the same words
    why = a.json("why", short)
    assert why["account"]["words"] == SHADOW and why["account"]["state"] == "would-deliver"
    text = a.ok("why", short).out
    assert f"now: {SHADOW}" in text and needs.WATCH_TITLE in text
    # next: the same words
    assert _watched(team)["account"] == SHADOW and _watched(team)["why"] == f"{SHADOW}: {needs.WATCH_TITLE}"


def test_why_takes_any_id_a_surface_shows(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    team, ids = needy
    a = team.alice
    rows = {r["kind"]: r for r in a.json("next") if r["kind"] in ("draft", "obligation", "item")}
    fired_item = next(r["item"] for r in a.json("next") if r["id"] == ids["fired"])
    by_obligation = a.json("why", ids["fired"][:8])
    assert by_obligation["item"] == fired_item and by_obligation["via"] == "obligation"
    by_task = a.json("why", ids["task"])
    assert by_task["item"] == rows["draft"]["item"] and by_task["via"] == "task"
    # ledger format 2: one entry per tick holds that tick's decisions for everyone; why picks out alice's
    entries = [e for e in a.json("log", "--log", "ledger", "--limit", "500") if e["kind"] == "ledger-batch"
               and any(d["item"] == rows["item"]["id"] for d in e["record"]["decisions"])]
    assert entries
    mine = {d["item"] for d in entries[0]["record"]["decisions"] if d["person"] == "alice"}
    if len(mine) == 1:  # the tick decided only this item for alice: the entry names it
        by_entry = a.json("why", entries[0]["commit"][:12])
        assert by_entry["item"] == rows["item"]["id"] and by_entry["via"] == "ledger entry"
    else:  # one entry, several of alice's decisions: one line naming each item, ours among them
        one_line_error(a.run("why", entries[0]["commit"][:12]), f"holds {len(mine)} decisions",
                       rows["item"]["id"][:12], "gitive why ITEM")
    assert a.json("why", rows["item"]["id"][:7])["via"] == "item"
    text = a.ok("why", ids["fired"][:10]).out
    assert text.startswith(f"item {fired_item[:12]} (from its obligation id) for alice") and SHADOW in text


def test_why_says_in_one_line_what_an_id_is_not(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    team, ids = needy
    a = team.alice
    one_line_error(a.run("why", "xyz"), "not an id", "at least 6 hex characters")
    one_line_error(a.run("why", "0123456789"), "no item, obligation, task or ledger entry 0123456789")
    lapsing = ids["lapsing"]  # its item went to the digest: still an item; an obligation without one is named
    assert a.json("why", lapsing[:12])["via"] == "obligation"
    fresh = a.json("owe", "--when", 'e.event.action == "vcs.merged" && e.vcs.branch == "later"', "--do", "x")
    one_line_error(a.run("why", fresh["obligation"]["id"][:12]), "has no item yet", "gitive owed")
