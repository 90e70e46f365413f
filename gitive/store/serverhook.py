"""Installing the gitive guard as a bare repository's ``pre-receive`` hook, and taking it out again.

Our hook carries the marker line ``# gitive-guard``. A foreign ``pre-receive`` already there is moved to
``pre-receive.legacy`` and run first by ours, then put back on uninstall. ``core.hooksPath`` is honoured,
never overwritten.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import NamedTuple

import pygit2

import gitive
from gitive.core.ids import is_team_id
from gitive.errors import GitiveError, NotARepository, NoTeam
from gitive.store.guard import TEAM_KEY
from gitive.store.repo import config_get, config_set

MARKER = "# gitive-guard"
HOOK = "pre-receive"
LEGACY = "pre-receive.legacy"


class Installed(NamedTuple):
    hook: Path
    legacy: Path | None  # where a foreign hook was kept, if there was one
    team_id: str | None  # the team id now configured (None: learned on first use)


def hook_source() -> Path:
    """The ``hooks/pre-receive`` script shipped beside the package.

    Raises:
        GitiveError: the script is not there (an installation without the ``hooks/`` folder).
    """
    path = Path(gitive.__file__).resolve().parent / "hooks" / HOOK
    if not path.is_file():
        raise GitiveError(f"the guard script {path} is missing; reinstall gitive from a full source tree")
    return path


def open_bare(path: Path | str) -> pygit2.Repository:
    """Open ``path`` itself (no search upwards) as a bare repository.

    Raises:
        NotARepository: ``path`` is not a bare git repository.
    """
    try:
        repo = pygit2.Repository(str(path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError:
        raise NotARepository(f"{path} is not a bare git repository") from None
    if not repo.is_bare:
        raise NotARepository(f"{path} is not a bare git repository (it has a work tree); "
                             "give the server's bare repository, e.g. /srv/git/team.git")
    return repo


def hooks_dir(repo: pygit2.Repository) -> Path:
    """Where git looks for this repository's hooks: ``core.hooksPath`` if set, else ``$GIT_DIR/hooks``."""
    configured = config_get(repo, "core.hooksPath")
    if not configured:
        return Path(repo.path) / "hooks"
    # git resolves a relative core.hooksPath against the directory hooks run in: $GIT_DIR in a bare repo.
    return Path(repo.path) / Path(configured).expanduser()


def is_ours(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            return MARKER.encode() in fh.read(4096)
    except OSError:
        return False


def _script() -> str:
    text = hook_source().read_text()
    # The hook must run the interpreter gitive is installed in (often a venv). A path with white space
    # cannot be a shebang, so it keeps `env python3`; if gitive is missing there, hive refs fail closed.
    if not any(c.isspace() for c in sys.executable):
        first, _, rest = text.partition("\n")
        text = f"#!{sys.executable}\n{rest}" if first.startswith("#!") else text
    return text


def _write_executable(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    tmp.chmod(0o755)
    os.replace(tmp, path)


def install(path: Path | str, team_id: str | None = None, anchors: list[str] | None = None) -> Installed:
    """Install (or refresh) the guard in the bare repository ``path``; idempotent.

    Also sets ``receive.advertisePushOptions`` so a client may offer the team id on first use. ``anchors``
    (machine ids) turns on the anchor option (``store/guard.py``: only the anchor's drafts on ``hive/``
    branches; its drafts elsewhere only in a push certificate it signed) and writes the anchors' keys as git's
    allowed signers with a nonce seed for signed pushes; an empty list turns it off, None leaves it as it is.

    Raises:
        NotARepository: ``path`` is not a bare repository.
        NoTeam: ``team_id`` is not a team id.
        GitiveError: a foreign hook and a kept legacy hook are both present (nothing is moved).
    """
    if team_id is not None and not is_team_id(team_id):
        raise NoTeam(f"{team_id!r} is not a team id (32 lowercase hex characters; `gitive team --json`)")
    from gitive.core.ids import is_machine_id

    bad = [a for a in anchors or [] if not is_machine_id(a)]
    if bad:
        raise GitiveError(f"--anchor {bad[0]!r} is not a machine id (64 hex; `gitive team --json` lists the "
                          "anchor's)")
    repo = open_bare(path)
    if anchors and team_id is None and config_get(repo, TEAM_KEY) is None:
        raise NoTeam("--anchor needs the team id too (--team): the anchor's drafts are signed for that team")
    directory = hooks_dir(repo)
    directory.mkdir(parents=True, exist_ok=True)
    hook, legacy = directory / HOOK, directory / LEGACY
    kept = legacy if legacy.exists() else None
    if hook.exists() and not is_ours(hook):
        if legacy.exists():
            raise GitiveError(f"{hook} and {legacy} both exist; merge them into one hook and retry")
        os.replace(hook, legacy)
        kept = legacy
    _write_executable(hook, _script())
    if team_id is not None:
        config_set(repo, TEAM_KEY, team_id)
    config_set(repo, "receive.advertisePushOptions", "true")
    if anchors is not None:
        from gitive.store.guard import ANCHOR_KEY
        from gitive.store.repo import config_add

        with contextlib.suppress(KeyError, pygit2.GitError):
            repo.config.delete_multivar(ANCHOR_KEY, ".*")
        for machine in anchors:
            config_add(repo, ANCHOR_KEY, machine)
        _certificates(repo, anchors)
    return Installed(hook, kept, config_get(repo, TEAM_KEY))


def _certificates(repo: pygit2.Repository, anchors: list[str]) -> None:
    """Signed pushes for the anchor option (``store/pushcert.py``): the anchors' public keys as git's allowed
    signers, and a secret nonce seed so each push session gets a nonce of its own (kept when already set)."""
    import secrets

    from gitive.store import pushcert

    allowed = Path(repo.path) / pushcert.ALLOWED_SIGNERS
    tmp = allowed.with_name(f".{allowed.name}.{os.getpid()}.tmp")
    tmp.write_text("".join(f"{pushcert.public_line(a)}\n" for a in anchors))
    os.replace(tmp, allowed)
    config_set(repo, "gpg.ssh.allowedSignersFile", str(allowed))
    if not config_get(repo, "receive.certNonceSeed"):
        config_set(repo, "receive.certNonceSeed", secrets.token_hex(32))


def uninstall(path: Path | str) -> bool:
    """Remove the guard from ``path`` and put a kept legacy hook back; false if no guard was installed.

    ``hive.team`` stays in the config: it is still the team's id if the guard is installed again.

    Raises:
        NotARepository: ``path`` is not a bare repository.
    """
    directory = hooks_dir(open_bare(path))
    hook, legacy = directory / HOOK, directory / LEGACY
    if not is_ours(hook):
        return False
    hook.unlink()
    if legacy.exists():
        os.replace(legacy, hook)
    return True
