"""``gitive owe``, ``owed`` and ``obligation done|cancel|renew`` as people and agents run them."""

from __future__ import annotations

import pytest

from gitive.store import refs
from testing.anchor import MERGED, AnchoredTeam, owe, owed
from testing.machines import Fleet, one_line_error

AGENT = {"GITIVE_AGENT": "1"}


@pytest.fixture
def refusing(team: AnchoredTeam) -> AnchoredTeam:
    """The team, for the tests that only check refusals: each asserts it wrote nothing."""
    return team


def _team_tip(team: AnchoredTeam) -> str | None:
    return refs.tip(team.bob.repo, refs.log_ref(team.bob.id, "team"))


@pytest.mark.parametrize(("condition", "words"), [
    ('e.event.action == "vcs.merged" && e.branch == "auth-rotation"', ("did you mean e.vcs.branch?",)),
    ('e.event.action == "vcs.merged" && (e.vcs.branch == "x"', ("does not parse",)),
    ("e.vcs.files.exists(a, e.vcs.files.exists(b, e.vcs.files.exists(c, a == b)))", ("over the 5,000,000",)),
    ('e.event.action == "merge"', ("vocabulary does not have",)),
    # a session's own post-merge hook: no anchor ever sees it (the one the anchor sees is vcs.merged)
    ('e.event.action == "vcs.merge"', ("can never fire", "never reaches an anchor", "did you mean 'vcs.merged'")),
    ('e.event.action == "tool.completed" || e.event.action == "prompt.submitted"', ("can never fire",)),
])
def test_a_condition_that_cannot_work_is_refused_and_nothing_is_written(refusing: AnchoredTeam, condition: str,
                                                                        words: tuple[str, ...]) -> None:
    team = refusing
    before = _team_tip(team)
    one_line_error(team.bob.run("owe", "--when", condition, "--do", "x"), *words)
    assert _team_tip(team) == before


@pytest.mark.parametrize(("args", "words"), [
    (("--owner", "carol"), ("'carol' is not an active person",)),
    (("--owner", "anchor"), ("'anchor' is not an active person",)),
    (("--to", "zed/session"), ("'zed'",)),
    (("--expires", "91d"), ("at most 90 days",)),
    (("--expires", "soon"), ("not a duration",)),
    (("--deadline", "2001-01-01"), ("already past",)),
    (("--deadline", "next week"), ("not a date",)),
    (("--file", "../etc/passwd"), ("not a path inside the repository",)),
])
def test_bad_input_is_one_line_and_writes_nothing(refusing: AnchoredTeam, args: tuple[str, ...],
                                                  words: tuple[str, ...]) -> None:
    team = refusing
    before = _team_tip(team)
    result = team.bob.run("owe", "--when", MERGED.format(branch="x"), "--do", "x", *args)
    assert result.code in (1, 2), str(result)
    assert any(w in result.err for w in words), str(result)
    assert "Traceback" not in result.err and _team_tip(team) == before


def test_an_action_over_500_characters_is_refused(refusing: AnchoredTeam) -> None:
    one_line_error(refusing.bob.run("owe", "--when", MERGED.format(branch="x"), "--do", "a" * 501), "over the 500 limit")


def test_a_person_records_what_someone_else_owes_and_anyone_sees_it(team: AnchoredTeam) -> None:
    alices = refs.log_ref(team.alice.id, "team")
    before = refs.tip(team.alice.repo, alices)
    one_line_error(team.alice.run("owe", "--when", MERGED.format(branch="x"), "--do", "x", "--owner", "bob"),
                   "passphrase must be typed at a terminal")  # a decision about bob's work: the person key
    guessed = team.alice.run("owe", "--when", MERGED.format(branch="x"), "--do", "x", "--owner", "bob",
                             "--passphrase-stdin", stdin="hunter2\n")  # an agent with a scrubbed environment
    assert guessed.code == 1 and "passphrase" in guessed.err, guessed
    assert refs.tip(team.alice.repo, alices) == before
    record = owe(team.alice, MERGED.format(branch="auth-rotation"), "remove the grace period", "--owner", "bob",
                 "--to", "alice", "--file", "src/auth.py", decide=True)
    assert (record["owner"], record["to"], record["actor"], record["files"]) == ("bob", "alice", "person",
                                                                                 ["src/auth.py"])
    assert record["gesture"]["key"] == team.alice.signer.public
    team.bob.ok("sync")
    [shown] = owed(team.bob, "--person", "bob")
    assert shown["id"] == record["id"] and shown["evaluation"]["value"] == "unsatisfied"
    assert 'waiting for vcs.merged where vcs.branch = \'auth-rotation\'' in shown["evaluation"]["reason"]
    assert owed(team.bob, "--event", "vcs.merged") and not owed(team.bob, "--event", "message.sent")
    assert owed(team.bob, "--project")


def test_an_agent_records_only_its_own_persons_obligations(team: AnchoredTeam) -> None:
    one_line_error(team.alice.run("owe", "--when", MERGED.format(branch="x"), "--do", "x", "--owner", "bob",
                                  env=AGENT), "an agent records only its own person's obligations")
    mine = owe(team.alice, MERGED.format(branch="x"), "x", env=AGENT)
    assert mine["owner"] == "alice" and mine["actor"] == "agent"


def test_done_cancel_and_renew_follow_who_may(team: AnchoredTeam) -> None:
    first = owe(team.bob, MERGED.format(branch="a"), "first")
    second = owe(team.bob, MERGED.format(branch="b"), "second")
    team.alice.ok("sync")
    one_line_error(team.alice.run("obligation", "cancel", first["id"][:8], env=AGENT),
                   "an agent cannot cancel an obligation bob owns")
    one_line_error(team.alice.run("obligation", "done", first["id"][:8], env=AGENT), "cannot mark done")
    one_line_error(team.alice.run("obligation", "cancel", first["id"][:8]), "passphrase must be typed")
    team.alice.decided("obligation", "cancel", first["id"][:8], "--note", "not needed")  # a person, with her key
    team.bob.ok("obligation", "done", second["id"][:8], env=AGENT)  # the owner's own agent may
    team.bob.ok("sync")
    shown = {o["id"]: o["status"] for o in owed(team.bob, "--all")}
    assert shown == {first["id"]: "cancelled", second["id"]: "done"}
    one_line_error(team.bob.run("obligation", "renew", second["id"][:8]), "already done")
    one_line_error(team.bob.run("obligation", "done", "zzzzzz"), "not an obligation id")
    one_line_error(team.bob.run("obligation", "done", "abcdef01"), "no obligation has an id starting abcdef01")


def test_the_anchor_cannot_record_or_change_obligations(team: AnchoredTeam) -> None:
    record = owe(team.bob, MERGED.format(branch="a"), "first")
    team.anchor.ok("sync")
    one_line_error(team.anchor.run("owe", "--when", MERGED.format(branch="x"), "--do", "x", "--owner", "bob"),
                   "the anchor records no obligations")
    one_line_error(team.anchor.run("obligation", "cancel", record["id"][:8]), "the anchor cannot cancel")


def test_owed_says_when_no_anchor_evaluates(team: AnchoredTeam) -> None:
    owe(team.bob, MERGED.format(branch="a"), "first")
    team.alice.decided("team", "remove", "anchor")
    team.bob.ok("sync")
    [shown] = owed(team.bob)
    assert shown["evaluation"] == {"value": "unverifiable", "reason": "no anchor in the team evaluates conditions "
                                                                      "(an admin runs `gitive invite --anchor`)"}


def test_the_anchor_name_and_invite_are_reserved(team: AnchoredTeam) -> None:
    one_line_error(team.bob.run("invite", "--anchor"), "only an admin invites an anchor")
    code = team.alice.decided("invite").out.strip()
    dan = Fleet(team.base).machine("dan", team.remote)
    one_line_error(dan.run("join", code, "--person", "anchor"), "reserved for the team's anchor machine")
    one_line_error(dan.run("join", code), "--person NAME")
    anchor_code = team.alice.decided("invite", "--anchor").out.strip()
    one_line_error(dan.run("join", anchor_code, "--person", "dan"), "this is an anchor invite")
    status = team.anchor.run("anchor", "run", "--once")
    assert status.code == 0, str(status)
    one_line_error(team.bob.run("anchor", "run", "--once"), "this machine is not the team's anchor")
