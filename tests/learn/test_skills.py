"""Skills export: verified lessons as Agent Skills on a ``hive/skills-…`` branch; review, supersede, export again."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitive.cli.main import run
from gitive.index.refresh import fresh_index
from gitive.learn import skills
from gitive.lessons.propose import propose
from gitive.lessons.retract import retract
from gitive.lessons.review import review
from gitive.team.hive import Hive, open_hive
from testing import fixtures, people

NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")  # Agent Skills: lowercase, digits, single hyphens


def _add(hive: Hive, text: str, tags: list[str], *, scope: str = "project", approve: bool = True,
         supersedes: str | None = None, applicability: str = "") -> str:
    with fresh_index(hive) as (conn, _):
        made = propose(hive, conn, kind="Gotcha", text=text, applicability=applicability,
                       evidence=["file:src/app/settings.py"], tags=tags, scope=scope, supersedes=supersedes)
        if approve:
            review(hive, conn, made.id, approved=True, note="", signer=people.person_key())
    return made.id


def _export(*args: str, capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    assert run(["skills", "export", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _files(clone: Path, rev: str, directory: str) -> dict[str, str]:
    listed = fixtures.run_git(["ls-tree", "-r", "--name-only", rev, "--", directory], cwd=clone).split()
    return {p: fixtures.run_git(["show", f"{rev}:{p}"], cwd=clone) for p in listed}


def _check_format(files: dict[str, str], root: str) -> dict[str, dict[str, Any]]:
    """Every file is <root>/<name>/SKILL.md with front matter the Agent Skills format accepts."""
    out = {}
    for path, text in files.items():
        folder, file = path.removeprefix(root + "/").split("/")
        assert file == "SKILL.md"
        assert text.startswith("---\n")
        front = yaml.safe_load(text[4:].split("\n---\n", 1)[0])
        assert set(front) <= {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
        assert front["name"] == folder and NAME.match(front["name"]) and len(front["name"]) <= 64
        assert 0 < len(front["description"]) <= 1024
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in front["metadata"].items())
        out[folder] = front
    return out


@pytest.fixture
def hive(team_clone: Path) -> Hive:
    return open_hive(team_clone)


def test_export_review_supersede_and_export_again(hive: Hive, team_clone: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    settings = _add(hive, "Settings are read once at import; reload them in tests.", ["settings"],
                    applicability="Tests that change settings")
    cache = _add(hive, "Cache keys carry the tenant prefix.", ["cache"], applicability="Caching anything")
    team = _add(hive, "Commit messages follow Conventional Commits.", ["git"], scope="team")
    unreviewed = _add(hive, "Maybe settings should be a singleton.", ["settings"], approve=False)
    mine = _add(hive, "I like tabs.", ["style"], scope="personal")
    head = fixtures.run_git(["rev-parse", "HEAD"], cwd=team_clone).strip()

    (claude, codex) = _export("--harness", "claude", "--harness", "codex", capsys=capsys)
    assert (claude["branch"], codex["branch"]) == ("refs/heads/hive/skills-claude", "refs/heads/hive/skills-codex")
    assert claude["base"] == head and {c["what"] for c in claude["changes"]} == {"added"}
    assert fixtures.run_git(["rev-parse", "refs/heads/hive/skills-claude^"], cwd=team_clone).strip() == head
    assert fixtures.run_git(["status", "--porcelain"], cwd=team_clone) == ""  # the working tree is untouched
    assert not (team_clone / ".claude" / "skills").exists()
    front = _check_format(_files(team_clone, "hive/skills-claude", ".claude/skills"), ".claude/skills")
    assert _check_format(_files(team_clone, "hive/skills-codex", ".agents/skills"), ".agents/skills").keys() == front.keys()
    exported = {i for f in front.values() for i in f["metadata"]["gitive-lessons"].split()}
    assert exported == {settings, cache, team} and not {unreviewed, mine} & exported
    assert "gitive-team-git" in front and "Use when: Tests that change settings" in front[
        next(n for n in front if n.endswith("-settings"))]["description"]

    # A person reviews and merges the change; then a lesson is superseded and another retracted.
    fixtures.run_git(["merge", "--quiet", "--ff-only", "hive/skills-claude"], cwd=team_clone)
    newer = _add(hive, "Settings are cached; call get_settings.cache_clear() in tests.", ["settings"],
                 supersedes=settings)
    with fresh_index(hive) as (conn, _):
        retract(hive, conn, cache, "wrong: keys are namespaced by the client", people.person_key())
    (again,) = _export("--harness", "claude", capsys=capsys)
    by_name = {c["name"]: c for c in again["changes"]}
    settings_skill = next(n for n in by_name if n.endswith("-settings"))
    cache_skill = next(n for n in by_name if n.endswith("-cache"))
    assert by_name[settings_skill]["what"] == "updated" and by_name[settings_skill]["added"] == [newer]
    assert by_name[settings_skill]["removed"] == [[settings, f"superseded by {newer[:12]}"]]
    assert by_name[cache_skill]["what"] == "removed" and by_name[cache_skill]["removed"] == [[cache, "retracted"]]
    assert by_name["gitive-team-git"]["what"] == "unchanged"
    after = _files(team_clone, "hive/skills-claude", ".claude/skills")
    assert not any(cache_skill in p for p in after)
    ids = {i for f in _check_format(after, ".claude/skills").values() for i in f["metadata"]["gitive-lessons"].split()}
    assert ids == {newer, team}
    assert "Settings are read once" not in "".join(after.values())


def test_a_hand_edited_skill_is_kept_unless_forced(hive: Hive, team_clone: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    lesson = _add(hive, "Settings are read once at import.", ["settings"])
    _export(capsys=capsys)
    fixtures.run_git(["merge", "--quiet", "--ff-only", "hive/skills-claude"], cwd=team_clone)
    (path,) = (team_clone / ".claude" / "skills").glob("*/SKILL.md")
    path.write_text(path.read_text() + "\nOur own note.\n")
    fixtures.run_git(["commit", "--quiet", "-am", "note"], cwd=team_clone)
    with fresh_index(hive) as (conn, _):
        retract(hive, conn, lesson, "not true any more", people.person_key())
    (kept,) = _export(capsys=capsys)
    assert kept["branch"] is None and "edited by hand" in kept["changes"][0]["what"]
    (forced,) = _export("--force", capsys=capsys)
    assert forced["changes"][0]["what"] == "removed" and forced["branch"] == "refs/heads/hive/skills-claude"


def test_exporting_twice_proposes_the_same_commit(hive: Hive, capsys: pytest.CaptureFixture[str]) -> None:
    _add(hive, "Settings are read once at import.", ["settings"])
    (first,) = _export(capsys=capsys)
    (second,) = _export(capsys=capsys)
    assert (second["commit"], second["moved"], first["moved"]) == (first["commit"], False, True)


def test_an_unknown_harness_or_base_is_a_clear_error(hive: Hive, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["skills", "export", "--harness", "vim"]) == 1
    assert "unknown harness 'vim'" in capsys.readouterr().err
    assert run(["skills", "export", "--base", "no-such-branch"]) == 1
    assert "names no commit" in capsys.readouterr().err


def test_names_and_descriptions_stay_within_the_format() -> None:
    long = [{"id": f"{n:064x}", "kind": "Gotcha", "text": "x " * 300, "applicability": "when " * 100, "at": n,
             "tags": ["A Very Long Topic Name With Spaces And Symbols!!"], "state": "verified", "scope": "team",
             "project": None, "evidence": []} for n in range(50)]
    (skill,) = skills.group(long, "p", "host/org/repo")
    assert NAME.match(skill.name) and len(skill.name) <= 64 and len(skill.lessons) == skills.MAX_LESSONS
    assert len(skills.description(skill)) <= 1024
    parsed = skills.parse(skills.render(skill))
    assert parsed is not None and parsed[0]["name"] == skill.name


def test_a_skill_reads_use_when_once_and_is_named_after_the_project() -> None:
    lessons = [{"id": "a" * 64, "kind": "Gotcha", "text": "Reload settings in tests.", "at": 1, "tags": ["settings"],
                "applicability": "When a test changes settings.", "state": "verified", "scope": "project",
                "project": "p", "evidence": []}]
    (skill,) = skills.group(lessons, "p", skills.project_name("github.com/Acme/Payments-API", "/src/pay"))
    assert skill.name.endswith("payments-api-settings")
    described = skills.description(skill)
    assert "Use when: a test changes settings." in described and "when when" not in described.lower()
    # a remote that is a folder on disk (a bare clone named "remote" or "origin.git"): the work tree's name
    assert skills.project_name("/srv/git/remote", "/home/alice/src/storefront") == "storefront"
    assert skills.project_name("storefront", "/home/alice/src/storefront") == "storefront"  # no remote at all
