"""Presence snapshots: versioned writes, and readers that take the newest and never go back."""

from __future__ import annotations

from pathlib import Path

import pygit2

from gitive.store import presence, refs, snapshots
from testing.builders import TEAM_ID, machine

OWNER = machine("owner")


def _tip(repo: pygit2.Repository) -> str:
    return refs.tip(repo, refs.presence_ref(OWNER.id))


def test_publish_writes_only_changes_and_goes_up_in_version(bare_repo: pygit2.Repository) -> None:
    assert presence.publish(bare_repo, OWNER.key, TEAM_ID, b'{"s":1}')
    first = _tip(bare_repo)
    assert not presence.publish(bare_repo, OWNER.key, TEAM_ID, b'{"s":1}')
    assert presence.publish(bare_repo, OWNER.key, TEAM_ID, b'{"s":2}')
    found = snapshots.check(bare_repo, TEAM_ID, "presence", OWNER.id, _tip(bare_repo))
    assert found.version == 2 and bare_repo[found.commit].parent_ids == []
    assert snapshots.check(bare_repo, TEAM_ID, "presence", OWNER.id, first).version == 1


def test_a_reader_takes_the_newest_and_refuses_an_older_one_later(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    tips = []
    for i in range(3):
        presence.publish(repo, OWNER.key, TEAM_ID, f'{{"s":{i}}}'.encode())
        tips.append(_tip(repo))
    forged = snapshots.write(repo, machine("stranger").key, TEAM_ID, "presence", repo[tips[0]].tree_id, "x", 99)
    found = presence.newest(repo, TEAM_ID, OWNER.id, [tips[0], tips[2], forged])
    assert found is not None and (found.snapshot.version, found.data) == (3, b'{"s":2}')
    # a replay of version 1 alone, later in the same process (a daemon), still shows version 3
    again = presence.newest(repo, TEAM_ID, OWNER.id, [tips[0]])
    assert again is not None and again.snapshot.version == 3
    assert presence.newest(repo, TEAM_ID, OWNER.id, [forged]) is None


def test_shape_problem_wants_exactly_one_small_presence_file(bare_repo: pygit2.Repository) -> None:
    presence.publish(bare_repo, OWNER.key, TEAM_ID, b"{}")
    good = snapshots.check(bare_repo, TEAM_ID, "presence", OWNER.id, _tip(bare_repo))
    assert presence.shape_problem(bare_repo, good) is None
    builder = bare_repo.TreeBuilder()
    builder.insert("other.json", bare_repo.create_blob(b"{}"), pygit2.enums.FileMode.BLOB)
    bad = snapshots.write(bare_repo, OWNER.key, TEAM_ID, "presence", builder.write(), "p", 5)
    assert presence.shape_problem(bare_repo, snapshots.check(bare_repo, TEAM_ID, "presence", OWNER.id, bad))
