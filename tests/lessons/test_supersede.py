"""Superseding: a new lesson replaces an old one once the new one is verified, on every machine."""

from __future__ import annotations

from testing.lessons import as_person, confirmed, propose
from testing.machines import Machine, one_line_error

OLD = "Run make gen after editing api.proto"
NEW = "Run buf generate after editing api.proto (make gen is gone)"


def _supersede(machine: Machine, old: str, text: str = NEW) -> str:
    result = machine.ok("lessons", "supersede", old[:12], "--kind", "Correction", "--text", text,
                        "-e", "file:api.proto")
    return result.out.strip()


def _states(machine: Machine, *ids: str) -> list[str]:
    return [machine.json("lessons", "show", i)["state"] for i in ids]


def _verified(machine: Machine) -> set[str]:
    return {i["id"] for i in machine.json("lessons", "list", "--state", "verified")}


def test_the_old_lesson_is_superseded_once_the_new_one_is_verified_everywhere(trio: list[Machine]) -> None:
    a, b, c = trio
    old = propose(a, OLD)
    confirmed(a, "review", "approve", old)
    a.ok("sync")
    c.ok("sync")
    assert _verified(c) == {old}

    new = _supersede(a, old)
    assert a.json("lessons", "show", new)["supersedes"] == old
    a.ok("sync")
    c.ok("sync")
    assert _states(c, old, new) == ["verified", "proposed"]  # a proposal alone replaces nothing

    confirmed(a, "review", "approve", new)
    a.ok("sync")
    for m in (c, b):  # C saw the old one verified before; B sees everything at once
        m.ok("sync")
        assert _states(m, old, new) == ["superseded", "verified"]
        assert _verified(m) == {new}
        shown = m.json("lessons", "show", old)
        assert (shown["superseded_by"], shown["verified"]) == (new, False)
        assert shown["text"] == OLD  # superseded is not forgotten
        assert [i["id"] for i in m.json("lessons", "list", "--state", "superseded")] == [old]


def test_a_rejected_or_retracted_successor_leaves_the_old_lesson_verified(founder: Machine) -> None:
    a = founder
    old = propose(a, OLD)
    confirmed(a, "review", "approve", old)
    rejected = _supersede(a, old, "Never run make gen")
    confirmed(a, "review", "reject", rejected)
    assert _states(a, old, rejected) == ["verified", "rejected"]

    new = _supersede(a, old)
    confirmed(a, "review", "approve", new)
    assert _states(a, old, new) == ["superseded", "verified"]
    confirmed(a, "retract", new, "--reason", "buf is not adopted yet", prompt="Retract it for everyone?")
    assert _states(a, old, new) == ["verified", "retracted"]
    assert _verified(a) == {old}


def test_a_superseded_lesson_cannot_be_reviewed(founder: Machine) -> None:
    a = founder
    old = propose(a, OLD)
    confirmed(a, "review", "approve", old)
    new = _supersede(a, old)
    confirmed(a, "review", "approve", new)
    code, out = as_person(a, "review", "approve", old)  # refused before it asks anything
    assert code == 1, out
    assert "superseded" in out
    assert _states(a, old) == ["superseded"]


def test_supersede_needs_the_same_rules_as_propose(founder: Machine) -> None:
    old = propose(founder, OLD)
    one_line_error(founder.run("lessons", "supersede", old, "--kind", "Correction", "--text", NEW), "cite or omit")
