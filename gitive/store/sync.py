"""Fetching peers' hive refs and pushing this machine's own, through the git CLI.

Fetch maps a remote's ``refs/hive/*`` to ``refs/hive-remotes/<remote>/*`` and never onto local
``refs/hive/*``, which would overwrite entries not pushed yet. Push names only this machine's refs: logs
fast-forward only, bodies and presence forced (they are rewritten by design). When the remote's copy of one of
this machine's logs holds commits this machine did not write (junk or forgeries stacked on it by whoever can
push), the verified tip is pushed with a lease on exactly the tip that was fetched (docs/verification.md §2).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any, NamedTuple

import pygit2

from gitive.constants import BODIES_REF_PREFIX, LOG_REF_PREFIX, PRESENCE_REF_PREFIX, REMOTES_REF_PREFIX
from gitive.core import canonical, signed
from gitive.core.clock import now_ms
from gitive.errors import GitCommandError, InvalidRecord, RemoteError
from gitive.store import git, logs, refs
from gitive.store import repo as repos
from gitive.store.remotes import (
    CONFIG_VERSION,
    KEY_CONFIG_VERSION,
    KEY_REMOTE,
    RemotePlan,
    choose,
    chosen_by_person,
    fetch_refspec,
)

__all__ = ["KEY_CONFIG_VERSION", "KEY_REMOTE", "PushResult", "RemotePlan", "configure_remote", "fetch", "fetch_refspec", "last_results",
           "migrate_config", "plan_remotes", "probe", "push", "remember_results", "sync_remotes", "tracked"]

RESULTS_FILE = "remotes.json"  # <git dir>/gitive/: what the last sync saw of each remote, for `doctor`


def configure_remote(repo: pygit2.Repository, remote: str) -> None:
    """Add the wildcard hive fetch refspec to ``remote`` so a plain ``git fetch`` brings hive refs too."""
    if repos.remote_url(repo, remote) is None:
        raise RemoteError(f"no remote named {remote!r} in {repo.path}; see `git remote -v`")
    repos.config_add(repo, f"remote.{remote}.fetch", fetch_refspec(remote))


def missing_refspec(repo: pygit2.Repository, remote: str) -> bool:
    return fetch_refspec(remote) not in repos.config_all(repo, f"remote.{remote}.fetch")


def plan_remotes(repo: pygit2.Repository) -> RemotePlan:
    """The one decision of which remotes sync uses (see :func:`gitive.store.remotes.choose`)."""
    names = repos.remotes(repo)
    configured = chosen_by_person(repos.config_all(repo, KEY_REMOTE), repos.config_get(repo, KEY_CONFIG_VERSION))
    return choose(names, {n: repos.config_all(repo, f"remote.{n}.fetch") for n in names}, configured)


def migrate_config(repo: pygit2.Repository) -> bool:
    """Drop a ``hive.remote`` an earlier version wrote and stamp the config version; true when it changed.

    Idempotent; a config already at this version is left as it is.
    """
    if repos.config_get(repo, KEY_CONFIG_VERSION) is not None:
        return False
    if repos.config_all(repo, KEY_REMOTE):
        repo.config.delete_multivar(KEY_REMOTE, ".*")
    repos.config_set(repo, KEY_CONFIG_VERSION, str(CONFIG_VERSION))
    return True


def sync_remotes(repo: pygit2.Repository) -> list[str]:
    return plan_remotes(repo).chosen


def _results_path(repo: pygit2.Repository) -> Path:
    return Path(repo.path) / "gitive" / RESULTS_FILE


def last_results(repo: pygit2.Repository) -> dict[str, dict[str, Any]]:
    """What the last sync saw of each remote: ``{remote: {since, pushed, rejected: [[ref, why]], unreachable}}``."""
    try:
        value = json.loads(_results_path(repo).read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def remember_results(repo: pygit2.Repository, results: dict[str, dict[str, Any]]) -> None:
    """Merge this sync's per-remote outcome into :func:`last_results` (atomic replace; remotes not in
    ``results`` keep what an earlier sync saw). ``since`` is when a remote's outcome last changed; a sync that
    sees what the last one saw writes nothing."""
    old = last_results(repo)
    merged = dict(old)
    for name, value in results.items():
        before = {k: v for k, v in old.get(name, {}).items() if k != "since"}
        outcome = {**before, **value}
        merged[name] = {**outcome, "since": old[name]["since"] if outcome == before and "since" in old.get(name, {})
                        else now_ms()}
    if merged == old:
        return
    path = _results_path(repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(merged, indent=1, sort_keys=True) + "\n")
    os.replace(tmp, path)


def probe(repo: pygit2.Repository, remote: str, patterns: list[str], timeout: float = 20) -> dict[str, str]:
    """The tips of refs matching ``patterns`` on ``remote`` (a remote's name or a URL), by ``git ls-remote``:
    one round trip, no objects.

    Raises:
        RemoteError: the remote cannot be reached (or is not a repository).
    """
    url = repos.remote_url(repo, remote) or remote
    try:
        _, out, _ = git.run(["ls-remote", "--quiet", remote, *patterns], cwd=repo.path, timeout=timeout)
    except GitCommandError as exc:
        raise _reach_error(remote, url, exc) from None
    tips = {}
    for line in out.splitlines():
        oid, _, name = line.partition("\t")
        if name and not name.endswith("^{}"):
            tips[name] = oid
    return tips


def tracked(repo: pygit2.Repository, remote: str, patterns: list[str]) -> dict[str, str]:
    """What this repository last fetched of the remote's refs matching ``patterns`` (names as the remote
    calls them), to compare with :func:`probe`."""
    import fnmatch

    prefix = f"{REMOTES_REF_PREFIX}{remote}/"
    return {"refs/hive/" + name[len(prefix):]: tip for name, tip in refs.tips(repo, prefix).items()
            if any(fnmatch.fnmatchcase("refs/hive/" + name[len(prefix):], p) for p in patterns)}


def _reach_error(remote: str, url: str | None, exc: GitCommandError) -> RemoteError:
    lines = [ln.strip() for ln in exc.stderr.splitlines() if ln.strip()]
    fatal = [ln.removeprefix("fatal:").strip() for ln in lines if ln.startswith(("fatal:", "error:"))]
    last = fatal[0] if fatal else (lines[-1] if lines else "no message")
    return RemoteError(f"cannot reach remote {remote!r} ({url}): {last}; check the URL and your access")


# git's refusal when a concurrent fetch moved a ref this fetch was about to update (no lock file is left)
_MOVED = re.compile(r"cannot lock ref '[^']+': is at [0-9a-f]+ but expected [0-9a-f]+")
_LOCK_WAIT = 60.0  # seconds to wait for another live fetch of this repository to finish with its locks


def _lock_named(exc: GitCommandError) -> str | None:
    """The lock file a failed git command names ("Unable to create '…/x.lock': File exists"), if any."""
    found = re.search(r"'([^']+\.lock)'", exc.stderr)
    return found.group(1) if found and ("exists" in exc.stderr or "lock" in exc.stderr) else None


def _fetch_past_locks(repo: pygit2.Repository, remote: str, url: str | None, timeout: float) -> None:
    """``git fetch``; a lock a dead fetch left is removed and the fetch tried again, and one a live fetch
    holds is waited for (up to ``_LOCK_WAIT``): two syncs at once both succeed.

    Raises:
        RemoteError: the remote cannot be reached, or a lock stays held by a live process (named).
    """
    from gitive.store import fetch_locks

    gitdir, workdir = Path(repo.path), Path(repo.workdir) if repo.workdir else None
    give_up = time.monotonic() + min(timeout, _LOCK_WAIT)
    for _ in range(1000):  # bounded: each turn removed a lock, or waited 0.2 s within _LOCK_WAIT
        try:
            git.run(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, fetch_refspec(remote)],
                    cwd=repo.path, timeout=timeout)
            return
        except GitCommandError as exc:
            lock = _lock_named(exc)
            if lock is None and _MOVED.search(exc.stderr) and time.monotonic() < give_up:
                continue  # another fetch updated the ref between this one's read and its write: fetch again
            if lock is None:
                raise _reach_error(remote, url, exc) from None
            removed, live = fetch_locks.clear_stale(gitdir, workdir, remote)
            if removed or (live and time.monotonic() < give_up):
                time.sleep(0 if removed else 0.2)
                continue
            who = f"held by a running git (pid {', '.join(map(str, live))})" if live else (
                "not under this remote's refs, so gitive leaves it; remove it if no git process is running")
            raise RemoteError(f"cannot update refs from remote {remote!r}: {lock} is locked, {who}") from None
    raise RemoteError(f"cannot update refs from remote {remote!r}: its lock files keep coming back")


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
    _fetch_past_locks(repo, remote, url, timeout)
    after = refs.tips(repo, prefix)
    return {name: tip for name, tip in after.items() if before.get(name) != tip}


class Replaced(NamedTuple):
    """Commits on the remote's copy of one of our logs that a lease push replaced, and who signed them."""

    ref: str
    tip: str  # the remote's tip as fetched (what the lease named)
    commits: int
    signers: dict[str, int]  # machine id (a valid signature for this team) or "unsigned" -> commits
    malformed: int = 0  # commits that are no well-formed entry (junk, or signed bytes re-wrapped)


class PushResult(NamedTuple):
    pushed: list[str]
    rejected: list[tuple[str, str]]  # (ref, one-line reason)
    skipped: bool  # nothing to push: the remote already had every tip
    replaced: tuple[Replaced, ...] = ()


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


_FOREIGN_WALK_CAP = 100_000  # commits of someone else's chain read to say who signed them
_SIGNER_TRIES = 2_000  # signature checks spent finding who really signed commits that claim another signer


def _signer(repo: pygit2.Repository, oid: str, team_id: str, candidates: list[str], budget: list[int]) -> str:
    """Who signed the entry in commit ``oid`` (machine id), whatever its wrapper; "unsigned" if nobody we know."""
    try:
        commit = repo[oid]
        data = repo[commit.tree["entry.json"].id].data if isinstance(commit, pygit2.Commit) else b""
        env = canonical.loads(data)
        body = env["body"]
        kind, claimed, sig = body["record"]["type"], env["by"], env["sig"]
    except Exception:  # not an entry at all
        return "unsigned"
    for who in dict.fromkeys([claimed, *candidates]):
        if budget[0] <= 0:
            break
        budget[0] -= 1
        try:
            if signed.signature_ok(team_id, kind, {"body": body, "by": who, "sig": sig}):
                return str(who)
        except Exception:
            break
    return "unsigned"


def _foreign(repo: pygit2.Repository, theirs: str, mine: str, me: str, team_id: str,
             candidates: list[str]) -> tuple[int, dict[str, int], list[int], int]:
    """Walk the remote's chain from ``theirs`` down to a commit of our log; classify what is not ours.

    Returns the commits counted, signers (machine id or "unsigned") -> commits, the seqs of commits that are
    authentic entries signed by this machine that it does not hold (never to be overwritten), and how many
    commits are no well-formed entry.
    """
    ours = {str(c.id) for c in repo.walk(mine, pygit2.enums.SortMode.NONE)} if mine in repo else set()
    signers: dict[str, int] = {}
    own: list[int] = []
    budget = [_SIGNER_TRIES]
    count, malformed, oid = 0, 0, theirs
    while oid and oid not in ours and count < _FOREIGN_WALK_CAP:
        count += 1
        who = _signer(repo, oid, team_id, candidates, budget)
        signers[who] = signers.get(who, 0) + 1
        try:
            entry = logs.read_entry(repo, oid)
        except InvalidRecord:
            entry = None  # junk or a re-wrapped copy: no reader accepts it, so replacing it loses nothing
            malformed += 1
        if who == me and entry is not None and entry.body["author"] == me and entry.signed["by"] == me:
            own.append(entry.seq)
        oid = _first_parent(repo, oid)
    return count, signers, own, malformed


def _first_parent(repo: pygit2.Repository, oid: str) -> str | None:
    try:
        commit = repo[oid]
    except (KeyError, ValueError):
        return None
    return str(commit.parent_ids[0]) if isinstance(commit, pygit2.Commit) and commit.parent_ids else None


def _plan(repo: pygit2.Repository, name: str, mine: str, theirs: str | None, me: str, team_id: str | None,
          candidates: list[str]) -> tuple[str | None, Replaced | None, str | None]:
    """How to push one of our refs: (lease expectation or None, what it replaces, or a reason not to push)."""
    if theirs is None or not name.startswith(LOG_REF_PREFIX) or theirs not in repo:
        return None, None, None  # a new ref, a snapshot (forced by design), or a tip we never fetched
    if theirs == mine or repo.descendant_of(mine, theirs):
        return None, None, None  # the remote holds a verified prefix of ours: a fast-forward
    if team_id is None:
        return None, None, None  # cannot tell who signed what: let the remote refuse the non-fast-forward
    count, signers, own, malformed = _foreign(repo, theirs, mine, me, team_id, candidates)
    if own:
        return None, None, (f"the remote holds {len(own)} entries signed by this machine that it does not have "
                            f"(seq {min(own)}-{max(own)}); not overwritten: this machine's key is in use "
                            "elsewhere or it was restored from an old copy")
    return theirs, Replaced(name, theirs, count, signers, malformed), None


def push(repo: pygit2.Repository, remote: str, me: str, timeout: float = 300, *,
         team_id: str | None = None, signers: list[str] | None = None) -> PushResult:
    """Push this machine's own hive refs that the remote (as last fetched) does not have.

    A log whose remote copy is not a prefix of ours (someone else's commits stacked on it) is pushed with
    ``--force-with-lease=<ref>:<the fetched tip>``, unless those commits include entries signed by this
    machine (given ``team_id``) that it does not hold: those are never overwritten, and the ref is reported.
    What was replaced is returned with who signed it: the machine it claims, one of ``signers`` (the roster's
    machines) if that is whose signature it really carries, or "unsigned".

    Raises:
        RemoteError: the remote cannot be reached at all (a refused ref is reported, not raised).
    """
    mine = own_refs(repo, me)
    prefix = f"{REMOTES_REF_PREFIX}{remote}/"
    theirs = refs.tips(repo, prefix)
    todo = sorted(n for n, tip in mine.items() if theirs.get(prefix + n[len("refs/hive/"):]) != tip)
    if not todo:
        return PushResult([], [], True)
    leases, replaced, refused, specs = [], [], [], []
    for name in todo:
        lease, gone, why = _plan(repo, name, mine[name], theirs.get(prefix + name[len("refs/hive/"):]), me,
                                 team_id, signers or [])
        if why:
            refused.append((name, why))
            continue
        if lease:
            leases.append(f"--force-with-lease={name}:{lease}")
            replaced.append(gone)
        specs.append(_refspec(name))
    if not specs:
        return PushResult([], refused, False)
    code, out, err = git.run(["push", "--porcelain", *leases, remote, *specs], cwd=repo.path,
                             check=False, timeout=timeout)
    pushed, rejected = _parse_porcelain(out, err)
    if code != 0 and not rejected and not pushed:
        raise _reach_error(remote, repos.remote_url(repo, remote),
                           GitCommandError(("git", "push", remote), code, out, err))
    for name in pushed:  # the remote has them now: record that, as a fetch would
        refs.force_set(repo, prefix + name[len("refs/hive/"):], mine[name], "gitive: pushed")
    done = set(pushed)
    return PushResult(pushed, refused + rejected, False, tuple(r for r in replaced if r and r.ref in done))
