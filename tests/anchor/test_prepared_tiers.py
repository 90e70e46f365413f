"""Capability tiers on real repositories: the worker has nothing to push with, the anchor's library refuses any ref
but hive/*, and the server guard's anchor option refuses it at the remote: a draft reaches another branch only
in a push the anchor signed (its certificate), whoever a commit names as its author."""

from __future__ import annotations

import subprocess

import pygit2
import pytest

from testing import fixtures
from testing import prepared as prep
from testing.anchor import AnchoredTeam


def _guard(team: AnchoredTeam) -> None:
    from gitive.store import serverhook

    serverhook.install(team.remote, team.alice.team_id, [team.anchor.id])


def _push(machine, spec: str) -> subprocess.CompletedProcess[str]:  # type: ignore[no-untyped-def]
    return subprocess.run(["git", "push", "origin", spec], cwd=machine.clone, capture_output=True, text=True,
                          check=False)


def test_outside_hive_pushes_are_refused_client_side_and_by_the_guard(team: AnchoredTeam) -> None:
    from gitive.anchor.prepared import tiers
    from gitive.store import drafts

    _guard(team)
    base = prep.buggy_project(team.alice)  # a person's commits on main pass the guard
    prep.hand(team.alice, f"fix add\npush: main\npush: hive/own-idea\n{prep.FIX}")  # it has no remote at all
    prep.ticker(team)()
    draft = prep.prepared_records(team.anchor)[-1]
    assert draft["state"] == "drafted", draft
    assert prep.remote_tip(team, "refs/heads/main") == base  # the worker's `git push origin HEAD:main` failed
    assert prep.remote_tip(team, "refs/heads/hive/own-idea") is None  # and its unsigned commit-less push too
    # the library: Free tier pushes refs/heads/hive/* only
    repo = team.anchor.repo
    team.anchor.git("fetch", "--quiet", "origin", f"+{draft['branch']}:refs/remotes/origin/draft")
    for ref in ("refs/heads/main", "refs/heads/feature", "refs/tags/v1", "refs/heads/hive/", "refs/hive/logs/x"):
        with pytest.raises(tiers.TierRefused):
            tiers.push_draft(repo, "origin", draft["head"], ref, None)
    # the guard: a new commit with the anchor's identity outside hive/ is refused, even signed
    signer = drafts.Signer(team.anchor.key, team.anchor.team_id)
    tree = str(repo[draft["head"]].tree_id)
    sneaky = drafts.make(repo, signer, tree, [draft["head"]], "land it myself", 1_700_000_000_000)
    done = _push(team.anchor, f"{sneaky}:refs/heads/main")
    assert done.returncode != 0 and "is the anchor's draft" in done.stderr
    assert prep.remote_tip(team, "refs/heads/main") == base
    # a person's commit on a hive/ branch is refused: only the anchor's signed drafts go there
    team.alice.git("checkout", "--quiet", "-b", "mine")
    fixtures.commit_file(team.alice.clone, "calc.py", "def add(a, b):\n    return b + a\n", "my own fix")
    done = _push(team.alice, "HEAD:refs/heads/hive/fix-add")
    assert done.returncode != 0 and "not a draft signed by the team's anchor" in done.stderr
    # ... and so is one that copies a real draft's trailers onto other content
    message = pygit2.Repository(str(team.remote))[draft["head"]].message
    team.alice.git("commit", "--quiet", "--amend", "--no-verify", "-m", message)
    done = _push(team.alice, "HEAD:refs/heads/hive/fix-add")
    assert done.returncode != 0 and "not a draft signed" in done.stderr
    # the owner's edit goes to hive-edits/, which takes a person's commits (not one posing as the anchor's)
    done = _push(team.alice, "HEAD:refs/heads/hive-edits/fix-add")
    assert done.returncode != 0 and "carries the anchor's identity" in done.stderr
    team.alice.git("commit", "--quiet", "--amend", "--no-verify", "-m", "my own fix")
    assert _push(team.alice, "HEAD:refs/heads/hive-edits/fix-add").returncode == 0


def test_a_draft_touching_ci_config_is_refused_and_never_pushed(team: AnchoredTeam) -> None:
    prep.buggy_project(team.alice)
    task = prep.hand(team.alice, f"fix add\n{prep.FIX}\nwrite: .github/workflows/ci.yml: on: push")
    prep.ticker(team)()
    last = prep.prepared_records(team.anchor)[-1]
    assert last["state"] == "refused" and ".github/workflows/ci.yml" in last["reason"]
    from gitive.anchor.prepared.tasks import branch_name

    assert prep.remote_tip(team, f"refs/heads/{branch_name(task)}") is None


def test_install_hook_with_the_anchor_option_says_so(team: AnchoredTeam) -> None:
    out = team.alice.ok("server", "install-hook", str(team.remote), "--team", team.alice.team_id, "--anchor",
                        team.anchor.id).out
    assert "anchor option on" in out
    bad = team.alice.run("server", "install-hook", str(team.remote), "--anchor", "nope")
    assert bad.code == 1 and "not a machine id" in bad.err
