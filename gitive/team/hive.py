"""The hive a command works in: which repository, which team store, which team, and this machine's key."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pygit2
from nacl.signing import SigningKey

from gitive.core.ids import MachineId
from gitive.core.keys import load_key, machine_id
from gitive.errors import NoTeam
from gitive.store import repo as repos

KEY_TEAM = "hive.team"
KEY_FOUNDER = "hive.founder"
KEY_STORE = "hive.teamStore"
KEY_REMOTE = "hive.remote"  # multi-valued: the remotes `gitive sync` talks to


@dataclass
class Hive:
    project: pygit2.Repository
    store: pygit2.Repository  # the team store: the project itself, or a bare clone of the team remote
    team_id: str
    founder: str

    @cached_property
    def key(self) -> SigningKey:
        return load_key()

    @property
    def me(self) -> MachineId:
        return machine_id(self.key)

    @property
    def separate_store(self) -> bool:
        return Path(self.store.path).resolve() != Path(self.project.path).resolve()

    def stores(self) -> list[pygit2.Repository]:
        return [self.store, self.project] if self.separate_store else [self.store]

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
