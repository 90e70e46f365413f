"""The server-side guard: what a bare repository's ``pre-receive`` hook lets into ``refs/hive/``.

A hive remote is store-and-forward, and every reader verifies what it fetches anyway (DESIGN §5). The guard
stops bad data before it reaches anyone: a push that changes another machine's refs without that machine's
signature, rewrites a log, or carries a malformed or mis-signed entry. Refs outside ``refs/hive/`` pass
untouched. Git runs the hook before any ref moves and refuses the whole push when it exits non-zero.

The pushed objects are still in git's quarantine directory while the hook runs (``GIT_QUARANTINE_PATH``,
git >= 2.13). libgit2 ignores ``GIT_OBJECT_DIRECTORY`` unless a repository is opened "from env", so
:func:`open_pushed` adds the quarantine directory as a read-only alternate instead (checked with git 2.39,
libgit2 1.9).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NamedTuple, TextIO

import pygit2

from gitive.constants import BODIES_REF_PREFIX, LOG_REF_PREFIX, PRESENCE_REF_PREFIX
from gitive.core.ids import is_machine_id, is_team_id
from gitive.errors import InvalidRecord
from gitive.store import bodies, logs, presence, refs, snapshots, verify
from gitive.store.repo import config_get, config_set

HIVE_PREFIX = "refs/hive/"
TEAM_KEY = "hive.team"
ANCHOR_KEY = "hive.anchorGuard"  # the anchor option: machine ids of the team's anchors (multi-valued)
DRAFT_PREFIX = "refs/heads/hive/"
_BRANCHES = ("refs/heads/", "refs/tags/")
EDIT_PREFIX = "refs/heads/hive-edits/"
_DRAFT_BRANCHES = (DRAFT_PREFIX, EDIT_PREFIX)
TEAM_OPTION = "hive-team"
NO_TEAM = ("this repository's gitive guard has no team id: "
           "run `gitive server install-hook PATH --team <id>` on the server")


class Rejection(NamedTuple):
    """A refused ref update and why, in one line."""

    ref: str
    reason: str


class Update(NamedTuple):
    """One line of ``pre-receive`` input; ``old`` is None for a create, ``new`` None for a delete."""

    old: str | None
    new: str | None
    ref: str


def _oid_or_none(text: str) -> str | None:
    return None if set(text) <= {"0"} else text  # the zero id (40 or 64 digits) means "no object"


def parse_updates(text: str) -> list[Update]:
    """Parse ``<old> <new> <ref>`` lines as git feeds them to ``pre-receive``; blank lines are skipped."""
    out = []
    for line in text.splitlines():
        parts = line.strip().split(" ", 2)
        if len(parts) == 3:
            out.append(Update(_oid_or_none(parts[0]), _oid_or_none(parts[1]), parts[2]))
    return out


def push_options(env: Mapping[str, str]) -> dict[str, str]:
    """The ``git push -o key=value`` options git passes to the hook (needs receive.advertisePushOptions)."""
    try:
        count = int(env.get("GIT_PUSH_OPTION_COUNT", "0"))
    except ValueError:
        count = 0
    out = {}
    for i in range(count):
        key, _, value = env.get(f"GIT_PUSH_OPTION_{i}", "").partition("=")
        out[key] = value
    return out


def open_pushed(repo_path: str | Path, env: Mapping[str, str] | None = None) -> pygit2.Repository:
    """Open the receiving repository so that it also sees the objects of the push being checked."""
    env = os.environ if env is None else env
    repo = pygit2.Repository(str(repo_path))
    incoming = env.get("GIT_QUARANTINE_PATH") or env.get("GIT_OBJECT_DIRECTORY")
    if incoming and Path(incoming).resolve() != (Path(repo.path) / "objects").resolve():
        repo.odb.add_disk_alternate(str(Path(incoming).resolve()))
    return repo


def _check_log(repo: pygit2.Repository, team_id: str, update: Update, machine: str, log: str) -> str | None:
    """The reader's rules (docs/verification.md §1) applied to a pushed log tip: canonical form, v2 links,
    signer = author = ref owner, seq, authenticity. Appending is a fast-forward; anything else may only replace
    commits a reader refuses, and keeps every entry a reader verified."""
    if update.new is None:
        return "deleting a hive log is refused: logs are append-only"
    old_seq = None
    if update.old:
        try:
            old_seq = logs.read_entry(repo, update.old).seq
        except InvalidRecord:
            old_seq = None  # the old tip is junk itself: the new tip must stand on its own

    def known(oid: str) -> int | None:
        return old_seq if oid == update.old else None

    result, base = verify.verify_chain(repo, team_id, update.ref, machine, log, update.new, known)
    if result.problem:
        where = f" at seq {result.problem.seq}" if result.problem.seq is not None else ""
        return f"{result.problem.kind}{where}: {result.problem.detail}"
    if update.old and base is None:
        kept = _verified_head(repo, team_id, update.ref, machine, log, update.old)
        if kept is not None and kept != update.new and not repo.descendant_of(update.new, kept):
            return "not a fast-forward: a hive log may only be appended to"
    return None


def _verified_head(repo: pygit2.Repository, team_id: str, ref: str, machine: str, log: str, tip: str) -> str | None:
    """The last commit of ``tip``'s chain a reader verifies (None when it verifies nothing)."""
    result, _ = verify.verify_chain(repo, team_id, ref, machine, log, tip, lambda oid: None)
    return result.entries[-1].commit if result.entries else None


def _check_snapshot(repo: pygit2.Repository, team_id: str, update: Update, kind: str, machine: str) -> str | None:
    """A snapshot must be signed by its machine, go up in version, and (bodies) keep the fan-out shape."""
    if update.new is None:
        return f"deleting a {kind} ref is refused"
    try:
        new = snapshots.check(repo, team_id, kind, machine, update.new)
    except InvalidRecord as exc:
        return f"not a {kind} snapshot signed by {machine[:12]} for this team ({exc})"
    old = snapshots.read(repo, team_id, kind, machine, update.old) if update.old else None
    why = snapshots.refusal(old, new)
    if why:
        return f"replayed or stale {kind} snapshot: {why}"
    if kind == "bodies":
        return bodies.shape_problem(repo, old, new)
    return presence.shape_problem(repo, new)


def check_update(repo: pygit2.Repository, team_id: str, update: Update) -> str | None:
    """Why ``update`` of a ``refs/hive/`` ref must be refused (None when it may go through).

    Raises:
        InvalidRecord: an existing or pushed commit is not a well-formed entry (``check_push`` reports it).
    """
    ref = update.ref
    if ref.startswith(LOG_REF_PREFIX):
        machine, _, log = ref[len(LOG_REF_PREFIX):].partition("/")
        if is_machine_id(machine) and log and "/" not in log:
            return _check_log(repo, team_id, update, machine, log)
    for prefix, kind in ((BODIES_REF_PREFIX, "bodies"), (PRESENCE_REF_PREFIX, "presence")):
        if ref.startswith(prefix) and is_machine_id(ref[len(prefix):]):
            return _check_snapshot(repo, team_id, update, kind, ref[len(prefix):])
    return ("not a gitive ref: expected refs/hive/logs/<machine>/<log>, refs/hive/bodies/<machine> "
            "or refs/hive/presence/<machine>")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _checked(repo: pygit2.Repository, team_id: str, updates: Iterable[Update]) -> list[Rejection]:
    out = []
    for update in updates:
        if not update.ref.startswith(HIVE_PREFIX):
            continue
        try:
            reason = check_update(repo, team_id, update)
        except InvalidRecord as exc:
            reason = f"malformed: {exc}"
        except Exception as exc:  # a guard fails closed with a message, never with a traceback
            reason = f"could not be checked ({type(exc).__name__}: {exc})"
        if reason:
            out.append(Rejection(update.ref, _one_line(reason)))
    return out


def check_push(repo_path: str | Path, updates: list[tuple[str | None, str | None, str]],
               team_id: str) -> list[Rejection]:
    """Check a push's ref updates against the hive rules; never raises on bad pushed data.

    Args:
        repo_path: the receiving repository (pushed objects may still be in git's quarantine).
        updates: ``(old, new, ref)`` per ref, None or the zero id for a create or delete.
        team_id: the team whose signatures count.

    Returns:
        One rejection per refused ref, empty when the push may go through.
    """
    repo = open_pushed(repo_path)
    norm = [Update(_oid_or_none(o or "0"), _oid_or_none(n or "0"), r) for o, n, r in updates]
    return _checked(repo, team_id, norm)


def _founds_team(repo: pygit2.Repository, team_id: str, update: Update) -> bool:
    """True when ``update`` creates a founder's roster log that verifies completely under ``team_id``."""
    ref = refs.parse_log_ref(update.ref)
    if update.old or not update.new or ref is None or ref.source != "local" or ref.log != "roster":
        return False
    result, _ = verify.verify_chain(repo, team_id, update.ref, ref.machine, "roster", update.new,
                                    lambda oid: None)
    if result.problem or not result.entries:
        return False
    first = result.entries[0].body["record"]
    admission = first.get("admission") or {}
    founder_self = (first["type"] == "member" and first["machine"] == ref.machine
                    and admission.get("via") == "founder")
    return founder_self and any(
        e.body["record"]["type"] == "team" and e.body["record"]["founder"] == ref.machine
        for e in result.entries
    )


def _learn_team(repo: pygit2.Repository, updates: list[Update], options: Mapping[str, str]) -> str | None:
    """Trust on first use: the team id offered by ``git push -o hive-team=<id>`` with a founder's roster.

    Only a repository holding no hive refs yet learns, so a later push cannot re-found its team.
    """
    offered = options.get(TEAM_OPTION, "")
    if not is_team_id(offered) or refs.tips(repo, HIVE_PREFIX):
        return None
    try:
        founded = any(_founds_team(repo, offered, u) for u in updates)
    except Exception:  # malformed data simply does not found a team; check_update reports it
        founded = False
    return offered if founded else None


def _landed_tips(repo: pygit2.Repository, drafts_too: bool = False) -> list[str]:
    """The tips whose history counts as landed: every branch and tag but the anchor's drafts and owners' edits
    (with ``drafts_too``, the drafts as well: an owner's edit is a commit over a draft)."""
    skip = EDIT_PREFIX if drafts_too else _DRAFT_BRANCHES
    out = []
    for name, tip in refs.tips(repo, "refs/").items():
        if name.startswith(_BRANCHES) and not name.startswith(skip):
            try:
                out.append(str(repo[tip].peel(pygit2.Commit).id))
            except (KeyError, ValueError, pygit2.GitError):
                continue
    return out


def _certificate(repo: pygit2.Repository, env: Mapping[str, str]) -> str | None:
    blob = env.get("GIT_PUSH_CERT", "")
    try:
        return repo[blob].data.decode("utf-8", "replace") if blob else None  # type: ignore[attr-defined]
    except (KeyError, ValueError, pygit2.GitError):
        return None


def _raw(update: Update) -> tuple[str, str, str]:
    width = len(update.new or update.old or "0" * 40)
    return (update.old or "0" * width, update.new or "0" * width, update.ref)


def check_anchor_branches(repo: pygit2.Repository, updates: Iterable[Update], team_id: str | None,
                          anchors: list[str], env: Mapping[str, str] | None = None) -> list[Rejection]:
    """The anchor option: new commits on ``refs/heads/hive/*`` must be drafts signed by one of ``anchors``, and
    an update of any other branch or tag that brings a draft (a commit carrying the anchor's identity: its
    trailer or its address, signed or not) must come with a push certificate an anchor signed for exactly that
    update (``store/pushcert.py``). Who a commit names as its author counts for nothing (docs/prepared.md).

    "Brings" means: reachable from the pushed tip, and from neither the ref's old tip nor any branch or tag
    outside ``hive/`` and ``hive-edits/`` (what is there was landed already); an owner's edit on ``hive-edits/``
    may stand on a draft, and brings none of its own. Deletions pass.
    """
    from gitive.store import drafts, pushcert

    env = os.environ if env is None else env
    todo = [u for u in updates if u.new and u.ref.startswith(_BRANCHES)]
    if not todo:
        return []
    landed, edits_over = _landed_tips(repo), _landed_tips(repo, drafts_too=True)
    cert = _certificate(repo, env)
    out = []
    for update in todo:
        known = edits_over if update.ref.startswith(EDIT_PREFIX) else landed
        try:
            target = str(repo[update.new].peel(pygit2.Commit).id)  # type: ignore[index]
            fresh = drafts.new_commits(repo, target, [*known, *([update.old] if update.old else [])])
        except (KeyError, ValueError, pygit2.GitError) as exc:
            out.append(Rejection(update.ref, f"could not be checked ({type(exc).__name__}: {exc})"))
            continue
        if update.ref.startswith(DRAFT_PREFIX):
            bad = next((c for c in fresh if team_id is None or drafts.signer_of(c, team_id) not in anchors), None)
            if bad is not None:
                out.append(Rejection(update.ref, f"commit {str(bad.id)[:12]} is not a draft signed by the team's "
                                                 "anchor: only the anchor pushes refs/heads/hive/* (an owner's "
                                                 "edit goes to refs/heads/hive-edits/<task>)"))
            continue
        draft = next((c for c in fresh if drafts.carries_anchor_identity(c)), None)
        if draft is not None and update.ref.startswith(EDIT_PREFIX):
            out.append(Rejection(update.ref, f"commit {str(draft.id)[:12]} carries the anchor's identity: an "
                                             "owner's edit is a person's commit over the draft"))
            continue
        why = pushcert.certified(env, cert, anchors, _raw(update)) if draft is not None else None
        if why and cert is None and not config_get(repo, "receive.certNonceSeed"):
            why += ("; this server asks for no certificate yet (installed before signed pushes): run "
                    "`gitive server install-hook PATH --anchor <id>` again")
        if draft is not None and why:
            out.append(Rejection(update.ref, f"commit {str(draft.id)[:12]} is the anchor's draft, and {why}: "
                                             "a draft reaches a branch or tag only when the anchor lands it "
                                             "(approve it with `gitive review prepared`)"))
    return out


def review(repo: pygit2.Repository, updates: list[Update], options: Mapping[str, str],
           env: Mapping[str, str] | None = None) -> list[Rejection]:
    """Resolve the team id (configured, or learned on first use) and check every hive ref update.

    A team id learned from this push is stored in ``hive.team`` only when the whole push passes.
    """
    from gitive.store.repo import config_all

    anchors = config_all(repo, ANCHOR_KEY)
    branches = check_anchor_branches(repo, updates, config_get(repo, TEAM_KEY), anchors, env) if anchors else []
    hive = [u for u in updates if u.ref.startswith(HIVE_PREFIX)]
    if not hive:
        return branches
    return branches + _review_hive(repo, hive, options)


def _review_hive(repo: pygit2.Repository, hive: list[Update], options: Mapping[str, str]) -> list[Rejection]:
    configured = config_get(repo, TEAM_KEY)
    if configured is not None and not is_team_id(configured):
        return [Rejection(u.ref, f"{TEAM_KEY} in the server's config is not a team id") for u in hive]
    team_id = configured or _learn_team(repo, hive, options)
    if team_id is None:
        reason = NO_TEAM
        if TEAM_OPTION in options:
            reason = (f"-o {TEAM_OPTION} is learned only with a new founder's roster log signed for that "
                      f"team, into a repository with no hive refs yet; {NO_TEAM}")
        return [Rejection(u.ref, reason) for u in hive]
    rejections = _checked(repo, team_id, hive)
    if not rejections and configured is None:
        config_set(repo, TEAM_KEY, team_id)
    return rejections


def main(stdin_text: str, env: Mapping[str, str] | None = None, err: TextIO | None = None) -> int:
    """The ``pre-receive`` entry point: print one line per rejection; 1 if any, else 0."""
    env = os.environ if env is None else env
    err = err or sys.stderr
    updates = parse_updates(stdin_text)
    repo_path = Path(env.get("GIT_DIR", ".")).resolve()
    try:
        repo = open_pushed(repo_path, env)
    except pygit2.GitError as exc:
        print(f"gitive guard: cannot open {repo_path}: {_one_line(str(exc))}", file=err)
        return 1
    rejections = review(repo, updates, push_options(env), env)
    for rejection in rejections:
        print(f"gitive guard: {rejection.ref}: {rejection.reason}", file=err)
    return 1 if rejections else 0
