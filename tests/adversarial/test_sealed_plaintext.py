"""No sealed plaintext in any object of the team store or the remote (issue 9 item 3, docs/scopes.md).

Hypothesis writes personal and sealed project lessons with arbitrary text, applicability, tags and symptoms,
reviews them (with edits), retracts some, and syncs every machine; then every object of the remote and of each
machine's store (``git cat-file --batch-all-objects``: reachable from a ref or not) is searched for every piece
of plaintext, and for the lesson ids and body hashes, which are derived from it. One team serves every example.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testing import fixtures
from testing.machines import Fleet, Machine

_WORDS = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")), min_size=12, max_size=80)
_TAGS = st.lists(st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=12, max_size=24), max_size=2)


class Team:
    def __init__(self, base: Path) -> None:
        self.remote = fixtures.init_bare(base / "remote.git")
        fleet = Fleet(base / "fleet")
        self.laptop, self.bob = fleet.team(self.remote, ("alice", "laptop"), ("bob", "desk"))
        code = fleet.invite(self.laptop, "--person", "alice")
        self.studio = fleet.join(fleet.machine("studio", self.remote), code, "alice", same_person_as=self.laptop)
        fixtures.commit_file(self.laptop.clone, "api.proto", "syntax = 1;\n", "api")
        self.laptop.git("push", "--quiet", "origin", "main")
        for m in (self.bob, self.studio):
            m.git("pull", "--quiet", "--ff-only", "origin", "main")
        self.laptop.decided("project", "confirm", "bob")
        self.sync()
        self.examples = 0

    @property
    def machines(self) -> list[Machine]:
        return [self.laptop, self.studio, self.bob]

    def sync(self) -> None:
        for m in (*self.machines, self.laptop):
            m.ok("sync")


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    import os

    old = os.environ.get("GITIVE_HOME")
    yield Team(tmp_path_factory.mktemp("sealed-plaintext"))
    if old is not None:
        os.environ["GITIVE_HOME"] = old


def _objects(repo: Path) -> Iterator[bytes]:
    out = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True,
                         check=True).stdout
    i = 0
    while i < len(out):
        header_end = out.index(b"\n", i)
        size = int(out[i:header_end].split(b" ")[2])
        yield out[header_end + 1:header_end + 1 + size]
        i = header_end + 1 + size + 1


def _propose(m: Machine, text: str, applicability: str, tags: list[str], symptoms: list[str], *scope: str) -> str:
    args = [a for t in tags for a in ("--tag", t)] + [a for s in symptoms for a in ("--symptom", s)]
    out = m.ok("lessons", "propose", "--kind", "Gotcha", "--text", text, "--applicability", applicability,
               "-e", "file:api.proto", *args, *scope).out.strip()
    assert len(out) == 64, out
    return out


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.fixed_dictionaries({
    "where": st.sampled_from(["personal on the laptop", "personal on the studio", "sealed project by alice",
                              "sealed project by bob"]),
    "text": _WORDS, "applicability": _WORDS, "edit": st.one_of(st.none(), _WORDS), "tags": _TAGS,
    "symptoms": st.lists(_WORDS, max_size=2), "review": st.booleans(), "retract": st.booleans()}))
def test_no_sealed_plaintext_in_any_object_of_the_store_or_the_remote(team: Team, case: dict[str, Any]) -> None:
    team.examples += 1  # one team serves every example: the same drawn text twice is a new lesson each time
    text, applicability = f"T{team.examples} " + case["text"], "A " + case["applicability"]
    symptoms = ["S " + s for s in case["symptoms"]]
    where = case["where"]
    author = {"personal on the laptop": team.laptop, "personal on the studio": team.studio,
              "sealed project by alice": team.laptop, "sealed project by bob": team.bob}[where]
    scope = ("--scope", "personal") if where.startswith("personal") else ("--sealed",)
    lesson = _propose(author, text, applicability, case["tags"], symptoms, *scope)
    team.sync()
    secrets = [text, applicability, *case["tags"], *symptoms, lesson]
    if case["review"]:
        reviewer = (team.studio if author is team.laptop else team.laptop) if where.startswith("personal") \
            else (team.bob if author is team.laptop else team.laptop)
        edit = ["--text", "E " + case["edit"]] if case["edit"] is not None else []
        secrets += [e for e in edit[1:]]
        reviewer.decided("review", "approve", lesson, *edit, "--note", "N " + case["text"][::-1])
        secrets.append("N " + case["text"][::-1])
        team.sync()
    shown = author.json("lessons", "show", lesson)
    assert shown["text"] == (("E " + case["edit"]) if case["review"] and case["edit"] is not None else text)
    secrets.append(shown["body_hash"])
    if case["retract"]:
        author.decided("retract", lesson, "--reason", "R " + case["text"])
        secrets.append("R " + case["text"])
        team.sync()
    needles = [s.encode() for s in secrets if s.strip()]
    for repo in (team.remote, *(m.clone for m in team.machines)):
        for data in _objects(repo):
            found = [n for n in needles if n in data]
            assert not found, f"plaintext {found[0][:40]!r} in an object of {repo}"
