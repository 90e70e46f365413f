"""Standing approvals against someone who writes the records themselves: any field changed after signing breaks
the gesture or the id; readers refuse over-30-day expiries, security kinds and perimeters reaching CI,
settings or CODEOWNERS; and the perimeter is checked by code alone: a change is covered only when every path
matches, the line total fits, every change type holds and no test or assertion is removed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nacl.signing import SigningKey

from gitive.anchor.prepared import standing, tiers
from gitive.core import gesture
from gitive.core.keys import machine_id
from gitive.store import diffs

AUTHOR = machine_id(SigningKey.generate())
TEAM = "5a" * 16
NOW = 1_800_000_000_000
DAY = 86_400_000


class _Person:
    def __init__(self) -> None:
        self.key = SigningKey.generate()
        self.public = self.key.verify_key.encode().hex()

    def sign(self, data: bytes) -> Any:
        return self.key.sign(data).signature


PERSON = _Person()


def _valid(**over: Any) -> dict[str, Any]:
    body = {"type": "standing-approval", "kind": "dep-bump", "repo": "ab" * 32,
            "perimeter": {"paths": ["deps.lock"], "changes": ["version-lines"], "max_lines": 4, "checks": []},
            "earned_from": [{"author": AUTHOR, "log": "team", "seq": 3}], "sponsor": "alice",
            "expires": NOW + 14 * DAY, "created": NOW, **over}
    return gesture.sign(PERSON, TEAM, AUTHOR, {**body, "id": standing.standing_id(AUTHOR, body)})


FIELDS = st.sampled_from(["kind", "repo", "expires", "created", "sponsor", "max_lines", "paths"])


@settings(max_examples=150, deadline=None)
@given(FIELDS, st.integers(1, 10**6))
def test_a_field_changed_after_signing_breaks_the_gesture_and_the_id(field: str, n: int) -> None:
    record = _valid()
    assert gesture.key_of(TEAM, AUTHOR, record) == PERSON.public and standing.record_problem(record, AUTHOR, NOW) is None
    forged = {**record, "perimeter": dict(record["perimeter"])}
    if field in ("max_lines", "paths"):
        forged["perimeter"][field] = n if field == "max_lines" else [f"p{n}/**"]
    elif field in ("expires", "created"):
        forged[field] = record[field] + n
    else:
        forged[field] = f"x{n}" if field != "repo" else f"{n:064x}"
    assert gesture.key_of(TEAM, AUTHOR, forged) is None
    assert standing.record_problem(forged, AUTHOR, NOW) is not None  # the id no longer matches
    assert gesture.key_of(TEAM, machine_id(SigningKey.generate()), record) is None  # copied to another machine


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 90))
def test_readers_refuse_an_expiry_past_thirty_days(days: int) -> None:
    record = _valid(expires=NOW + days * DAY + 1)
    assert (standing.record_problem(record, AUTHOR, NOW) is None) == (days < 30)


@given(st.sampled_from([".github/**", "**", "**/*.yml", ".gitlab-ci.yml", "CODEOWNERS", "*", ".circleci/*",
                        "**/CODEOWNERS", "Jenkins*", ".github/*/*"]))
def test_a_perimeter_reaching_ci_settings_or_codeowners_is_refused(glob: str) -> None:
    assert "never covered" in (standing.perimeter_problem(
        {"paths": ["deps.lock", glob], "changes": [], "max_lines": 5, "checks": []}) or "")


def test_security_kinds_are_refused() -> None:
    assert "security" in (standing.record_problem(_valid(kind="security-fix"), AUTHOR, NOW) or "")


# --- the perimeter, mechanically ----------------------------------------------------------------------------

WHO = pygit2.Signature("t", "t@example.com", 1_700_000_000, 0)
BASE_FILES = {"deps.lock": "requests==2.31.0\nflask==3.0.0\n", "src/app.py": "x = 1\n",
              "tests/test_app.py": "def test_x():\n    assert True\n"}
EDITS = st.sampled_from(["bump", "rename-dep", "add-dep", "edit-src", "drop-assert", "delete-test", "add-test"])


def _commit(repo: pygit2.Repository, parent: str | None, files: dict[str, str | None]) -> str:
    index = pygit2.Index()
    if parent:
        index.read_tree(repo[parent].tree)
    for path, text in files.items():
        if text is None:
            index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB))
    return str(repo.create_commit(None, WHO, WHO, "c", index.write_tree(repo), [pygit2.Oid(hex=parent)] if parent
                                  else []))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    found = pygit2.init_repository(str(Path(tmp_path_factory.mktemp("perimeter")) / "r.git"), bare=True)
    found.base = _commit(found, None, dict(BASE_FILES))
    return found


def _apply(edits: list[str]) -> dict[str, str | None]:
    lock, src = BASE_FILES["deps.lock"], BASE_FILES["src/app.py"]
    test: str | None = BASE_FILES["tests/test_app.py"]
    for e in edits:
        if e == "bump":
            lock = lock.replace("2.31.0", "2.31.1")
        elif e == "rename-dep":
            lock = lock.replace("flask==3.0.0", "quart==3.0.0")
        elif e == "add-dep":
            lock += "click==8.1.7\n"
        elif e == "edit-src":
            src = "x = 2\n"
        elif e == "drop-assert":
            test = "def test_x():\n    pass\n"
        elif e == "delete-test":
            test = None
        elif e == "add-test":
            test = (test or "") + "def test_y():\n    assert 1\n"
    return {"deps.lock": lock, "src/app.py": src, "tests/test_app.py": test}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(EDITS, min_size=1, max_size=4), st.integers(1, 6),
       st.sampled_from([("deps.lock",), ("deps.lock", "src/**"), ("**/*.lock", "tests/**", "src/*.py")]),
       st.sampled_from([(), ("version-lines",), ("additions",), ("text",)]))
def test_the_perimeter_is_checked_by_code_alone(repo: pygit2.Repository, edits: list[str], max_lines: int,
                                                paths: tuple[str, ...], changes: tuple[str, ...]) -> None:
    files = _apply(edits)
    head = _commit(repo, repo.base, files)
    if head == repo.base or not diffs.changes(repo, repo.base, head):
        return
    perimeter = {"paths": list(paths), "changes": list(changes), "max_lines": max_lines, "checks": []}
    verdict = standing.outside_perimeter(repo, repo.base, head, perimeter)
    stat = diffs.stat(repo, repo.base, head)
    lines = diffs.line_changes(repo, repo.base, head)
    ok = all(tiers.matches(p, paths) for p in stat.paths) and stat.insertions + stat.deletions <= max_lines
    if "additions" in changes:
        ok = ok and all(not gone for gone, _ in lines.values())
    if "version-lines" in changes:
        ok = ok and all(len(g) == len(a) and all(any(c.isdigit() for c in x) and "." in x for x in g + a)
                        for g, a in lines.values())
    removed_test = "tests/test_app.py" in stat.removed or any(
        "assert" in line for line in lines.get("tests/test_app.py", ([], []))[0])
    ok = ok and not removed_test
    assert (verdict is None) == ok, (edits, perimeter, verdict)
