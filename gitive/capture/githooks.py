"""What gitive's git hooks record: commits (with the sessions that likely wrote them), merges and rewrites.

Run by the scripts in ``hooks/`` (installed by ``gitive install --git-hooks``) as
``gitive-hook git <hook> [args]`` or, without that console script, through :func:`main_cli`. This module
imports only the standard library at load time and :func:`main` never raises: a hook must never fail or
slow a commit, so any failure is noted in ``$GITIVE_HOME/logs/git-hooks.log`` and otherwise ignored.

- ``post-commit`` appends ``vcs.commit`` with the commit's metadata (never its diff) and the sessions that
  modified its files in the preceding :data:`WINDOW_MS`, found by file overlap in the event log and labelled
  ``fidelity: "inferred"``: a session that edited a file is likely, not certainly, an author of the commit.
- ``post-rewrite`` (after ``commit --amend`` and ``rebase``) appends ``vcs.rewrite`` and the old→new pairs to
  ``<git-common-dir>/gitive/rewrites``, so :func:`resolve_rewritten` can follow evidence that cites a
  commit that no longer exists to the commit that replaced it.
- ``post-merge`` appends ``vcs.merge`` with the new head and the files the merge brought in.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

WINDOW_MS = 6 * 3600 * 1000  # how far back a session's edits count towards a commit
MAX_SESSIONS = 32
GIT_TIMEOUT = 10.0
REWRITES = "rewrites"  # in <git-common-dir>/gitive/
FAILURE_LOG = "git-hooks.log"  # in $GITIVE_HOME/logs/
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class Repo(NamedTuple):
    toplevel: str
    git_dir: str  # this work tree's git dir (rebase state lives here)
    common_dir: str  # shared by every work tree of the repository
    head_ref: str  # "refs/heads/<branch>", or "HEAD" when detached


def main(hook_name: str, args: list[str], stdin: str) -> None:
    """Handle one git hook invocation; never raises (a failure is logged and the hook goes on)."""
    try:
        handler = HANDLERS.get(hook_name)
        if handler is not None:
            handler(args, stdin)
    except Exception as exc:
        _note_failure(hook_name, exc)


def main_cli() -> None:
    """``python -c '…main_cli()' <hook> [args]``: what the installed scripts run; always exits 0."""
    hook = sys.argv[1] if len(sys.argv) > 1 else ""
    stdin = ""
    try:
        # Only post-rewrite gets input; reading stdin in the others could wait on a terminal.
        if hook == "post-rewrite":
            stdin = sys.stdin.read()
    except Exception as exc:
        _note_failure(hook, exc)
    main(hook, sys.argv[2:], stdin)


def _git(*args: str, check: bool = True) -> str:
    from gitive.store import git

    # git's helper drops inherited GIT_* variables (right for other repositories); inside a hook they name
    # *this* repository, so a GIT_DIR or GIT_WORK_TREE the user set is passed on explicitly.
    scope: list[str] = []
    for variable, option in (("GIT_DIR", "--git-dir"), ("GIT_WORK_TREE", "--work-tree")):
        if os.environ.get(variable):
            scope += [option, os.path.abspath(os.environ[variable])]
    return git.run([*scope, *args], check=check, timeout=GIT_TIMEOUT)[1]


def locate() -> Repo:
    """The repository the hook runs for (git runs hooks at the top of the work tree)."""
    out = _git("rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir", "--symbolic-full-name", "HEAD")
    top, git_dir, common, head = (out.splitlines() + [""] * 4)[:4]
    return Repo(top, os.path.abspath(git_dir), os.path.abspath(common), head)


def _branch(repo: Repo) -> str | None:
    if repo.head_ref.startswith("refs/heads/"):
        return repo.head_ref.removeprefix("refs/heads/")
    # Detached during a rebase: the branch being rebased is in the rebase state.
    for state in ("rebase-merge", "rebase-apply"):
        try:
            ref = (Path(repo.git_dir) / state / "head-name").read_text().strip()
        except OSError:
            continue
        return ref.removeprefix("refs/heads/") or None
    return None


def _changed(old: str | None, new: str) -> list[str]:
    """Paths changed from ``old`` to ``new`` (everything in ``new`` for a root commit)."""
    base = [old, new] if old else ["--root", new]
    return [p for p in _git("diff-tree", "-r", "--name-only", "--no-commit-id", "-z", *base).split("\0") if p]


def _commit(rev: str) -> tuple[dict[str, Any], list[str]]:
    """The commit's metadata and the paths it changed against its first parent, in one git call (two for a
    merge, whose diff git does not show by default)."""
    out = _git("diff-tree", "-r", "--root", "--always", "--name-only", "-z",
               "--format=%H%x00%P%x00%an%x00%ae%x00%s%x00", rev)
    sha, parents, name, email, subject, rest = out.split("\0", 5)
    files = [p for p in rest.lstrip("\0").removeprefix("\n").split("\0") if p]
    if len(parents.split()) > 1:
        files = _changed(parents.split()[0], sha)
    commit = {"revision": sha, "parents": parents.split(), "author": {"name": name, "email": email},
              "subject": subject}
    return commit, files


def _post_commit(args: list[str], stdin: str) -> None:
    from gitive.capture import events

    now = time.time_ns() // 1_000_000
    repo = locate()
    commit, files = _commit("HEAD")
    vcs = {"repository": repo.toplevel, "branch": _branch(repo), **commit, "files": files}
    sessions = inferred_sessions(repo.toplevel, files, since_ms=now - WINDOW_MS)
    events.append(events.make("vcs.commit", harness="git", ts=now, vcs=vcs, sessions=sessions))


def _post_merge(args: list[str], stdin: str) -> None:
    from gitive.capture import events

    repo = locate()
    squash = bool(args) and args[0] == "1"
    head, _ = _commit("HEAD")
    previous = _git("rev-parse", "-q", "--verify", "ORIG_HEAD^{commit}", check=False).strip() or None
    if squash:  # a squash merge only stages its changes: HEAD has not moved
        files = [p for p in _git("diff", "--cached", "--name-only", "-z").split("\0") if p]
    else:
        files = _changed(previous, head["revision"]) if previous != head["revision"] else []
    vcs = {"repository": repo.toplevel, "branch": _branch(repo), **head, "previous": previous,
           "squash": squash, "files": files}
    events.append(events.make("vcs.merge", harness="git", vcs=vcs))


def _post_rewrite(args: list[str], stdin: str) -> None:
    from gitive.capture import events

    pairs = parse_rewrites(stdin)
    if not pairs:
        return
    repo = locate()
    record_rewrites(repo.common_dir, pairs)
    vcs = {"repository": repo.toplevel, "branch": _branch(repo), "kind": args[0] if args else "unknown",
           "rewrites": [{"old": old, "new": new} for old, new in pairs]}
    events.append(events.make("vcs.rewrite", harness="git", vcs=vcs))


HANDLERS: dict[str, Callable[[list[str], str], None]] = {
    "post-commit": _post_commit, "post-merge": _post_merge, "post-rewrite": _post_rewrite}


def inferred_sessions(toplevel: str, files: Iterable[str], since_ms: int) -> list[dict[str, Any]]:
    """Sessions whose ``tool.completed`` events modified any of ``files`` (relative to ``toplevel``) since
    ``since_ms``, most recent first, each ``{id, harness, files, fidelity: "inferred"}``."""
    from gitive.capture import events

    wanted = set(files)
    top = os.path.realpath(toplevel)
    found: dict[tuple[str, str], tuple[int, set[str]]] = {}
    for event in events.read(since_ms=since_ms, actions=("tool.completed",)):
        file = event.get("file") or {}
        session = event.get("session") or {}
        if file.get("op") != "modify" or not session.get("id"):
            continue
        paths = {_in_repo(p, session.get("working_directory"), top) for p in _paths(file)}
        hits = wanted & paths
        if hits:
            key = ((event.get("harness") or {}).get("name") or "", session["id"])
            last, seen = found.get(key, (0, set()))
            found[key] = (max(last, int(event.get("ts", 0))), seen | hits)
    ranked = sorted(found.items(), key=lambda item: -item[1][0])[:MAX_SESSIONS]
    return [{"id": sid, "harness": harness or None, "files": sorted(hits), "fidelity": "inferred"}
            for (harness, sid), (_, hits) in ranked]


def _paths(file: dict[str, Any]) -> list[str]:
    paths = file.get("paths")
    if isinstance(paths, list):
        return [p for p in paths if isinstance(p, str)]
    return [file["path"]] if isinstance(file.get("path"), str) else []


def _in_repo(path: str, cwd: str | None, top: str) -> str | None:
    """``path`` relative to the work tree ``top`` (``/``-separated), or None when it lies elsewhere or a
    relative path comes without the session's directory to anchor it."""
    if not os.path.isabs(path):
        if not cwd:
            return None
        path = os.path.join(cwd, path)
    rel = os.path.relpath(os.path.realpath(path), top)
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        return None
    return rel.replace(os.sep, "/")


def parse_rewrites(text: str) -> list[tuple[str, str]]:
    """``<old> <new> [extra]`` lines (git's post-rewrite input) as pairs of full commit ids."""
    pairs = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and _SHA.match(parts[0]) and _SHA.match(parts[1]):
            pairs.append((parts[0], parts[1]))
    return pairs


def rewrites_path(git_dir: str | os.PathLike[str]) -> Path:
    """``<common git dir>/gitive/rewrites``; a linked work tree's git dir is mapped to the common one."""
    base = Path(git_dir)
    with contextlib.suppress(OSError):
        base = (base / (base / "commondir").read_text().strip()).resolve()
    return base / "gitive" / REWRITES


def record_rewrites(git_dir: str | os.PathLike[str], pairs: list[tuple[str, str]]) -> None:
    """Append ``old new`` lines in one write (an ``O_APPEND`` write of a few KB is not interleaved)."""
    path = rewrites_path(git_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = "".join(f"{old} {new}\n" for old, new in pairs).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def resolve_rewritten(git_dir: str | os.PathLike[str], sha: str) -> str:
    """The commit that ``sha`` became after every recorded amend and rebase (``sha`` itself if never
    rewritten). Chains are followed (an amend of an amend, then a rebase); a later rewrite of the same
    commit wins; a cycle stops at the last commit not yet seen."""
    mapping: dict[str, str] = {}
    try:
        text = rewrites_path(git_dir).read_text()
    except OSError:
        return sha
    for old, new in parse_rewrites(text):
        mapping[old] = new
    current, seen = sha.lower(), {sha.lower()}
    while current in mapping and mapping[current] not in seen:
        current = mapping[current]
        seen.add(current)
    return current if current != sha.lower() else sha


def _note_failure(hook: str, exc: BaseException) -> None:
    try:
        from gitive.capture.events import now_iso
        from gitive.core.home import gitive_home

        logs = gitive_home() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        with open(logs / FAILURE_LOG, "a", encoding="utf-8") as fh:
            fh.write(f"{now_iso()} {hook}: {type(exc).__name__}: {exc}\n")
    except Exception:  # the last resort: a hook that cannot even log still must not fail the commit
        pass
