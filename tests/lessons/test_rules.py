"""Write-time rules through ``gitive lessons propose``: every refusal is one line, exit 1, and writes nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from gitive.lessons.model import MAX_TEXT
from testing import fixtures
from testing.lessons import hive_tips
from testing.machines import Fleet, Machine, one_line_error
from tests.lessons.conftest import share_file

SMART = "Use \u201ctabs\u201d in Makefiles \u2013 never\n   spaces, as \u2018make\u2019 insists"
ASCII_QUOTE = "Use \"tabs\" in Makefiles - never spaces, as 'make' insists"


@pytest.fixture(scope="module")
def alice(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    """One founder for the whole module: refusals write nothing, accepted proposals use distinct texts."""
    base = tmp_path_factory.mktemp("rules")
    remote = fixtures.init_bare(base / "remote.git")
    fleet = Fleet(base / "fleet")
    machine = fleet.found(fleet.machine("a", remote), "alice")
    share_file([machine])
    fixtures.commit_file(machine.clone, "Makefile", "all:\n\tmake gen\n", SMART)
    yield machine


REFUSALS = [
    pytest.param(["--kind", "Gotcha", "--text", "Cite nothing"], "cite or omit", id="no-evidence"),
    pytest.param(["--kind", "Gotcha", "--text", "x" * (MAX_TEXT + 1), "-e", "file:api.proto"],
                 f"limit is {MAX_TEXT}", id="text-over-1200"),
    pytest.param(["--kind", "Gotcha", "--text", "   ", "-e", "file:api.proto"], "needs text", id="blank-text"),
    pytest.param(["--kind", "Rumour", "--text", "T", "-e", "file:api.proto"], "unknown lesson kind",
                 id="unknown-kind"),
    pytest.param(["--kind", "gotcha", "--text", "T", "-e", "file:api.proto"], "unknown lesson kind",
                 id="kind-is-case-sensitive"),
    pytest.param(["--kind", "Preference", "--text", "Alice likes tabs", "-e", "commit:HEAD"], "needs a quote",
                 id="preference-without-quote"),
    pytest.param(["--kind", "Decision", "--text", "We chose tabs", "-e", "commit:HEAD"], "needs a quote",
                 id="decision-without-quote"),
    pytest.param(["--kind", "Preference", "--text", "Alice likes spaces", "-e", "commit:HEAD",
                  "--quote", "always use spaces", "--speaker", "alice"], "not in the cited evidence",
                 id="quote-not-in-commit"),
    pytest.param(["--kind", "Preference", "--text", "Alice likes tabs", "-e", "commit:HEAD",
                  "--quote", "Use tabs in Makefiles"], "needs a speaker", id="quote-without-speaker"),
    pytest.param(["--kind", "Gotcha", "--text", "T", "-e", "rumour:x"], "bad evidence", id="unknown-evidence"),
    pytest.param(["--kind", "Gotcha", "--text", "T", "-e", "commit:0123456789abcdef"], "not in this repository",
                 id="missing-commit"),
    pytest.param(["--kind", "Gotcha", "--text", "T", "-e", "file:nope.txt"], "does not exist", id="missing-file"),
    pytest.param(["--kind", "Gotcha", "--text", "T", "-e", "file:api.proto", "--scope", "galaxy"],
                 "unknown scope", id="unknown-scope"),
]


@pytest.mark.parametrize(("args", "words"), REFUSALS)
def test_a_refused_proposal_is_one_line_and_writes_nothing(alice: Machine, args: list[str], words: str) -> None:
    before = hive_tips(alice)
    listed = alice.json("lessons", "list")
    one_line_error(alice.run("lessons", "propose", *args), words)
    assert hive_tips(alice) == before  # no log entry, no body, no personal store
    assert alice.json("lessons", "list") == listed


def test_text_of_exactly_the_limit_is_accepted(alice: Machine) -> None:
    text = ("Edge " * 300)[:MAX_TEXT]
    lesson = alice.ok("lessons", "propose", "--kind", "Gotcha", "--text", text, "-e", "file:api.proto").out.strip()
    assert alice.json("lessons", "show", lesson)["text"] == text


def test_a_quote_differing_only_in_quotes_dashes_and_spaces_is_accepted(alice: Machine) -> None:
    assert SMART in alice.git("log", "-1", "--format=%B")
    result = alice.ok("lessons", "propose", "--kind", "Preference", "--text", "Makefiles use tabs",
                      "-e", "commit:HEAD", "--quote", ASCII_QUOTE, "--speaker", "alice")
    shown = alice.json("lessons", "show", result.out.strip())
    assert shown["quote"] == {"speaker": "alice", "words": ASCII_QUOTE}  # stored as given
    assert shown["hearsay"] is False
    assert "hearsay" not in result.err


def test_a_quote_found_in_the_diff_is_accepted(alice: Machine) -> None:
    alice.ok("lessons", "propose", "--kind", "Decision", "--text", "The default target runs code generation",
             "-e", "commit:HEAD", "--quote", "make gen", "--speaker", "alice")


def test_a_quote_about_another_person_is_stored_as_hearsay(alice: Machine) -> None:
    result = alice.ok("lessons", "propose", "--kind", "Preference", "--text", "Bob wants tabs in Makefiles",
                      "-e", "commit:HEAD", "--quote", "Use \u201ctabs\u201d in Makefiles", "--speaker", "carol",
                      "--about", "bob")
    assert "hearsay" in result.err
    shown = alice.json("lessons", "show", result.out.strip())
    assert shown["hearsay"] is True
    assert shown["quote"] == {"speaker": "carol", "words": "Use \u201ctabs\u201d in Makefiles", "about": "bob"}


def test_a_quote_about_its_own_speaker_is_not_hearsay(alice: Machine) -> None:
    lesson = alice.ok("lessons", "propose", "--kind", "Preference", "--text", "Alice wants tabs in Makefiles",
                      "-e", "commit:HEAD", "--quote", "never spaces", "--speaker", "alice",
                      "--about", "alice").out.strip()
    assert alice.json("lessons", "show", lesson)["hearsay"] is False


def test_made_up_evidence_is_refused_rather_than_left_unchecked(alice: Machine) -> None:
    # Events, messages and approvals are looked up (tests/lessons/test_evidence.py): a made-up one is refused.
    before = hive_tips(alice)
    for spec in ("message:01J0000000000000000000000A", "event:0123456789abcdef", "approval:0123456789abcdef"):
        one_line_error(alice.run("lessons", "propose", "--kind", "Decision", "--text", "We ship on Tuesdays",
                                 "-e", spec, "--quote", "Tuesdays it is", "--speaker", "alice"), spec)
    assert hive_tips(alice) == before


def test_an_identical_proposal_gives_the_same_id_and_no_new_entry(alice: Machine) -> None:
    args = ["lessons", "propose", "--kind", "Convention", "--text", "Field numbers are never reused",
            "-e", "file:api.proto", "-e", "commit:HEAD~1", "--tag", "proto", "--applicability", "editing protos"]
    first = alice.ok(*args)
    before = hive_tips(alice)
    again = alice.ok(*args)
    assert again.out == first.out
    assert "already proposed" in again.err
    assert hive_tips(alice) == before
    assert alice.json(*args)["created"] is False
    assert [i["id"] for i in alice.json("lessons", "list")].count(first.out.strip()) == 1
    # the same text with other evidence is another lesson
    other = alice.ok("lessons", "propose", "--kind", "Convention", "--text", "Field numbers are never reused",
                     "-e", "file:api.proto").out
    assert other != first.out


def test_supersede_of_an_unknown_lesson_is_refused(alice: Machine) -> None:
    before = hive_tips(alice)
    one_line_error(alice.run("lessons", "supersede", "ffffffffff", "--kind", "Gotcha", "--text", "T",
                             "-e", "file:api.proto"), "no lesson")
    assert hive_tips(alice) == before


def test_refusals_leave_no_personal_store(alice: Machine) -> None:
    one_line_error(alice.run("lessons", "propose", "--kind", "Gotcha", "--text", "T", "--scope", "personal"),
                   "cite or omit")
    assert not (alice.home / "personal.git").exists()
