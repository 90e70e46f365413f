"""Ref names, parsing log refs from every source, and reading tips."""

from __future__ import annotations

import pygit2
import pytest

from gitive.store import refs
from testing.builders import machine

M = machine("m").id


def test_ref_names() -> None:
    assert refs.log_ref(M, "roster") == f"refs/hive/logs/{M}/roster"
    assert refs.bodies_ref(M) == f"refs/hive/bodies/{M}"
    assert refs.presence_ref(M) == f"refs/hive/presence/{M}"
    assert refs.pinned_ref(M, "team") == f"refs/hive-pinned/logs/{M}/team"


@pytest.mark.parametrize(
    ("name", "source"),
    [
        (f"refs/hive/logs/{M}/roster", "local"),
        (f"refs/hive-pinned/logs/{M}/roster", "pinned"),
        (f"refs/hive-remotes/origin/logs/{M}/roster", "origin"),
        (f"refs/hive-remotes/team-store/logs/{M}/roster", "team-store"),
    ],
)
def test_parse_log_ref_recognises_each_source(name: str, source: str) -> None:
    assert refs.parse_log_ref(name) == refs.LogRef(name, source, M, "roster")


def test_parse_log_ref_round_trips_the_names_it_builds() -> None:
    assert refs.parse_log_ref(refs.log_ref(M, "mail")).log == "mail"
    assert refs.parse_log_ref(refs.pinned_ref(M, "mail")).source == "pinned"


@pytest.mark.parametrize(
    "name",
    [
        "refs/heads/main",
        f"refs/hive/bodies/{M}",
        f"refs/hive/logs/{M}",
        f"refs/hive/logs/{M}/",
        f"refs/hive/logs/{M}/a/b",
        "refs/hive/logs/not-a-machine/roster",
        f"refs/hive/logs/{M.upper()}/roster",
        f"refs/hive-remotes/origin/bodies/{M}",
        f"refs/hive-remotes/origin/presence/{M}",
        f"refs/hive-remotes/origin/logs/{M}",
    ],
)
def test_parse_log_ref_ignores_everything_else(name: str) -> None:
    assert refs.parse_log_ref(name) is None


def _commit(repo: pygit2.Repository, message: str) -> str:
    who = pygit2.Signature("t", "t@hive", 0, 0)
    return str(repo.create_commit(None, who, who, message, repo.TreeBuilder().write(), []))


def test_tips_and_tip(bare_repo: pygit2.Repository) -> None:
    a, b = _commit(bare_repo, "a"), _commit(bare_repo, "b")
    bare_repo.references.create(refs.log_ref(M, "team"), a)
    bare_repo.references.create(refs.bodies_ref(M), b)
    bare_repo.references.create("refs/heads/main", a)
    bare_repo.references.create("refs/hive/sym", "refs/heads/main")  # symbolic: skipped
    assert refs.tips(bare_repo, "refs/hive/") == {refs.log_ref(M, "team"): a, refs.bodies_ref(M): b}
    assert refs.tip(bare_repo, refs.log_ref(M, "team")) == a
    assert refs.tip(bare_repo, refs.log_ref(M, "mail")) is None
    assert refs.tip(bare_repo, "not a ref name") is None


def test_force_set_and_delete(bare_repo: pygit2.Repository) -> None:
    a, b = _commit(bare_repo, "a"), _commit(bare_repo, "b")
    name = refs.presence_ref(M)
    refs.force_set(bare_repo, name, a, "first")
    refs.force_set(bare_repo, name, b, "rewrite")
    assert refs.tip(bare_repo, name) == b
    refs.delete(bare_repo, name)
    refs.delete(bare_repo, name)  # deleting a missing ref is fine
    assert refs.tip(bare_repo, name) is None


def test_tips_see_packed_refs(bare_repo: pygit2.Repository) -> None:
    from testing.fixtures import run_git

    a = _commit(bare_repo, "a")
    bare_repo.references.create(refs.log_ref(M, "team"), a)
    run_git(["pack-refs", "--all"], cwd=bare_repo.path)
    assert refs.tips(bare_repo, "refs/hive/") == {refs.log_ref(M, "team"): a}
    b = _commit(bare_repo, "b")
    assert refs.set_if_equals(bare_repo, refs.log_ref(M, "team"), a, b, "move a packed ref")
    assert refs.tip(bare_repo, refs.log_ref(M, "team")) == b
