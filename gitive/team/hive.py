"""The hive a command works in: which repository, which team store, which team, and this machine's key."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pygit2
from nacl.signing import SigningKey

from gitive.core.home import ensure_home, gitive_home
from gitive.core.ids import MachineId
from gitive.core.keys import load_key, machine_id
from gitive.errors import NoTeam
from gitive.store import repo as repos

KEY_TEAM = "hive.team"
KEY_FOUNDER = "hive.founder"
KEY_STORE = "hive.teamStore"
KEY_REMOTE = "hive.remote"  # multi-valued: the remotes `gitive sync` talks to
KEY_PROJECT_STORE = "hive.projectStore"  # "team" keeps project lessons in the team store
KEY_REMOVED = "hive.removed"  # set by the index when the roster shows this machine removed
REMOVED = ("this machine was removed from the team; it no longer writes shared records (ask an admin to "
           "re-activate it)")
PERSONAL_STORE = "personal.git"


@dataclass
class Hive:
    project: pygit2.Repository
    store: pygit2.Repository  # the team store: the project itself, or a bare clone of the team remote
    team_id: str
    founder: str

    @cached_property
    def machine_key(self) -> SigningKey:
        """The machine key, for reading and for rewriting this machine's own snapshots."""
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
        return bool(repos.config_get(self.store, KEY_REMOVED))

    @property
    def me(self) -> MachineId:
        return machine_id(self.machine_key)

    @property
    def separate_store(self) -> bool:
        return Path(self.store.path).resolve() != Path(self.project.path).resolve()

    @property
    def project_store(self) -> pygit2.Repository:
        """Where project-scope records go: the project repository, or the team store if configured so."""
        return self.store if repos.config_get(self.project, KEY_PROJECT_STORE) == "team" else self.project

    def personal_store(self, create: bool = False) -> pygit2.Repository | None:
        """``$GITIVE_HOME/personal.git``: personal-scope records, never pushed to a shared remote."""
        path = gitive_home() / PERSONAL_STORE
        if not path.exists():
            if not create:
                return None
            ensure_home()
            repo = pygit2.init_repository(str(path), bare=True)
            repos.config_set(repo, KEY_TEAM, self.team_id)
            return repo
        return pygit2.Repository(str(path))

    def stores(self) -> list[pygit2.Repository]:
        """Every repository whose hive refs this hive reads: team store, project, personal store."""
        found = [self.store] if not self.separate_store else [self.store, self.project]
        personal = self.personal_store()
        return [*found, personal] if personal is not None else found

    def shared_stores(self) -> list[pygit2.Repository]:
        """The stores that sync with remotes (never the personal store)."""
        return [self.store] if not self.separate_store else [self.store, self.project]

    def sync_remotes(self, repo: pygit2.Repository) -> list[str]:
        return repos.config_all(repo, KEY_REMOTE)

    @property
    def index_path(self) -> Path:
        return Path(self.store.path) / "gitive" / "index.sqlite"


def open_hive(path: Path | str | None = None) -> Hive:
    """The hive of the repository at ``path`` (default: current directory).

    Raises:
        NotARepository: not inside a git repository.
        NoTeam: the repository belongs to no gitive team yet.
    """
    project = repos.open_repo(path)
    team_id = repos.config_get(project, KEY_TEAM)
    founder = repos.config_get(project, KEY_FOUNDER)
    if not team_id or not founder:
        raise NoTeam(
            "this repository has no gitive team: run `gitive init --person NAME` to found one, "
            "or `gitive join CODE --person NAME` with an invite code"
        )
    store_path = repos.config_get(project, KEY_STORE)
    store = pygit2.Repository(store_path) if store_path else project
    return Hive(project, store, team_id, founder)
