"""``gitive next`` on a team where one of each thing needs alice (``testing.needs``): one queue, most unblocking
first, each row with its id, age, why and the command that acts on it, the same in text and JSON."""

from __future__ import annotations

from typing import Any

from testing import needs
from testing.anchor import AnchoredTeam
from testing.machines import one_line_error

SHADOW = "would have been delivered: your gate is in shadow (`gitive gate live` to turn it on)"


def _rows(team: AnchoredTeam) -> list[dict[str, Any]]:
    return team.alice.json("next")


def test_next_lists_one_of_each_kind_most_unblocking_first(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    team, ids = needy
    rows = _rows(team)
    assert [(r["kind"], r.get("state")) for r in rows] == [
        ("draft", "drafted"), ("held", "held"), ("obligation", "fired"), ("obligation", "lapsing"),
        ("lesson", "proposed"), ("item", "would-deliver"), ("message", "queued")]
    by_kind = {r["kind"]: r for r in rows}
    assert by_kind["draft"]["id"] == ids["task"]
    assert by_kind["held"]["id"] == ids["held"] and "prompt-injection" in by_kind["held"]["why"]
    assert [r["id"] for r in rows if r["kind"] == "obligation"] == [ids["fired"], ids["lapsing"]]
    assert by_kind["lesson"]["id"] == ids["lesson"] and by_kind["lesson"]["title"] == needs.LESSON
    assert by_kind["item"]["title"] == needs.WATCH_TITLE and by_kind["item"]["account"] == SHADOW
    assert by_kind["message"]["id"] == ids["message"] and by_kind["message"]["title"] == needs.PLAIN
    assert [r["act"] for r in rows] == [
        f"gitive review prepared {ids['task'][:12]}", f"gitive release {ids['held']}",
        f"gitive obligation done {ids['fired'][:12]}", f"gitive obligation renew {ids['lapsing'][:12]}",
        f"gitive review approve {ids['lesson'][:12]}", f"gitive why {by_kind['item']['id'][:12]}",
        f"gitive inbox --thread {ids['message']}"]
    for r in rows:
        assert 0 <= r["age_s"] < 3600 and r["why"] and "\n" not in r["why"]


def test_an_item_about_a_row_is_told_on_that_row_not_twice(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    team, _ = needy
    rows = _rows(team)
    draft, fired = rows[0], rows[2]
    for row in (draft, fired):  # the prepared item and the obligation's item, each in shadow
        assert row["item"] and row["account"] == SHADOW and row["item"][:12] in row["why"]
    assert sum(1 for r in rows if r["kind"] == "item") == 1


def test_the_text_rows_are_the_json_rows(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    team, _ = needy
    rows = _rows(team)
    out = team.alice.ok("next").out
    assert out.startswith("7 things need alice, most unblocking first:")
    lines = out.splitlines()[1:]
    assert len(lines) == 2 * len(rows)
    for r, (head, act) in zip(rows, zip(lines[::2], lines[1::2], strict=True), strict=True):
        assert head.split()[:2] == [r["kind"], r["id"][:12]]
        assert act.strip() == f"→ {r['act']}"
    assert team.alice.ok("next", "--limit", "2").out.splitlines()[-1] == "… and 5 more (--limit)"


def test_the_printed_commands_act(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    team, ids = needy
    rows = {r["kind"]: r for r in _rows(team)}
    why = team.alice.ok(*rows["item"]["act"].split()[1:]).out
    assert needs.WATCH_TITLE in why and SHADOW in why
    thread = team.alice.ok(*rows["message"]["act"].split()[1:]).out
    assert ids["message"] in thread and needs.PLAIN in thread
    # marking the item (shadow mode's record) is seeing it: it leaves the queue, the rest stay
    team.alice.ok("digest", "mark", rows["item"]["id"][:12], "wanted")
    assert [r["kind"] for r in _rows(team)] == ["draft", "held", "obligation", "obligation", "lesson", "message"]


def test_nothing_needs_bob_and_an_anchor_is_refused(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    team, _ = needy
    assert team.bob.ok("next").out.strip() == "nothing needs bob now"
    assert team.bob.json("next") == []
    one_line_error(team.anchor.run("next"), "anchor machine")


def test_the_installed_command_prints_the_same_queue(needy: tuple[AnchoredTeam, dict[str, Any]]) -> None:
    """``gitive next --json`` as a real process (the installed entry point, alice's home and clone)."""
    import json
    import os
    import subprocess

    from testing.ui import GITIVE

    team, _ = needy
    a = team.alice
    result = subprocess.run([str(GITIVE), "next", "--json"], cwd=a.clone, env={**os.environ, "GITIVE_HOME": str(a.home)},
                            capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    keep = ("kind", "id", "why", "act", "title", "item", "account", "state")
    assert [{k: r[k] for k in keep} for r in json.loads(result.stdout)] == [
        {k: r[k] for k in keep} for r in _rows(team)]
