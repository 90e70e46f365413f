"""The hive a command works in: which repository, which team store, which team, and this machine's key.

Opening a hive reads only git's files (no pygit2): a read command whose index is already fresh never loads
pygit2. The repositories open on first use. Linked worktrees of one clone share its hive: the store and the
index live in the clone's common git dir, never in one worktree's.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from gitive.core.home import ensure_home, gitive_home
from gitive.core.ids import MachineId
from gitive.errors import NoTeam
from gitive.store import gitdir
from gitive.store import repo as repos

if TYPE_CHECKING:
    from nacl.signing import SigningKey

    from gitive.store.types import Repo

KEY_TEAM = "hive.team"
KEY_FOUNDER = "hive.founder"
KEY_STORE = "hive.teamStore"
KEY_REMOTE = "hive.remote"  # multi-valued: the remotes `gitive sync` talks to (default: every hive remote)
KEY_PROJECT_STORE = "hive.projectStore"  # "team" keeps project lessons in the team store
KEY_SEALED = "hive.sealed"  # "true": this repository's project lessons are sealed to the team (docs/scopes.md)
KEY_REMOVED = "hive.removed"  # set by the index when the roster shows this machine removed
REMOVED = ("this machine was removed from the team; it no longer writes shared records (ask an admin to "
           "re-activate it)")
PERSONAL_STORE = "personal.git"


def _same(a: Path, b: Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _open(path: Path) -> Repo:
    return repos.open_at(path)


@dataclass
class Hive:
    git_dir: Path  # the project's git dir as this work tree sees it (a worktree has its own)
    common_dir: Path  # the project's shared git dir: refs, config and the index of every worktree
    store_dir: Path  # the team store's git dir: the project's common dir, or a bare clone of the team remote
    team_id: str
    founder: str
    project_store_mode: str | None = None  # KEY_PROJECT_STORE as configured

    @cached_property
    def project(self) -> Repo:
        """The project repository as this work tree sees it (its HEAD, its work tree)."""
        return _open(self.git_dir)

    @cached_property
    def _project_common(self) -> Repo:
        """The project opened at its common dir: the one handle every worktree reads and indexes refs through."""
        return self.project if _same(self.git_dir, self.common_dir) else _open(self.common_dir)

    @cached_property
    def store(self) -> Repo:
        """The team store (the project's common dir unless the team keeps a separate store)."""
        return self._project_common if not self.separate_store else _open(self.store_dir)

    @cached_property
    def machine_key(self) -> SigningKey:
        """The machine key, for reading and for rewriting this machine's own snapshots."""
        from gitive.core.keys import load_key

        return load_key()

    @property
    def key(self) -> SigningKey:
        """The machine key, for writing shared records: refused once the roster says this machine was removed.

        Raises:
            NoTeam: this machine was removed from the team (its index saw the removal).
        """
        if self.removed:
            raise NoTeam(REMOVED)
        return self.machine_key

    @property
    def removed(self) -> bool:
        """Whether this machine's index saw the roster remove it (it then writes no shared record)."""
        return bool(gitdir.read_config(self.store_dir).get(KEY_REMOVED))

    @property
    def me(self) -> MachineId:
        from gitive.core.keys import machine_id

        return machine_id(self.machine_key)

    @cached_property
    def separate_store(self) -> bool:
        return not _same(self.store_dir, self.common_dir)

    @property
    def project_store(self) -> Repo:
        """Where project-scope records go: the project repository, or the team store if configured so."""
        return self.store if self.project_store_mode == "team" else self._project_common

    @property
    def personal_dir(self) -> Path:
        """This team's personal store on this machine, as versions before sealed scopes wrote it (personal
        lessons now travel sealed in the team store; ``index.personal_migration`` moves an old store there).

        Personal entries are signed for one team, so each team a machine belongs to has its own store:
        ``$GITIVE_HOME/personal.git`` for the first team that wrote one (as before several teams were
        possible), ``$GITIVE_HOME/personal/<team-id>.git`` for every other team.
        """
        own = gitive_home() / "personal" / f"{self.team_id}.git"
        legacy = gitive_home() / PERSONAL_STORE
        if own.exists() or (legacy.exists() and gitdir.read_config(legacy).get(KEY_TEAM.lower()) != self.team_id):
            return own
        return legacy

    def personal_store(self, create: bool = False) -> Repo | None:
        """This team's old personal store, never pushed to a shared remote (None when there is none); read in
        place until it is moved, and written by tests that build one as older versions did."""
        path = self.personal_dir
        if not path.exists():
            if not create:
                return None
            ensure_home()
            path.parent.mkdir(mode=0o700, exist_ok=True)
            repo = repos.init_bare(path)
            repos.config_set(repo, KEY_TEAM, self.team_id)
            return repo
        return repos.open_at(path)

    def store_dirs(self) -> list[Path]:
        """The git dirs :meth:`stores` opens, without opening them (team store, project, personal store)."""
        found = [self.store_dir] if not self.separate_store else [self.store_dir, self.common_dir]
        personal = self.personal_dir
        return [*found, personal] if personal.exists() else found

    def stores(self) -> list[Repo]:
        """Every repository whose hive refs this hive reads: team store, project, personal store."""
        personal = self.personal_store()
        found = self.shared_stores()
        return [*found, personal] if personal is not None else found

    def shared_stores(self) -> list[Repo]:
        """The stores that sync with remotes (never the personal store)."""
        return [self.store] if not self.separate_store else [self.store, self._project_common]

    def sync_remotes(self, repo: Repo) -> list[str]:
        """The remotes ``gitive sync`` uses for ``repo`` (the one decision, ``store.sync.plan_remotes``)."""
        from gitive.store import sync

        return sync.sync_remotes(repo)

    @property
    def project_id(self) -> str:
        """The project's id, from the cache ``fresh_index`` keeps for hooks (computed when it is missing)."""
        try:
            cached = (self.common_dir / "gitive" / "project-id").read_text().strip()
        except OSError:
            cached = ""
        if len(cached) == 64:
            return cached
        from gitive.team.projects import project_id

        return project_id(self.project)

    @property
    def index_path(self) -> Path:
        """One index per repository (its worktrees share it), a projection of exactly :meth:`stores`: two
        repositories attached to one team never mix each other's project records, and a rebuild in either
        gives what its incremental index holds."""
        return self.common_dir / "gitive" / "index.sqlite"


_observers: list[Callable[[Hive], None]] = []


def on_open(callback: Callable[[Hive], None] | None) -> None:
    """Call ``callback`` with every hive :func:`open_hive` opens from now on (None: stop). The CLI uses it to
    name the team a command acts for."""
    _observers[:] = [callback] if callback is not None else []


def open_hive(path: Path | str | None = None) -> Hive:
    """The hive of the repository at ``path`` (default: current directory).

    Raises:
        NotARepository: not inside a git repository.
        NoTeam: the repository belongs to no gitive team yet.
    """
    found = gitdir.find(path or os.getcwd())
    if found is None:  # a bare repository, GIT_DIR, …: let libgit2 find it (or say it is not a repository)
        repo_dir = repos.git_dir(repos.open_repo(path))
        found = gitdir.Located(repo_dir, repo_dir, repo_dir)
    config = gitdir.read_config(found.common_dir)
    team_id, founder = config.get(KEY_TEAM.lower()), config.get(KEY_FOUNDER.lower())
    if not team_id or not founder:
        raise NoTeam(
            "this repository has no gitive team: run `gitive init --person NAME` to found one, "
            "`gitive join CODE --person NAME` with an invite code, or `gitive attach` on a machine already in "
            "the team"
        )
    store = config.get(KEY_STORE.lower())
    mode = config.get(KEY_PROJECT_STORE.lower())
    hive = Hive(found.git_dir, found.common_dir, Path(store) if store else found.common_dir, team_id, founder, mode)
    for callback in _observers:
        callback(hive)
    return hive
