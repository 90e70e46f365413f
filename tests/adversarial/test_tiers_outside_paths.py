"""The Outside tier's CI list, checked against where each system reads its configuration (its own docs), written
here independently of ``tiers.OUTSIDE_BY_SYSTEM``: a path a forge, a CI system or a dependency bot reads that is
not Outside fails this test. Folder locations are checked with any file under them, at any depth."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.anchor.prepared import tiers

# Each system the issue names, with the files it reads (from its documentation).
KNOWN: dict[str, tuple[str, ...]] = {
    "github-actions": (".github/workflows/ci.yml", ".github/workflows/sub/release.yaml",
                       ".github/actions/setup/action.yml", "action.yml", "action.yaml"),
    "gitlab": (".gitlab-ci.yml", ".gitlab/ci/build.yml", "ci/templates/deploy.gitlab-ci.yml"),
    "forgejo": (".forgejo/workflows/test.yml", ".forgejo/workflows/deploy.yaml"),
    "gitea": (".gitea/workflows/test.yml", ".gitea/workflows/build.yaml"),
    "circleci": (".circleci/config.yml",),
    "travis": (".travis.yml",),
    "azure-pipelines": ("azure-pipelines.yml", ".azure-pipelines/build.yml"),
    "bitbucket-pipelines": ("bitbucket-pipelines.yml",),
    "buildkite": (".buildkite/pipeline.yml", ".buildkite/hooks/pre-command"),
    "cirrus": (".cirrus.yml", ".cirrus.star"),
    "semaphore": (".semaphore/semaphore.yml", ".semaphore/deploy.yml"),
    "appveyor": ("appveyor.yml", ".appveyor.yml"),
    "drone": (".drone.yml", ".drone.jsonnet", ".drone.star"),
    "woodpecker": (".woodpecker.yml", ".woodpecker/test.yml"),
    "jenkins": ("Jenkinsfile", "ci/Jenkinsfile", "Jenkinsfile.release"),
    "tekton": (".tekton/pipelinerun.yaml", ".tekton/tasks/build.yaml"),
    "teamcity": (".teamcity/settings.kts", ".teamcity/pom.xml"),
    "zuul": (".zuul.yaml", "zuul.yaml", "zuul.d/jobs.yaml", ".zuul.d/project.yaml"),
    "dependabot": (".github/dependabot.yml",),
    "renovate": ("renovate.json", "renovate.json5", ".renovaterc", ".renovaterc.json", ".github/renovate.json",
                 ".gitlab/renovate.json"),
    "settings-and-owners": (".github/settings.yml", "CODEOWNERS", ".github/CODEOWNERS", "docs/CODEOWNERS",
                            ".gitlab/CODEOWNERS"),
}
FOLDERS = (".github/workflows", ".github/actions", ".gitlab", ".forgejo", ".gitea", ".circleci",
           ".azure-pipelines", ".buildkite", ".semaphore", ".woodpecker", ".tekton", ".teamcity", "zuul.d",
           ".zuul.d")
ORDINARY = ("src/app.py", "docs/ci.md", "tests/test_jenkins.py", "README.md", "github/workflows.md",
            "pipelines/azure.md", "renovate.md", "src/.github.py")
SEGMENT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_.", min_size=1, max_size=12).filter(
    lambda s: s not in (".", ".."))


@pytest.mark.parametrize("system", sorted(KNOWN))
def test_every_file_a_known_system_reads_is_outside(system: str) -> None:
    paths = KNOWN[system]
    assert tiers.outside(paths) == list(paths), [p for p in paths if p not in tiers.outside(paths)]


@settings(max_examples=300, deadline=None)
@given(folder=st.sampled_from(FOLDERS), rest=st.lists(SEGMENT, min_size=1, max_size=4))
def test_any_file_under_a_known_ci_folder_is_outside(folder: str, rest: list[str]) -> None:
    path = "/".join([folder, *rest])
    assert tiers.outside([path]) == [path]


def test_ordinary_files_stay_inside_and_the_team_adds_its_own() -> None:
    assert tiers.outside(ORDINARY) == []
    assert tiers.outside(["deploy/prod.tf", "src/app.py"], extra=["deploy/**"]) == ["deploy/prod.tf"]


def test_a_draft_or_an_approval_touching_a_new_ci_location_is_refused() -> None:
    """The list is what the tiers enforce: the names the issue found landed are each refused now."""
    landed_before = [".forgejo/workflows/x.yml", ".gitea/workflows/x.yml", ".cirrus.yml", ".semaphore/x.yml",
                     ".tekton/x.yaml", ".teamcity/settings.kts", ".zuul.yaml"]
    assert tiers.outside(landed_before) == landed_before
