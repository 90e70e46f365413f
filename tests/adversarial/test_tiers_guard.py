"""The guard's anchor option against an attacker who can push anything: on ``refs/heads/hive/*`` it takes a new
commit only when it is a draft signed by a configured anchor for this team, over exactly its tree and parents;
on any other branch or tag it takes no new commit that carries the anchor's identity without the anchor's signed
push certificate (none here). Commits a branch outside hive/ already holds are not new.

Each example builds a chain of commits of random kinds (genuine drafts, drafts by another key or for another
team, trailers copied onto other trees or parents, bare trailers, the anchor's e-mail, a person's plain
commits), sometimes publishing the chain so far on a branch, and pushes its tip to a hive or an ordinary ref."""

from __future__ import annotations

from pathlib import Path

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitive.store import drafts, guard
from testing.builders import TEAM_ID, machine
from testing.fixtures import init_bare

ANCHOR, OTHER = machine("tiers-anchor"), machine("tiers-other")
KINDS = ("genuine", "other-key", "other-team", "copied-trailer", "reparented", "bare-trailer", "anchor-email",
         "plain", "publish")
PERSON = pygit2.Signature("Alice", "alice@example.com", 1_700_000_000, 0)


def _tree(repo: pygit2.Repository, n: int) -> str:
    blob = repo.create_blob(f"content {n}\n".encode())
    builder = repo.TreeBuilder()
    builder.insert("file.txt", blob, pygit2.enums.FileMode.BLOB)
    return str(builder.write())


class Chain:
    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self.n = 0
        root = repo.create_commit(None, PERSON, PERSON, "root", pygit2.Oid(hex=_tree(repo, 0)), [])
        repo.references.create("refs/heads/main", root)
        self.tip = str(root)
        self.new: list[str] = []  # the kinds since the last publish

    def _plain(self, message: str, who: pygit2.Signature = PERSON, parents: list[str] | None = None,
               tree: str | None = None) -> str:
        self.n += 1
        return str(self.repo.create_commit(None, who, who, message, pygit2.Oid(hex=tree or _tree(self.repo, self.n)),
                                           [pygit2.Oid(hex=p) for p in (parents or [self.tip])]))

    def add(self, kind: str) -> None:
        repo, at = self.repo, 1_700_000_000_000 + self.n
        if kind == "publish":
            repo.references.create(f"refs/heads/published-{self.n}", pygit2.Oid(hex=self.tip), force=True)
            self.n += 1
            self.new = []
            return
        self.n += 1
        tree = _tree(repo, self.n)
        if kind == "genuine":
            tip = drafts.make(repo, drafts.Signer(ANCHOR.key, TEAM_ID), tree, [self.tip], "a draft", at)
        elif kind == "other-key":
            tip = drafts.make(repo, drafts.Signer(OTHER.key, TEAM_ID), tree, [self.tip], "a draft", at)
        elif kind == "other-team":
            tip = drafts.make(repo, drafts.Signer(ANCHOR.key, "ab" * 16), tree, [self.tip], "a draft", at)
        elif kind in ("copied-trailer", "reparented"):
            real = drafts.make(repo, drafts.Signer(ANCHOR.key, TEAM_ID), tree, [self.tip], "a draft", at)
            message = repo[real].message
            if kind == "copied-trailer":
                tip = self._plain(message, parents=[self.tip])  # same trailers, another tree
            else:
                other = self._plain("a sibling", parents=[self.tip])
                tip = self._plain(message, parents=[other], tree=tree)  # same tree, other parents
        elif kind == "bare-trailer":
            tip = self._plain(f"looks official\n\nHive-Anchor: {ANCHOR.id}\n")
        elif kind == "anchor-email":
            name, email = drafts.identity(ANCHOR.id)
            tip = self._plain("plain words", who=pygit2.Signature(name, email, 1_700_000_000, 0))
        else:
            tip = self._plain("a person's commit")
        self.tip = tip
        self.new.append(kind)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(KINDS), min_size=1, max_size=6), st.booleans())
def test_the_anchor_option_takes_only_genuine_drafts_on_hive_and_no_anchor_identity_elsewhere(
        tmp_path_factory: object, kinds: list[str], to_hive: bool) -> None:
    path = Path(tmp_path_factory.mktemp("tiers"))  # type: ignore[attr-defined]
    repo = pygit2.init_repository(str(path / "remote.git"), bare=True)
    chain = Chain(repo)
    for kind in kinds:
        chain.add(kind)
    ref = "refs/heads/hive/task-1" if to_hive else "refs/heads/feature"
    found = guard.check_anchor_branches(repo, [guard.Update(None, chain.tip, ref)], TEAM_ID, [ANCHOR.id], env={})
    expected = all(k == "genuine" for k in chain.new) if to_hive else all(k == "plain" for k in chain.new)
    assert (not found) == expected, (chain.new, to_hive, found)


def test_deleting_a_branch_and_updating_tags_follow_the_same_rule(tmp_path: Path) -> None:
    repo = pygit2.Repository(str(init_bare(tmp_path / "remote.git")))
    chain = Chain(repo)
    chain.add("genuine")
    assert not guard.check_anchor_branches(repo, [guard.Update(chain.tip, None, "refs/heads/hive/x")], TEAM_ID,
                                           [ANCHOR.id])
    [refused] = guard.check_anchor_branches(repo, [guard.Update(None, chain.tip, "refs/tags/v1")], TEAM_ID,
                                            [ANCHOR.id])
    assert "is the anchor's draft" in refused.reason and "no signed push certificate" in refused.reason
    # a draft on its hive branch is not landed: bringing it to main still needs the anchor's certificate
    repo.references.create("refs/heads/hive/x", pygit2.Oid(hex=chain.tip))
    [refused] = guard.check_anchor_branches(repo, [guard.Update(None, chain.tip, "refs/heads/main")], TEAM_ID,
                                            [ANCHOR.id], env={})
    assert "no signed push certificate" in refused.reason
    # once a branch outside hive/ holds it (the anchor landed it), other branches may bring it
    repo.references.create("refs/heads/main", pygit2.Oid(hex=chain.tip), force=True)
    assert not guard.check_anchor_branches(repo, [guard.Update(None, chain.tip, "refs/heads/release")], TEAM_ID,
                                           [ANCHOR.id], env={})
