"""Capability tiers, enforced in code: the only way the anchor pushes, lands or proposes anything.

| tier | actions | rule |
| --- | --- | --- |
| Free | read, run tests, push ``refs/heads/hive/*`` | no approval; any other ref is refused |
| Approved | land (push the approved commit onto the target branch, fast-forward only), or run the configured propose command | an :class:`Authorization` whose ``diff_hash`` and ``base`` match the change, checked here again at the moment of acting |
| Outside | CI config, repository settings, protected branches, CODEOWNERS | never, whatever is approved |

Anything not in the table is not granted (deny by default). An :class:`Authorization` is made only by
``gitive/anchor/approvals.py`` (a person's review) or ``gitive/anchor/standing.py`` (a standing approval); this
module re-computes the change's hash from the repository before acting, so a stale or mismatched one refuses.
The server guard's anchor option (``store/guard.py``) refuses the same pushes at the remote.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitive.errors import GitiveError
from gitive.store import diffs, pushcert, worktrees

if TYPE_CHECKING:
    from nacl.signing import SigningKey

    from gitive.store.types import Repo

FREE_PREFIX = "refs/heads/hive/"
# Outside, whatever is approved: every common forge's and CI system's configuration, dependency bots, repository
# settings, code owners. Grouped by system so a test can name each one; `prepared.outside` adds a team's own.
OUTSIDE_BY_SYSTEM: dict[str, tuple[str, ...]] = {
    "github": (".github/workflows/**", ".github/actions/**", "action.yml", "action.yaml", ".github/settings.yml",
               ".github/CODEOWNERS", ".github/dependabot.yml", ".github/dependabot.yaml"),
    "gitlab": (".gitlab-ci.yml", ".gitlab-ci.yaml", "**/*.gitlab-ci.yml", "**/*.gitlab-ci.yaml", ".gitlab/**"),
    "forgejo": (".forgejo/**",),
    "gitea": (".gitea/**",),
    "circleci": (".circleci/**",),
    "travis": (".travis.yml", ".travis.yaml", ".travis/**"),
    "azure": ("azure-pipelines.yml", "azure-pipelines.yaml", ".azure-pipelines/**", ".azuredevops/**",
              ".azure-pipelines.yml"),
    "bitbucket": ("bitbucket-pipelines.yml", "bitbucket-pipelines.yaml"),
    "buildkite": (".buildkite/**", "buildkite.yml", "buildkite.yaml", ".buildkite.yml", ".buildkite.yaml"),
    "cirrus": (".cirrus.yml", ".cirrus.yaml", ".cirrus.star"),
    "semaphore": (".semaphore/**",),
    "appveyor": ("appveyor.yml", ".appveyor.yml", "appveyor.yaml", ".appveyor.yaml"),
    "drone": (".drone.yml", ".drone.yaml", ".drone.jsonnet", ".drone.star"),
    "woodpecker": (".woodpecker.yml", ".woodpecker.yaml", ".woodpecker/**"),
    "jenkins": ("Jenkinsfile", "Jenkinsfile.*", "**/Jenkinsfile", "**/*.Jenkinsfile", ".jenkins/**", "jenkins/**"),
    "tekton": (".tekton/**",),
    "teamcity": (".teamcity/**",),
    "zuul": (".zuul.yaml", ".zuul.yml", "zuul.yaml", "zuul.yml", ".zuul.d/**", "zuul.d/**"),
    "google-cloud-build": ("cloudbuild.yaml", "cloudbuild.yml", "cloudbuild.json"),
    "dependabot": (".github/dependabot.yml", ".github/dependabot.yaml"),
    "renovate": ("renovate.json", "renovate.json5", ".renovaterc", ".renovaterc.json", ".renovaterc.json5",
                 ".github/renovate.json", ".github/renovate.json5", ".gitlab/renovate.json",
                 ".gitlab/renovate.json5", ".gitea/renovate.json", ".forgejo/renovate.json"),
    "pre-commit": (".pre-commit-config.yaml", ".pre-commit-config.yml"),
    "code-owners": ("CODEOWNERS", "docs/CODEOWNERS", ".github/CODEOWNERS", ".gitlab/CODEOWNERS",
                    ".gitea/CODEOWNERS", ".forgejo/CODEOWNERS"),
}
OUTSIDE_PATHS = tuple(dict.fromkeys(g for globs in OUTSIDE_BY_SYSTEM.values() for g in globs))


def outside_samples() -> tuple[str, ...]:
    """Concrete paths for every Outside glob (``**`` filled in one folder deep and two, ``*`` with a name): what
    a standing approval's perimeter must not reach."""
    out: dict[str, None] = {}
    for glob in OUTSIDE_PATHS:
        for deep in ("x.yml", "x/y.yml"):
            out[glob.replace("**/", "").replace("**", deep).replace("*", "x")] = None
    return tuple(out)

class TierRefused(GitiveError):
    """An action its tier does not allow; nothing was done."""


@dataclass(frozen=True)
class Authorization:
    """What allows one Approved action: a review (``{author, log, seq}``) or a standing approval (``id``), for
    exactly one change (``diff_hash``) on one base commit."""

    kind: str  # "review" | "standing"
    ref: dict[str, object] | str
    diff_hash: str
    base: str


@lru_cache(maxsize=512)
def _glob(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        out.append("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def matches(path: str, patterns: Iterable[str]) -> bool:
    """Whether ``path`` matches a glob: ``*`` and ``?`` stay inside one folder, ``**`` spans folders."""
    return any(_glob(p).match(path) for p in patterns)


def outside(paths: Iterable[str], extra: Iterable[str] = ()) -> list[str]:
    """The paths of a change that are Outside (CI, settings, code owners, and ``extra`` globs)."""
    patterns = (*OUTSIDE_PATHS, *extra)
    return [p for p in paths if matches(p, patterns)]


def check_free_push(ref: str) -> None:
    """Free tier: only ``refs/heads/hive/*``.

    Raises:
        TierRefused: any other ref.
    """
    name = ref[len(FREE_PREFIX):] if ref.startswith(FREE_PREFIX) else ""
    if not name or ".." in name or name.endswith("/") or "//" in name:
        raise TierRefused(f"the anchor pushes only refs/heads/hive/<task> (Free tier); {ref} is refused")


def _signed_push(repo: Repo, remote: str, commit: str, ref: str, key: SigningKey | None,
                 **how: Any) -> worktrees.Pushed:
    """A push with a certificate signed by the anchor's ``key`` when the remote asks (its guard's anchor option
    knows the anchor by that signature, never by a commit's author)."""
    if key is None:
        return worktrees.push(repo, remote, commit, ref, **how)
    from gitive.core.home import gitive_home

    with pushcert.signing_config(key, gitive_home() / "tmp") as signing:
        return worktrees.push(repo, remote, commit, ref, signing=signing, **how)


def push_draft(repo: Repo, remote: str, commit: str, ref: str, replaces: str | None,
               key: SigningKey | None = None) -> None:
    """Push a draft to ``refs/heads/hive/<task>``; ``replaces`` is the tip it overwrites (a lease), if any.

    Raises:
        TierRefused: not a hive branch.
        GitiveError: the remote refused it.
    """
    check_free_push(ref)
    pushed = _signed_push(repo, remote, commit, ref, key, lease=replaces if replaces else None,
                          force=replaces is not None)
    if not pushed.ok:
        raise GitiveError(f"pushing {ref} was refused: {pushed.detail}")


def check_approved(repo: Repo, auth: Authorization | None, base: str, head: str, target: str,
                   protected: Iterable[str], extra_outside: Iterable[str] = ()) -> None:
    """Refuse unless ``auth`` covers exactly ``base..head`` and nothing in it is Outside.

    Raises:
        TierRefused: no authorization, a hash or base that does not match, a protected target, an Outside path.
    """
    if auth is None:
        raise TierRefused("landing or proposing needs an approving review of this exact change (Approved tier)")
    if matches(target, protected):
        raise TierRefused(f"{target} is a protected branch: the anchor never lands there (Outside tier); "
                          "configure `prepared.action: propose`")
    if auth.base != base:
        raise TierRefused(f"the approval was given on base {auth.base[:12]}, not {base[:12]}: it covers nothing here")
    actual = diffs.diff_hash(repo, base, head)
    if auth.diff_hash != actual:
        raise TierRefused(f"the approval covers change {auth.diff_hash[:12]}, and this one is {actual[:12]}")
    found = outside(diffs.stat(repo, base, head).paths, extra_outside)
    if found:
        raise TierRefused(f"the change touches {', '.join(found[:5])}: CI, settings and code owners are Outside "
                          "(never done by the anchor, whatever is approved)")


def land(repo: Repo, remote: str, auth: Authorization | None, base: str, head: str, target: str,
         protected: Iterable[str], extra_outside: Iterable[str] = (), key: SigningKey | None = None) -> None:
    """Approved tier: fast-forward ``target`` on ``remote`` from ``base`` to ``head`` (refused if it moved).

    Raises:
        TierRefused: see :func:`check_approved`; or ``head`` does not descend from ``base``.
        GitiveError: the remote refused the push (``target`` moved meanwhile, or the guard said no).
    """
    check_approved(repo, auth, base, head, target, protected, extra_outside)
    if not worktrees.contains(repo, head, base):
        raise TierRefused("a landing is a fast-forward only, and this change does not descend from its base")
    pushed = _signed_push(repo, remote, head, f"refs/heads/{target}", key, lease=base)
    if not pushed.ok:
        raise GitiveError(f"landing on {target} was refused: {pushed.detail}")


def propose(repo: Repo, auth: Authorization | None, base: str, head: str, target: str,
            command: list[str], cwd: Path, protected: Iterable[str] = (), extra_outside: Iterable[str] = (),
            timeout: float = 120) -> str:
    """Approved tier: run the configured propose command (``gh pr create …``); its output.

    The target may be protected here: a proposal asks the host's own review, it does not push there.

    Raises:
        TierRefused: see :func:`check_approved`.
        GitiveError: the command failed or could not start.
    """
    del protected
    check_approved(repo, auth, base, head, target, (), extra_outside)
    try:
        proc = subprocess.run(command, cwd=cwd, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitiveError(f"the propose command {command[0]!r} did not run: {exc}") from None
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    if proc.returncode != 0:
        raise GitiveError(f"the propose command exited {proc.returncode}: {out[-300:]}")
    return out[-1000:]
