"""One project id per repository however it was cloned: ssh, scp-like and https URLs of it agree."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from gitive.team.projects import normalize_url, project_id, project_label
from testing import fixtures

SAME = [
    "git@github.com:Acme/Api.git",
    "https://github.com/acme/api",
    "ssh://git@github.com/acme/api.git",
    "https://github.com/Acme/Api.git",
    "https://github.com/acme/api/",
    "https://user@github.com/acme/api.git",
    "ssh://git@github.com:22/acme/api",
    "git://github.com/acme/api.git",
    "GitHub.com:acme/api",
]


@pytest.mark.parametrize("url", SAME)
def test_normalize_url_maps_every_form_of_one_repository_to_one_https_url(url: str) -> None:
    assert normalize_url(url) == "https://github.com/acme/api"


@pytest.mark.parametrize(("one", "other"), [
    ("git@github.com:acme/api.git", "git@github.com:acme/api2.git"),
    ("git@github.com:acme/api.git", "git@gitlab.com:acme/api.git"),
    ("https://github.com/acme/api", "https://github.com/other/api"),
    ("https://github.com/acme/api", "https://github.com/acme/api/wiki"),
])
def test_normalize_url_keeps_different_repositories_apart(one: str, other: str) -> None:
    assert normalize_url(one) != normalize_url(other)


def test_normalize_url_of_nested_groups_keeps_the_whole_path() -> None:
    assert normalize_url("git@gitlab.com:Group/Sub/Repo.git") == "https://gitlab.com/group/sub/repo"
    assert normalize_url("https://gitlab.com/group/sub/repo.git") == "https://gitlab.com/group/sub/repo"


def test_normalize_url_of_a_local_path_is_a_file_url(tmp_path: Path) -> None:
    bare = fixtures.init_bare(tmp_path / "Remote.git")
    assert normalize_url(str(bare)).startswith("file://")
    assert normalize_url(str(bare)) == normalize_url(str(tmp_path / "Remote.git") + "/")
    assert normalize_url(f"file://{bare}") == normalize_url(f"file://{bare}/")


def test_ssh_and_https_clones_share_one_project_id(git_repo: Path) -> None:
    ids = set()
    for url in ("git@github.com:Acme/Api.git", "https://github.com/acme/api", "ssh://git@github.com/acme/api.git"):
        if not fixtures.run_git(["remote"], cwd=git_repo).strip():
            fixtures.run_git(["remote", "add", "origin", url], cwd=git_repo)
        else:
            fixtures.run_git(["remote", "set-url", "origin", url], cwd=git_repo)
        repo = pygit2.Repository(str(git_repo))
        ids.add(project_id(repo))
        assert project_label(repo).lower() == "github.com/acme/api"  # shown as the remote writes it
    assert len(ids) == 1
    # another repository's URL is another remote id; only an admin's link makes it the same project (below)
    fixtures.run_git(["remote", "set-url", "origin", "git@github.com:acme/other.git"], cwd=git_repo)
    assert project_id(pygit2.Repository(str(git_repo))) not in ids


def test_a_new_remote_is_a_new_project_until_an_admin_links_it(
        bare_remote: Path, make_clone: Callable[[str | Path, str], Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.capture import locate
    from gitive.core.clock import now_ms
    from gitive.index import project_links
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive
    from testing import people

    clone = make_clone(bare_remote, "alice")
    monkeypatch.chdir(clone)
    assert people.run_deciding(["init", "--person", "alice"]) == 0
    hive = open_hive(clone)
    with fresh_index(hive):
        old, label = hive.project_id, project_label(hive.project)
    fixtures.run_git(["remote", "set-url", "origin", "https://example.test/acme/renamed.git"], cwd=clone)
    hive = open_hive(clone)
    with fresh_index(hive) as (conn, _):  # no link: a separate project, and gitive remembers the old one
        assert hive.project_id == project_id(hive.project) != old
        assert project_links.moved_from(hive) == (old, label)
        project_links.link(hive, conn, old, people.person_key(), now_ms())
    with fresh_index(hive):  # linked: the same project, for commands and for hooks (which read the cached id)
        assert hive.project_id == old and project_links.moved_from(hive) is None
    found = locate.find(str(clone))
    assert found is not None and locate.project_id(found) == old


def test_origin_decides_the_id_even_with_other_remotes(git_repo: Path) -> None:
    fixtures.run_git(["remote", "add", "fork", "git@github.com:me/api.git"], cwd=git_repo)
    fixtures.run_git(["remote", "add", "origin", "https://github.com/acme/api"], cwd=git_repo)
    with_fork = project_id(pygit2.Repository(str(git_repo)))
    fixtures.run_git(["remote", "remove", "fork"], cwd=git_repo)
    assert project_id(pygit2.Repository(str(git_repo))) == with_fork


def test_a_repository_without_remote_is_identified_by_its_path(tmp_path: Path) -> None:
    one = fixtures.init_repo(tmp_path / "one")
    two = fixtures.init_repo(tmp_path / "two")
    assert project_id(pygit2.Repository(str(one))) != project_id(pygit2.Repository(str(two)))
    assert project_label(pygit2.Repository(str(one))) == "one"


@pytest.mark.parametrize("url", ["git@GitHub.com:Acme/API.git", "https://user@GitHub.com/Acme/API.GIT",
                                 "ssh://git@GitHub.com:22/Acme/API", "https://gitlab.com/Group/Sub/Repo.git/"])
def test_readable_url_keeps_the_case_and_lowers_to_the_identity(url: str) -> None:
    from gitive.team.projects import readable_url

    shown = readable_url(url)
    assert shown.lower() == normalize_url(url)  # the same repository, only shown as written
    assert shown != shown.lower()


def test_the_project_label_is_shown_in_the_case_of_the_remote(git_repo: Path) -> None:
    fixtures.run_git(["remote", "add", "origin", "git@github.com:Acme/Payments-API.git"], cwd=git_repo)
    assert project_label(pygit2.Repository(str(git_repo))) == "github.com/Acme/Payments-API"
