"""Which remotes ``gitive sync`` talks to: one pure decision over git config values (standard library only).

``store.sync.plan_remotes`` feeds it from pygit2, the no-op sync fast path from git's config file; ``doctor``
and ``status`` show its answer, so all of them agree by construction. The plain fetch of a remote's hive refs
that the fast path lists is here too, through the one git helper.
"""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

# typing costs the no-op sync about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple

KEY_REMOTE = "hive.remote"  # multi-valued; when set, exactly these remotes sync
# Versions before 2026-12 wrote hive.remote themselves (every remote at init) and never told anyone to set it,
# so a value in a config without this version is theirs, not a person's choice: it is ignored, and the next
# sync removes it (every remote it named has the hive refspec, so nothing stops syncing).
KEY_CONFIG_VERSION = "hive.configVersion"
CONFIG_VERSION = 2
REMOTES_PREFIX = "refs/hive-remotes/"


def fetch_refspec(remote: str) -> str:
    return f"+refs/hive/*:{REMOTES_PREFIX}{remote}/*"


def advertised(top: Path, remote: str, timeout: float = 120) -> dict[str, str] | None:
    """The hive refs ``remote`` advertises (name -> tip), as ``git ls-remote`` lists them from the repository
    at ``top``; None when git failed, timed out or could not start.

    The no-op sync's probe: when every one equals this repository's ``refs/hive-remotes/<remote>/`` copy, a
    fetch would change nothing. It costs about half a no-op fetch (no ref update, no connectivity check, no
    auto maintenance), and over protocol v2 the remote sends only the refs under ``refs/hive/``.
    """
    from gitive.store import git

    code, out = git.output(["ls-remote", "--refs", remote, "refs/hive/*"], top, timeout)
    if code != 0:
        return None
    found = {}
    for line in out.decode("utf-8", "replace").splitlines():
        tip, _, name = line.partition("\t")
        if name.startswith("refs/hive/"):  # ls-remote matches patterns at a name's tail
            found[name] = tip
    return found


if TYPE_CHECKING:
    class RemotePlan(NamedTuple):
        """Which remotes sync uses in one repository, and why the others are left out."""

        chosen: list[str]  # the remotes sync fetches from and pushes to, in this order
        explicit: bool  # chosen by ``hive.remote`` (else: every remote with the hive fetch refspec)
        skipped: list[str]  # remotes with the hive refspec that ``hive.remote`` leaves out
        without_refspec: list[str]  # remotes that carry no hive refs and are not chosen
        unknown: list[str]  # ``hive.remote`` names that are not remotes of the repository
else:
    RemotePlan = namedtuple("RemotePlan", "chosen explicit skipped without_refspec unknown")


def choose(names: list[str], fetch_specs: dict[str, list[str]], configured: list[str]) -> RemotePlan:
    """The plan for a repository whose remotes are ``names`` (with their ``remote.<name>.fetch`` values).

    ``hive.remote`` (``configured``), when set, names exactly the remotes to use; otherwise every remote
    whose fetch refspecs include ``+refs/hive/*:refs/hive-remotes/<remote>/*`` is used, so a remote added
    later with that refspec syncs without further configuration.
    """
    with_refspec = [n for n in names if fetch_refspec(n) in fetch_specs.get(n, [])]
    wanted = list(dict.fromkeys(configured))
    if wanted:
        chosen = [n for n in wanted if n in names]
        return RemotePlan(chosen, True, [n for n in with_refspec if n not in chosen],
                          [n for n in names if n not in with_refspec and n not in chosen],
                          [n for n in wanted if n not in names])
    return RemotePlan(with_refspec, False, [], [n for n in names if n not in with_refspec], [])


def chosen_by_person(configured: list[str], version: str | None) -> list[str]:
    """The ``hive.remote`` values that are a person's choice (see ``KEY_CONFIG_VERSION``)."""
    try:
        return configured if version is not None and int(version) >= CONFIG_VERSION else []
    except ValueError:
        return []


def choose_from_config(config: dict[str, list[str]]) -> RemotePlan:
    """:func:`choose` over a config read by ``gitdir.read_config_all`` (keys lower-cased, names kept)."""
    names = list(dict.fromkeys(k[len("remote."):-len(".url")] for k in config
                               if k.startswith("remote.") and k.endswith(".url")))
    specs = {n: config.get(f"remote.{n}.fetch", []) for n in names}
    version = (config.get(KEY_CONFIG_VERSION.lower()) or [None])[-1]
    return choose(names, specs, chosen_by_person(config.get(KEY_REMOTE, []), version))
