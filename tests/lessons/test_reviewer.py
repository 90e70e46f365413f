"""Who reviews a lesson: the CODEOWNERS owner of its evidence files, else the member with most recent commits."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from gitive.lessons.reviewer import choose, codeowners
from testing import fixtures
from testing.lessons import as_person, commit_as, index_db, propose
from testing.machines import Fleet, Machine

EMAILS = {"alice": "alice@acme.test", "bob": "bob@acme.test", "carol": "carol@acme.test"}


def _team_with_emails(fleet: Fleet, remote: Path) -> list[Machine]:
    """alice, bob and carol, each clone with its own ``user.email`` (recorded in the roster at init/join)."""
    machines = []
    for person in EMAILS:
        m = fleet.machine(person[0], remote)
        m.git("config", "user.email", EMAILS[person])
        machines.append(m)
    a, *rest = machines
    a.decided("init", "--person", "alice", "--machine", "a", "--email", "Alice.Old@Acme.test")
    a.ok("sync")
    for m, person in zip(rest, ("bob", "carol"), strict=True):
        fleet.join(m, fleet.invite(a), person)
    for m in machines:
        m.ok("sync")
    return machines


@pytest.fixture(scope="module")
def roster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    """An index whose roster holds alice, bob and carol with their emails (read-only connection)."""
    base = tmp_path_factory.mktemp("reviewer")
    a, _, _ = _team_with_emails(Fleet(base / "fleet"), fixtures.init_bare(base / "remote.git"))
    emails = {m["person"]: m["emails"] for m in a.json("team")["members"]}
    assert emails == {"alice": ["Alice.Old@Acme.test", "alice@acme.test"], "bob": ["bob@acme.test"],
                      "carol": ["carol@acme.test"]}
    with index_db(a) as conn:
        yield conn


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return fixtures.init_repo(tmp_path / "project")


def _choose(project: Path, roster: sqlite3.Connection, files: list[str], scope: str = "project") -> tuple[str | None, str]:
    return tuple(choose(pygit2.Repository(str(project)), roster, scope, "alice", files))


def test_codeowners_owner_of_the_evidence_files_is_chosen(project: Path, roster: sqlite3.Connection) -> None:
    fixtures.commit_file(project, ".github/CODEOWNERS", "* @alice\n*.proto @bob\n/docs/ @carol\n")
    for _ in range(3):  # history would point at carol; CODEOWNERS wins
        commit_as(project, "api.proto", f"v{_}\n", "edit", EMAILS["carol"])
    assert _choose(project, roster, ["api.proto"]) == ("bob", "CODEOWNERS owner of the evidence files")
    assert _choose(project, roster, ["docs/guide.md"])[0] == "carol"
    assert _choose(project, roster, ["src/main.py"])[0] == "alice"


def test_codeowners_names_by_email_and_the_majority_of_files_wins(project: Path, roster: sqlite3.Connection) -> None:
    fixtures.commit_file(project, "CODEOWNERS", "*.proto BOB@acme.test\n*.md @carol\n")
    assert _choose(project, roster, ["a.proto", "b.proto", "c.md"])[0] == "bob"
    assert _choose(project, roster, ["a.proto", "c.md", "d.md"])[0] == "carol"


def test_codeowners_handles_that_are_not_on_the_roster_fall_back_to_history(
        project: Path, roster: sqlite3.Connection) -> None:
    fixtures.commit_file(project, ".github/CODEOWNERS", "*.proto @acme/platform @zed\n")
    commit_as(project, "api.proto", "v1\n", "edit", EMAILS["carol"])
    person, reason = _choose(project, roster, ["api.proto"])
    assert person == "carol"
    assert "most commits" in reason


def test_most_commits_in_the_last_30_days_wins(project: Path, roster: sqlite3.Connection) -> None:
    for i in range(5):  # bob was busy two months ago: too old to count
        commit_as(project, "api.proto", f"old {i}\n", "edit", EMAILS["bob"], date="2020-01-01T00:00:00+00:00")
    for i in range(3):
        commit_as(project, "api.proto", f"new {i}\n", "edit", "Carol@ACME.test" if i else EMAILS["carol"])
    commit_as(project, "api.proto", "bob\n", "edit", EMAILS["bob"])
    commit_as(project, "api.proto", "dave\n", "edit", "dave@elsewhere.test")  # not on the roster
    commit_as(project, "other.txt", "x\n", "edit", EMAILS["bob"])  # not an evidence file
    commit_as(project, "other2.txt", "x\n", "edit", EMAILS["bob"])
    assert _choose(project, roster, ["api.proto"]) == (
        "carol", "most commits to the evidence files in the last 30 days (3)")
    # alice's extra email from `init --email` counts as alice
    for i in range(4):
        commit_as(project, "api.proto", f"alice {i}\n", "edit", "alice.old@acme.test")
    assert _choose(project, roster, ["api.proto"])[0] == "alice"


def test_nobody_is_chosen_without_codeowners_or_recent_history(project: Path, roster: sqlite3.Connection) -> None:
    person, reason = _choose(project, roster, ["README"])  # committed in 2024 by the test identity
    assert person is None
    assert "any member may review" in reason
    assert _choose(project, roster, [])[0] is None


def test_a_personal_lesson_is_reviewed_by_its_author(project: Path, roster: sqlite3.Connection) -> None:
    fixtures.commit_file(project, "CODEOWNERS", "* @bob\n")
    assert _choose(project, roster, ["README"], scope="personal")[0] == "alice"


@pytest.mark.parametrize(("pattern", "path", "owned"), [
    ("*.proto", "deep/dir/api.proto", True),
    ("/api.proto", "api.proto", True),
    ("/api.proto", "sub/api.proto", False),
    ("docs/", "docs/a/b.md", True),
    ("docs/", "src/docs/b.md", True),
    ("/docs/", "src/docs/b.md", False),
    ("src/*.py", "src/a.py", True),
    ("**/build", "build/out.o", True),
    ("*", "anything/at/all", True),
])
def test_codeowners_patterns(pattern: str, path: str, owned: bool) -> None:
    assert (codeowners(f"{pattern} @bob\n", path) == ["@bob"]) is owned


def test_codeowners_last_matching_rule_wins_and_comments_are_ignored() -> None:
    text = "# owners\n* @alice\n\n*.proto @bob @carol # schema owners\n[Section]\napi.proto\n"
    assert codeowners(text, "api.proto") == []  # a rule without owners unsets them
    assert codeowners(text, "x.proto") == ["@bob", "@carol"]
    assert codeowners(text, "README") == ["@alice"]


def test_the_queue_routes_a_lesson_to_the_codeowner(fleet: Fleet, bare_remote: Path) -> None:
    a, b, c = _team_with_emails(fleet, bare_remote)
    fixtures.commit_file(a.clone, ".github/CODEOWNERS", "*.proto @bob\n")
    fixtures.commit_file(a.clone, "api.proto", "syntax = \"proto3\";\n")
    a.git("push", "--quiet", "origin", "main")
    for m in (b, c):
        m.git("pull", "--quiet", "--ff-only", "origin", "main")
    lesson = propose(a, "Run make gen after editing api.proto", evidence=["file:api.proto"])
    a.ok("sync")
    for m in (b, c):
        m.ok("sync")
    code, out = as_person(b, "review", answers=[("[q]uit", "q\n")])
    assert code == 0, out
    assert lesson in out
    assert "suggested reviewer: bob (CODEOWNERS owner of the evidence files)" in out
    code, out = as_person(c, "review")
    assert (code, lesson in out) == (0, False), out
    assert "nothing to review for you" in out
    code, out = as_person(c, "review", "--all", answers=[("[q]uit", "q\n")])
    assert code == 0 and lesson in out, out
