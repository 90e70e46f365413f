"""Reviews through a real terminal: propose on one machine, review on another, recall on a third.

Reviews need a person at a TTY and a ``y``; each one here runs the installed ``gitive`` on a pseudo-terminal.
"""

from __future__ import annotations

import re

import pytest

from gitive.core.clock import now_ms
from gitive.lessons.gate import AGENT_ENV
from testing.lessons import PASSPHRASE_ANSWER, as_person, confirmed, hive_tips, propose
from testing.machines import Machine, one_line_error

HOUR_MS = 3_600_000


def _state(machine: Machine, lesson: str, **env: str) -> str:
    return str(machine.json("lessons", "show", lesson, env=dict(env) or None)["state"])


def _verified_ids(machine: Machine) -> list[str]:
    return [item["id"] for item in machine.json("lessons", "list", "--state", "verified")]


def test_propose_on_a_review_on_b_recall_on_c_needs_b_confirmed(trio: list[Machine]) -> None:
    a, b, c = trio
    lesson = propose(a, "Run make gen after editing api.proto", "--tag", "codegen")
    a.ok("sync")
    b.ok("sync")

    # bob is only a proposed member of the project: his approval would not count, so it is refused up front,
    # before he is asked anything, naming who can fix it; nothing is written
    before = hive_tips(b)
    code, out = as_person(b, "review", "approve", lesson, "--note", "seen it bite us")
    assert code == 1, out
    assert "would not count" in out and "alice" in out and "gitive project confirm bob" in out
    assert "Sign this" not in out and "Passphrase" not in out
    assert hive_tips(b) == before
    c.ok("sync")
    assert c.json("lessons", "show", lesson)["state"] == "proposed"

    # alice owns the project (she founded the team here) and confirms bob; once that reaches C, it is verified
    project = a.json("project")["people"]
    assert (project["alice"]["role"], project["alice"]["confirmed"]) == ("owner", True)
    assert project["bob"]["confirmed"] is False
    code, out = as_person(a, "project", "confirm", "bob", answers=[("Confirm bob", "y\n"), PASSPHRASE_ANSWER])
    assert code == 0, out
    for m in (a, b):
        m.ok("sync")
    out = confirmed(b, "review", "approve", lesson, "--note", "seen it bite us")
    assert "approved" in out
    for m in (b, a, c):
        m.ok("sync")
    assert c.json("project")["people"]["bob"]["confirmed"] is True
    shown = c.json("lessons", "show", lesson)
    assert (shown["state"], shown["verified"], shown["reviewer"]) == ("verified", True, "bob")
    assert shown["text"] == "Run make gen after editing api.proto"
    assert shown["author"] == "alice"
    assert _verified_ids(c) == [lesson]
    assert _state(a, lesson) == _state(b, lesson) == "verified"


def test_search_on_c_finds_the_verified_lesson(trio: list[Machine]) -> None:
    pytest.importorskip("gitive.lessons.recall")
    a, _, c = trio
    lesson = propose(a, "Regenerate stubs with make gen whenever the protobuf schema changes")
    a.ok("sync")
    confirmed(a, "review", "approve", lesson)  # the project's owner
    a.ok("sync")
    c.ok("sync")
    found = c.json("lessons", "search", "protobuf stubs")
    assert [item["id"] for item in found] == [lesson]


def test_review_without_a_terminal_is_refused_and_writes_nothing(trio: list[Machine]) -> None:
    a, b, _ = trio
    lesson = propose(a, "Never edit generated files by hand")
    a.ok("sync")
    b.ok("sync")
    before = hive_tips(b)
    # in-process under pytest, stdin and stdout are not a terminal
    one_line_error(b.run("review", "approve", lesson), "terminal")
    one_line_error(b.run("review", "reject", lesson), "terminal")
    one_line_error(b.run("review"), "terminal")
    one_line_error(b.run("retract", lesson, "--reason", "x"), "terminal")
    one_line_error(b.run("project", "confirm", "carol"), "terminal")
    assert hive_tips(b) == before
    assert _state(b, lesson) == "proposed"


def test_review_in_an_agent_environment_is_refused_even_on_a_terminal(founder: Machine) -> None:
    a = founder
    lesson = propose(a, "Never edit generated files by hand")
    before = hive_tips(a)
    for args, variable in [(("review", "approve", lesson), "CLAUDECODE"), (("review",), "CODEX_SANDBOX"),
                           (("retract", lesson, "--reason", "x"), "GITIVE_AGENT")]:
        assert variable in AGENT_ENV
        code, out = as_person(a, *args, **{variable: "1"})
        assert code == 1, out
        assert "agent harness" in out and variable in out, out
        assert "Sign this" not in out and "Retract it" not in out
    assert hive_tips(a) == before
    assert _state(a, lesson) == "proposed"


def test_answering_no_signs_nothing(founder: Machine) -> None:
    a = founder
    lesson = propose(a, "Never edit generated files by hand")
    before = hive_tips(a)
    code, out = as_person(a, "review", "approve", lesson, answers=[("Sign this", "n\n")])
    assert code == 0, out
    assert "nothing signed" in out
    assert hive_tips(a) == before
    assert _state(a, lesson) == "proposed"


def test_reject_through_a_terminal(founder: Machine) -> None:
    a = founder
    lesson = propose(a, "Tabs are fine in the proto file")
    confirmed(a, "review", "reject", lesson, "--note", "buf lint says spaces")
    shown = a.json("lessons", "show", lesson)
    assert shown["state"] == "rejected"
    assert shown["reviews"][0]["note"] == "buf lint says spaces"


def test_approve_with_an_edit_shows_the_edit_and_keeps_the_original(founder: Machine) -> None:
    a = founder
    lesson = propose(a, "run make gen")
    confirmed(a, "review", "approve", lesson, "--text", "Run `make gen` after editing api.proto")
    shown = a.json("lessons", "show", lesson)
    assert shown["state"] == "verified"
    assert shown["text"] == "Run `make gen` after editing api.proto"
    assert shown["original_text"] == "run make gen"
    assert shown["edited"] is True


def test_the_interactive_queue_approves_skips_rejects_and_quits(trio: list[Machine]) -> None:
    a, b, _ = trio
    texts = ["First: the proto needs make gen", "Second: protos are linted by buf",
             "Third: field numbers are never reused", "Fourth: comments go above fields"]
    ids = [propose(b, t) for t in texts]
    b.ok("sync")
    a.ok("sync")
    menu = "[a]pprove, [e]dit, [r]eject, [s]kip, [q]uit"
    code, out = as_person(a, "review", answers=[
        (menu, "a\n"), ("note", "checked\n"), ("Sign this approval", "y\n"), PASSPHRASE_ANSWER,
        (menu, "s\n"),
        (menu, "r\n"), ("why", "not true\n"), ("Sign this rejection", "y\n"),
        (menu, "q\n"),
    ])
    assert code == 0, out
    shown = [i for i in dict.fromkeys(re.findall(r"\b[0-9a-f]{64}\b", out)) if i in ids]
    assert sorted(shown) == sorted(ids)  # all four were offered, oldest first
    assert shown == ids
    states = {i: _state(a, i) for i in ids}
    assert states == {ids[0]: "verified", ids[1]: "proposed", ids[2]: "rejected", ids[3]: "proposed"}
    notes = a.json("lessons", "show", ids[0])["reviews"]
    assert [(r["approver"], r["note"]) for r in notes] == [("alice", "checked")]


def test_a_proposal_without_review_for_a_day_is_held(founder: Machine) -> None:
    a = founder
    old = propose(a, "Held: nobody looked at this one")
    reviewed = propose(a, "Reviewed: someone looked at this one")
    confirmed(a, "review", "approve", reviewed)
    now = now_ms()
    assert _state(a, old) == "proposed"
    assert _state(a, old, GITIVE_NOW_MS=str(now + 23 * HOUR_MS)) == "proposed"
    later = str(now + 25 * HOUR_MS)
    assert _state(a, old, GITIVE_NOW_MS=later) == "held"
    assert _state(a, reviewed, GITIVE_NOW_MS=later) == "verified"
    held = a.json("lessons", "list", "--state", "held", env={"GITIVE_NOW_MS": later})
    assert [item["id"] for item in held] == [old]
    # a held lesson can still be reviewed, and then it is no longer held
    confirmed(a, "review", "approve", old)
    assert _state(a, old, GITIVE_NOW_MS=later) == "verified"


def test_the_reviewer_sees_the_symptoms_and_files_recall_matches_on(founder: Machine) -> None:
    """A lesson's symptoms choose when it is shown, so the card a person approves shows them (and the files)."""
    lesson = propose(founder, "Regenerate the client after editing api.proto", "--symptom",
                     "ImportError: cannot import name 'OrderStub'", "--symptom", "stubs out of date",
                     evidence=("file:api.proto",))
    shown = founder.json("lessons", "show", lesson)
    assert shown["symptoms"] == ["ImportError: cannot import name 'OrderStub'", "stubs out of date"]
    assert shown["files"] == ["api.proto"]
    text = founder.ok("lessons", "show", lesson).out
    assert "symptom: ImportError: cannot import name 'OrderStub'" in text and "symptom: stubs out of date" in text
    assert "shown when a session touches: api.proto" in text
    code, card = as_person(founder, "review", answers=[("[a]pprove", "q\n")])
    assert code == 0, card
    card = " ".join(re.sub(r"\x1b\[[0-9;]*m", "", card).split())  # a terminal: colours, and lines wrapped
    assert "symptom: stubs out of date" in card and "shown when a session touches: api.proto" in card
