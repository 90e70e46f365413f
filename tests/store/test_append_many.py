"""``logs.append_many``: a batch (through ``git fast-import`` from BATCH_MIN on) writes exactly the entries
``logs.append`` would write one by one: format v2, each naming the previous one's hash, the same bytes and
commit ids; the chain verifies; a bad record in the batch writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitive.errors import InvalidRecord
from gitive.store import logs, refs, verify
from testing import fixtures
from testing.builders import TEAM_ID, TEAM_SCOPE, machine

A = machine("many-a")
REF = refs.log_ref(A.id, "team")
AT = 1_700_000_000_000


def notes(n: int, first: int = 0) -> list[dict[str, Any]]:
    return [{"type": "team", "name": f"n{first + i}", "founder": A.id} for i in range(n)]


@pytest.mark.parametrize("size", [3, logs.BATCH_MIN, 40])
def test_a_batch_writes_what_one_by_one_appends_write(tmp_path: Path, size: int) -> None:
    one = pygit2.Repository(str(fixtures.init_bare(tmp_path / "one.git")))
    many = pygit2.Repository(str(fixtures.init_bare(tmp_path / "many.git")))
    for repo in (one, many):  # an existing log, continued by the batch
        logs.append(repo, A.key, TEAM_ID, "team", TEAM_SCOPE, notes(1, 999)[0], at=AT)
    singles = [logs.append(one, A.key, TEAM_ID, "team", TEAM_SCOPE, r, at=AT + 1) for r in notes(size)]
    batch = logs.append_many(many, A.key, TEAM_ID, "team", TEAM_SCOPE, notes(size), at=AT + 1)
    assert [e.commit for e in batch] == [e.commit for e in singles]
    assert [e.raw for e in batch] == [e.raw for e in singles]
    assert [e.hash for e in batch] == [e.hash for e in singles]
    assert all(e.version == 2 for e in batch) and batch[0].body["prev"] == logs.entries(many, REF)[0].hash
    result = verify.verify_chain(many, TEAM_ID, REF, A.id, "team", refs.tip(many, REF), lambda _: None,
                                 now=AT)[0]
    assert result.problem is None and len(result.entries) == size + 1
    assert not [r for r in many.references if r.startswith("refs/hive-scratch/")]  # no scratch ref left behind


def test_a_bad_record_in_a_batch_writes_nothing(tmp_path: Path) -> None:
    repo = pygit2.Repository(str(fixtures.init_bare(tmp_path / "r.git")))
    bad = [*notes(logs.BATCH_MIN), {"type": "team", "name": 7}]
    with pytest.raises(InvalidRecord):
        logs.append_many(repo, A.key, TEAM_ID, "team", TEAM_SCOPE, bad, at=AT)
    assert refs.tip(repo, REF) is None
