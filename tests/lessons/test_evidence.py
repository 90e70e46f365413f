"""Evidence and session labels are checked before anything is written: an event must be in this machine's
event log, a message one this machine sent or received, an approval a verified approving review, and a
``--session`` one of this machine's own sessions. Every refusal is one line, exit 1, and writes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.capture import events
from testing import fixtures, live
from testing.lessons import confirmed, hive_tips, propose
from testing.machines import Fleet, Machine, one_line_error
from tests.lessons.conftest import share_file


@pytest.fixture(scope="module")
def trio(tmp_path_factory: pytest.TempPathFactory, hermetic_git: Path) -> list[Machine]:
    """One team for the module (refusals write nothing; accepted proposals use distinct texts)."""
    base = tmp_path_factory.mktemp("evidence")
    machines = Fleet(base / "fleet").team(fixtures.init_bare(base / "remote.git"), ("alice", "a"), ("bob", "b"),
                                           ("carol", "c"))
    share_file(machines)
    return machines


def event_ids(machine: Machine, action: str) -> list[str]:
    with live.on(machine):
        return [e["event"]["id"] for e in events.read(actions=(action,))]


def refused(machine: Machine, *args: str, words: tuple[str, ...]) -> str:
    before = hive_tips(machine)
    line = one_line_error(machine.run("lessons", "propose", "--kind", "Gotcha", "--text", "Checked evidence",
                                      *args), *words)
    assert hive_tips(machine) == before
    return line


# --- events ----------------------------------------------------------------------------------------------------


def test_an_event_of_this_machines_log_is_evidence_and_a_prompt_can_be_quoted(trio: list[Machine]) -> None:
    a, _, _ = trio
    live.start_session(a, prompt="we always regenerate protos with buf, never by hand")
    [prompt] = event_ids(a, "prompt.submitted")
    lesson = propose(a, "Protos are generated with buf", "--quote", "always regenerate protos with buf",
                     "--speaker", "alice", kind="Preference", evidence=[f"event:{prompt[:12]}"])
    shown = a.json("lessons", "show", lesson)
    assert shown["evidence"][0]["kind"] == "event" and shown["evidence"][0]["ref"] == prompt
    one_line_error(a.run("lessons", "propose", "--kind", "Preference", "--text", "Alice likes hand-made protos",
                         "-e", f"event:{prompt}", "--quote", "protos by hand please", "--speaker", "alice"),
                   "quote")


@pytest.mark.parametrize(("ref", "words"), [
    ("0123456789abcdef0123456789abcdef", ("no such event", "event log")),
    ("01J00000000000000000000000", ("8 to 32 hex digits",)),
    ("abc", ("8 to 32 hex digits",)),
])
def test_an_event_that_is_not_in_this_machines_log_is_refused(trio: list[Machine], ref: str,
                                                               words: tuple[str, ...]) -> None:
    a, _, _ = trio
    live.start_session(a)
    refused(a, "-e", f"event:{ref}", words=words)


def test_another_machines_event_is_refused(trio: list[Machine]) -> None:
    a, b, _ = trio
    live.start_session(b, "sb")
    theirs = event_ids(b, "session.start")[-1]
    refused(a, "-e", f"event:{theirs}", words=("no such event",))


# --- messages --------------------------------------------------------------------------------------------------


def test_a_message_this_machine_received_or_sent_is_evidence_and_quotes_must_be_in_it(
        trio: list[Machine]) -> None:
    a, b, c = trio
    alice = live.start_session(a)
    live.publish_and_sync(a)
    bob = live.start_session(b, "sb")
    live.publish_and_sync(b)
    message = live.send(b, alice, "We release on Tuesdays, never on Fridays", sender=bob)
    b.ok("sync")
    a.ok("sync")
    c.ok("sync")
    lesson = propose(a, "Releases go out on Tuesdays", "--quote", "never on Fridays", "--speaker", "bob",
                     kind="Decision", evidence=[f"message:{message}"])
    cited = a.json("lessons", "show", lesson)["evidence"][0]
    assert (cited["kind"], cited["ref"]) == ("message", message)
    propose(b, "Bob told alice about Tuesdays", evidence=[f"message:{message}"])  # the sender may cite it
    one_line_error(a.run("lessons", "propose", "--kind", "Decision", "--text", "Releases on Fridays", "-e",
                         f"message:{message}", "--quote", "Fridays are fine", "--speaker", "bob"), "quote")
    refused(c, "-e", f"message:{message}", words=("between other machines",))


@pytest.mark.parametrize(("ref", "words"), [
    ("01J0000000000000000000000A", ("no verified message",)),
    ("not-a-message", ("26 characters",)),
    ("01J00000000000000000000%%_", ("26 characters",)),
])
def test_a_message_that_is_not_there_is_refused(trio: list[Machine], ref: str, words: tuple[str, ...]) -> None:
    a, _, _ = trio
    refused(a, "-e", f"message:{ref}", words=words)


# --- approvals -------------------------------------------------------------------------------------------------


def test_an_approving_review_is_evidence_and_a_rejection_or_a_guess_is_not(trio: list[Machine]) -> None:
    a, b, _ = trio
    good = propose(a, "Run make gen after editing api.proto")
    bad = propose(a, "Edit generated code by hand")
    confirmed(a, "project", "confirm", "bob", prompt="Confirm bob")  # so that bob's reviews count here
    a.ok("sync")
    b.ok("sync")
    confirmed(b, "review", "approve", good)
    confirmed(b, "review", "reject", bad, "--note", "no")
    b.ok("sync")
    a.ok("sync")
    reviews = {e["record"]["about"]: e["commit"] for e in a.json("log", "--kind", "review")}
    lesson = propose(a, "make gen is the reviewed way", evidence=[f"approval:{reviews[good][:12]}"])
    assert a.json("lessons", "show", lesson)["evidence"][0]["ref"] == reviews[good]
    refused(a, "-e", f"approval:{reviews[bad][:12]}", words=("no verified approving review",))
    refused(a, "-e", "approval:" + "0" * 40, words=("no verified approving review",))
    refused(a, "-e", "approval:abc", words=("12 or more hex digits",))


# --- sessions --------------------------------------------------------------------------------------------------


def test_a_session_label_must_be_one_of_this_machines_sessions(trio: list[Machine]) -> None:
    a, b, _ = trio
    mine = live.start_session(a)
    lesson = propose(a, "Sessions are checked", "--session", mine)
    assert a.json("lessons", "show", lesson)["session"] == mine
    short = propose(a, "A bare session name is this person's", "--session", mine.split("/", 1)[1])
    assert a.json("lessons", "show", short)["session"] == mine
    theirs = live.start_session(b, "sb")
    refused(a, "-e", "file:api.proto", "--session", theirs, words=("is not yours", "alice/"))
    refused(a, "-e", "file:api.proto", "--session", "alice/made-up-claude",
            words=("not a session of this machine", mine))


def test_without_any_session_the_refusal_says_how_sessions_appear(trio: list[Machine]) -> None:
    _, _, c = trio  # carol's machine never runs a hook in this module
    refused(c, "-e", "file:api.proto", "--session", "carol/api-claude", words=("none yet", "gitive hooks"))


def _big_commit(machine: Machine, files: int, folder: str = "big") -> str:
    for n in range(files):
        (machine.clone / folder / f"m{n:03d}.py").parent.mkdir(exist_ok=True)
        (machine.clone / folder / f"m{n:03d}.py").write_text(f"x = {n}\n")
    machine.git("add", folder)
    machine.git("commit", "--quiet", "-m", f"{files} modules at once")
    return machine.git("rev-parse", "HEAD").strip()


def test_a_commit_of_many_files_asks_which_files_the_lesson_is_about(trio: list[Machine]) -> None:
    a = trio[0]
    commit = _big_commit(a, 30)
    line = refused(a, "-e", f"commit:{commit}", words=("changed 30 files", "-e file:PATH"))
    assert commit[:12] in line
    lesson = propose(a, "Module 7 must be imported before module 8", evidence=(f"commit:{commit}",
                                                                                 "file:big/m007.py"))
    shown = a.json("lessons", "show", lesson)
    assert shown["files"] == ["big/m007.py"]  # the chosen file only; the commit stays cited
    assert [e["kind"] for e in shown["evidence"]] == ["commit", "file"]
    few = _big_commit(a, 3, "small")
    small = propose(a, "The three files of a small commit are matched", evidence=(f"commit:{few}",))
    assert len(a.json("lessons", "show", small)["files"]) >= 3
