"""The anchor's worker as an attacker: a real worker process (``testing/hostile_worker.py``) in the real sandbox
(bubblewrap) tries to read the anchor's machine key and environment, see its processes, write into its
repository, reach the network, and push as a person with every client-side trick (``--no-verify``,
``core.hooksPath``, ``env -u GIT_CONFIG_COUNT``, the remote by path or URL) to main, a new branch and a tag.
Every try is refused, the remote keeps its refs, and the anchor still drafts the fix (so the worker did run).
Then what a worker leaves behind: a ref beside its task branch, a commit not on top of the base, a nested
repository, a question file linked to the key: each stops the attempt (or the question) before anything
leaves the machine."""

from __future__ import annotations

import socket
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from gitive.anchor.prepared import sandbox
from testing import fixtures
from testing import prepared as prep
from testing.anchor import AnchoredTeam

HOSTILE = Path(prep.WORKER).parent / "hostile_worker.py"
SECRET_NAME, SECRET_VALUE = "ANCHOR_ONLY_TOKEN", "anchor-only-7f3a9c"

pytestmark = pytest.mark.skipif(sandbox.available() is None, reason="bubblewrap (bwrap) is not installed")


def _ticker(team: AnchoredTeam, command: tuple[str, ...]) -> Any:
    tick = prep.ticker(team)
    tick.anchor.config.workers["fix"] = replace(tick.anchor.config.workers["fix"], command=command)
    return tick


def _refs(team: AnchoredTeam) -> dict[str, str]:
    return {k: v for k, v in fixtures.ref_tips(team.remote, "refs/").items() if not k.startswith("refs/hive/")}


def _report(team: AnchoredTeam) -> list[list[str]]:
    record = prep.prepared_records(team.anchor)[-1]
    assert record["state"] == "drafted", record
    team.alice.git("fetch", "--quiet", "origin", record["branch"])
    text = team.alice.git("show", f"{record['head']}:attacks.tsv")
    return [line.split("\t") for line in text.splitlines()]


def test_a_hostile_worker_reaches_nothing_and_pushes_nothing(team: AnchoredTeam, monkeypatch: Any) -> None:
    prep.buggy_project(team.alice)
    listener = socket.create_server(("127.0.0.1", 0))  # a service on the anchor's own loopback
    port = listener.getsockname()[1]
    targets = {"key": team.anchor.home / "machine.key", "home": team.anchor.home, "repo": team.anchor.clone,
               "remote": team.remote, "port": port, "secret": SECRET_NAME}
    assert Path(targets["key"]).is_file()
    brief = "fix add\n" + "".join(f"target: {k}={v}\n" for k, v in targets.items()) + prep.FIX
    prep.hand(team.alice, brief)
    monkeypatch.setenv(SECRET_NAME, SECRET_VALUE)
    before = _refs(team)
    _ticker(team, (sys.executable, str(HOSTILE)))()
    listener.close()
    rows = _report(team)
    attacks = {row[0] for row in rows}
    assert len(rows) >= 35 and {"read-machine-key", "read-parent-environ", "push-origin-main-no-verify",
                                "push-remote-path-main-hookspath", "push-env-u-GIT_CONFIG_COUNT",
                                "connect-host-loopback", "write-anchor-refs"} <= attacks, rows
    accepted = [row for row in rows if row[1] == "accepted"]
    print("\n".join(["attack\tresult\tdetail", *("\t".join(row) for row in rows)]))  # the closing note's table
    assert not accepted, accepted
    record = prep.prepared_records(team.anchor)[-1]
    after = _refs(team)
    assert after.pop(record["branch"]) == record["head"]  # the one ref that moved: the anchor's own push
    assert after == before, (before, after)  # main as it was, no new branch, no tag
    draft = record["head"]
    assert "alice" not in team.alice.git("log", "-1", "--format=%an %ae", draft).lower()


def _leaves(team: AnchoredTeam, shell: str) -> tuple[dict[str, Any], dict[str, str]]:
    """Hand a task whose worker runs ``shell`` in the worktree after the fix; the attempt's last record, and
    the remote's branches and tags before the anchor ran."""
    prep.buggy_project(team.alice)
    prep.hand(team.alice)
    before = _refs(team)
    _ticker(team, ("/bin/sh", "-c", f"sed -i 's/a - b/a + b/' calc.py && {shell}"))()
    return prep.prepared_records(team.anchor)[-1], before


@pytest.mark.parametrize(("shell", "words"), [
    ("git tag v1", "refs/tags/v1"),
    ("git branch main", "refs/heads/main"),
    ("git checkout -q --orphan x && git commit -qm other", "refs/heads/x"),
    ('git checkout -q "$(git commit-tree HEAD^{tree} -m root)"', "not on top of the base"),
    ("git commit -qam fix && git checkout -q HEAD~2 && git commit -q --allow-empty -m beside", "not on top"),
    ("mkdir sub && git init -q sub", "git repository inside the worktree"),
])
def test_what_a_worker_leaves_outside_its_branch_stops_the_attempt(team: AnchoredTeam, shell: str,
                                                                   words: str) -> None:
    record, before = _leaves(team, shell)
    assert record["state"] == "refused" and words in record["reason"], record
    assert _refs(team) == before
    assert not any(k.startswith("refs/heads/hive/") for k in fixtures.ref_tips(team.remote, "refs/heads/"))


def test_commits_on_top_of_the_base_are_fine_and_the_draft_is_the_anchors(team: AnchoredTeam) -> None:
    record, _ = _leaves(team, "git -c user.email=alice@example.com -c user.name=Alice commit -qam 'alice fixed it'")
    assert record["state"] == "drafted", record
    team.alice.git("fetch", "--quiet", "origin", record["branch"])
    assert team.alice.git("log", "-1", "--format=%ae", record["head"]).startswith("anchor+")


def test_a_question_file_linked_to_the_key_shows_no_key(team: AnchoredTeam) -> None:
    key = team.anchor.home / "machine.key"
    record, _ = _leaves(team, f'ln -s {key} "$GITIVE_QUESTION_FILE"; echo > /dev/null')
    assert record["state"] != "question" and key.read_bytes().hex()[:16] not in str(record)
