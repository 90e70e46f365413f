"""Fetching peers' hive refs and pushing this machine's own, through the git CLI.

Fetch maps a remote's ``refs/hive/*`` to ``refs/hive-remotes/<remote>/*`` and never onto local
``refs/hive/*``, which would overwrite entries not pushed yet. Push names only this machine's refs: logs
fast-forward only, bodies and presence forced (they are rewritten by design).
"""

from __future__ import annotations

from typing import NamedTuple

import pygit2

from gitive.constants import BODIES_REF_PREFIX, LOG_REF_PREFIX, PRESENCE_REF_PREFIX, REMOTES_REF_PREFIX
from gitive.errors import GitCommandError, RemoteError
from gitive.store import git, refs
from gitive.store import repo as repos


def fetch_refspec(remote: str) -> str:
    return f"+refs/hive/*:{REMOTES_REF_PREFIX}{remote}/*"


def configure_remote(repo: pygit2.Repository, remote: str) -> None:
    """Add the wildcard hive fetch refspec to ``remote`` so a plain ``git fetch`` brings hive refs too."""
    if repos.remote_url(repo, remote) is None:
        raise RemoteError(f"no remote named {remote!r} in {repo.path}; see `git remote -v`")
    repos.config_add(repo, f"remote.{remote}.fetch", fetch_refspec(remote))


def missing_refspec(repo: pygit2.Repository, remote: str) -> bool:
    return fetch_refspec(remote) not in repos.config_all(repo, f"remote.{remote}.fetch")


def _reach_error(remote: str, url: str | None, exc: GitCommandError) -> RemoteError:
    lines = [ln.strip() for ln in exc.stderr.splitlines() if ln.strip()]
    fatal = [ln.removeprefix("fatal:").strip() for ln in lines if ln.startswith(("fatal:", "error:"))]
    last = fatal[0] if fatal else (lines[-1] if lines else "no message")
    return RemoteError(f"cannot reach remote {remote!r} ({url}): {last}; check the URL and your access")


def fetch(repo: pygit2.Repository, remote: str, timeout: float = 300) -> dict[str, str]:
    """Fetch the remote's hive refs; return the remote-tracking tips that changed (ref -> new id).

    Raises:
        RemoteError: the remote does not exist or cannot be reached.
    """
    url = repos.remote_url(repo, remote)
    if url is None:
        raise RemoteError(f"no remote named {remote!r}; see `git remote -v`")
    prefix = f"{REMOTES_REF_PREFIX}{remote}/"
    before = refs.tips(repo, prefix)
    try:
        git.run(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, fetch_refspec(remote)],
                cwd=repo.path, timeout=timeout)
    except GitCommandError as exc:
        raise _reach_error(remote, url, exc) from None
    after = refs.tips(repo, prefix)
    return {name: tip for name, tip in after.items() if before.get(name) != tip}


class PushResult(NamedTuple):
    pushed: list[str]
    rejected: list[tuple[str, str]]  # (ref, one-line reason)
    skipped: bool  # nothing to push: the remote already had every tip


def own_refs(repo: pygit2.Repository, me: str) -> dict[str, str]:
    out = {}
    for prefix in (f"{LOG_REF_PREFIX}{me}/", f"{BODIES_REF_PREFIX}{me}", f"{PRESENCE_REF_PREFIX}{me}"):
        out.update(refs.tips(repo, prefix))
    return out


def _refspec(name: str) -> str:
    forced = not name.startswith(LOG_REF_PREFIX)
    return f"{'+' if forced else ''}{name}:{name}"


def _parse_porcelain(out: str, err: str) -> tuple[list[str], list[tuple[str, str]]]:
    pushed, rejected = [], []
    remote_lines = [ln.removeprefix("remote:").strip() for ln in err.splitlines() if ln.startswith("remote:")]
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or len(parts[0]) != 1:
            continue
        flag, spec, summary = parts[0], parts[1], parts[2]
        dst = spec.split(":", 1)[-1]
        if flag == "!":
            detail = next((ln for ln in remote_lines if dst in ln), "") or summary.strip()
            rejected.append((dst, detail))
        elif flag != "=":
            pushed.append(dst)
    return pushed, rejected


def push(repo: pygit2.Repository, remote: str, me: str, timeout: float = 300) -> PushResult:
    """Push this machine's own hive refs that the remote (as last fetched) does not have.

    Raises:
        RemoteError: the remote cannot be reached at all (a refused ref is reported, not raised).
    """
    mine = own_refs(repo, me)
    prefix = f"{REMOTES_REF_PREFIX}{remote}/"
    theirs = refs.tips(repo, prefix)
    todo = sorted(n for n, tip in mine.items() if theirs.get(prefix + n[len("refs/hive/"):]) != tip)
    if not todo:
        return PushResult([], [], True)
    code, out, err = git.run(["push", "--porcelain", remote, *map(_refspec, todo)], cwd=repo.path,
                             check=False, timeout=timeout)
    pushed, rejected = _parse_porcelain(out, err)
    if code != 0 and not rejected and not pushed:
        raise _reach_error(remote, repos.remote_url(repo, remote),
                           GitCommandError(("git", "push", remote), code, out, err))
    for name in pushed:  # the remote has them now: record that, as a fetch would
        refs.force_set(repo, prefix + name[len("refs/hive/"):], mine[name], "gitive: pushed")
    return PushResult(pushed, rejected, False)
