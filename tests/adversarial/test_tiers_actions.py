"""The tiers in code, against an agent with a shell that tries to get an action past them: the Free tier takes
no ref but ``refs/heads/hive/<name>``; an Approved action goes through only with an authorization whose
``diff_hash`` and ``base`` are those of exactly the change acted on (any other byte, file, mode or base
refuses); a change touching CI, settings or CODEOWNERS is refused whatever is approved."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from gitive.anchor.prepared import tiers
from gitive.store import diffs

WHO = pygit2.Signature("t", "t@example.com", 1_700_000_000, 0)
FILES = ("src/app.py", "src/lib/util.py", "README.md", "tests/test_app.py", ".github/workflows/ci.yml",
         "CODEOWNERS", "docs/guide.md")
contents = st.one_of(st.none(), st.binary(max_size=40))
changes = st.dictionaries(st.sampled_from(FILES), contents, min_size=1, max_size=4)


def _commit(repo: pygit2.Repository, parent: str | None, files: dict[str, bytes | None]) -> str:
    index = pygit2.Index()
    if parent:
        index.read_tree(repo[parent].tree)
    for path, data in files.items():
        if data is None:
            if path in index:
                index.remove(path)
        else:
            index.add(pygit2.IndexEntry(path, repo.create_blob(data), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(repo)
    return str(repo.create_commit(None, WHO, WHO, "c", tree, [pygit2.Oid(hex=parent)] if parent else []))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    path = Path(tmp_path_factory.mktemp("actions"))
    found = pygit2.init_repository(str(path / "r.git"), bare=True)
    found.base = _commit(found, None, {f: f"{f} v0\n".encode() for f in FILES if not f.startswith((".github",
                                                                                                   "CODEOWNERS"))})
    return found


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes, changes)
def test_an_approval_covers_exactly_the_change_it_names(repo: pygit2.Repository, approved: dict[str, bytes | None],
                                                       acted: dict[str, bytes | None]) -> None:
    base = repo.base
    seen = _commit(repo, base, approved)
    act = _commit(repo, base, acted)
    auth = tiers.Authorization("review", {}, diffs.diff_hash(repo, base, seen), base)
    same = repo[seen].tree_id == repo[act].tree_id
    paths = diffs.stat(repo, base, act).paths
    blocked = bool(tiers.outside(paths))
    assume(paths)  # a change that changes nothing is not a change
    try:
        tiers.check_approved(repo, auth, base, act, "main", ())
        passed = True
    except tiers.TierRefused:
        passed = False
    assert passed == (same and not blocked)
    # the same change on another base is never covered
    other_base = _commit(repo, base, {"README.md": b"moved\n"})
    moved = tiers.Authorization("review", {}, auth.diff_hash, other_base)
    with pytest.raises(tiers.TierRefused):
        tiers.check_approved(repo, moved, base, act, "main", ())


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefgh/-_.*", min_size=0, max_size=40))
def test_the_free_tier_takes_only_hive_branches(suffix: str) -> None:
    for prefix in ("refs/heads/", "refs/tags/", "refs/hive/", "refs/heads/hive-edits/", "refs/remotes/origin/",
                   "", "heads/hive/"):
        with pytest.raises(tiers.TierRefused):
            tiers.check_free_push(prefix + suffix)
    name = "refs/heads/hive/" + suffix
    ok = bool(suffix) and ".." not in suffix and not suffix.endswith("/") and "//" not in suffix
    try:
        tiers.check_free_push(name)
        assert ok
    except tiers.TierRefused:
        assert not ok


def test_no_authorization_and_protected_targets_refuse(repo: pygit2.Repository) -> None:
    head = _commit(repo, repo.base, {"src/app.py": b"new\n"})
    with pytest.raises(tiers.TierRefused, match="needs an approving review"):
        tiers.check_approved(repo, None, repo.base, head, "main", ())
    auth = tiers.Authorization("review", {}, diffs.diff_hash(repo, repo.base, head), repo.base)
    tiers.check_approved(repo, auth, repo.base, head, "main", ())
    with pytest.raises(tiers.TierRefused, match="protected"):
        tiers.check_approved(repo, auth, repo.base, head, "release/2", ("release/*",))


@given(st.text(alphabet="ab.-", min_size=1, max_size=12), st.text(alphabet="ab.-", min_size=1, max_size=12))
def test_a_single_star_never_crosses_a_folder(folder: str, name: str) -> None:
    assert tiers.matches(f"{folder}/{name}", [f"{folder}/*"])
    assert not tiers.matches(f"{folder}/x/{name}", [f"{folder}/*"])
    assert tiers.matches(f"{folder}/x/{name}", [f"{folder}/**"])
