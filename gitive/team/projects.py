"""Project identity: one id per repository however it was cloned, and project membership records."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from gitive.core.ids import blake3_hex
from gitive.store import repo as repos

if TYPE_CHECKING:
    from gitive.store.types import Repo

_SCP = re.compile(r"^(?:[^@/]+@)?([^:/]+):(?!//)(.+)$")  # git@host:org/repo


def normalize_url(url: str) -> str:
    """Map ssh, scp-like and https forms of one repository to ``https://host/org/repo`` (lower-case, no .git).

    >>> normalize_url("git@GitHub.com:Acme/API.git")
    'https://github.com/acme/api'
    >>> normalize_url("ssh://git@github.com:22/acme/api")
    'https://github.com/acme/api'
    """
    text = url.strip().rstrip("/")
    if "://" in text:
        scheme, rest = text.split("://", 1)
        if scheme in ("file",):
            return "file://" + rest.lower().removesuffix(".git")
        host_part, _, path = rest.partition("/")
        host = host_part.rsplit("@", 1)[-1].split(":", 1)[0]
        text = f"https://{host}/{path}"
    elif (m := _SCP.match(text)) and not Path(text).exists():
        text = f"https://{m.group(1)}/{m.group(2).lstrip('/')}"
    else:
        return "file://" + str(Path(text).resolve()).lower().removesuffix(".git")
    return text.lower().removesuffix(".git").rstrip("/")


def readable_url(url: str) -> str:
    """``url`` as :func:`normalize_url` maps it, but in the case the user wrote it: for showing, never for ids.

    >>> readable_url("git@GitHub.com:Acme/API.git")
    'https://GitHub.com/Acme/API'
    """
    text = url.strip().rstrip("/")
    if "://" in text:
        scheme, rest = text.split("://", 1)
        if scheme == "file":
            return "file://" + _drop_git(rest)
        host_part, _, path = rest.partition("/")
        text = f"https://{host_part.rsplit('@', 1)[-1].split(':', 1)[0]}/{path}"
    elif (m := _SCP.match(text)) and not Path(text).exists():
        text = f"https://{m.group(1)}/{m.group(2).lstrip('/')}"
    else:
        return "file://" + _drop_git(str(Path(text).resolve()))
    return _drop_git(text).rstrip("/")


def _drop_git(text: str) -> str:
    return text[:-4] if text.lower().endswith(".git") else text


def remote_for_identity(repo: Repo) -> str | None:
    names = repos.remotes(repo)
    for name in ("origin", *names):
        url = repos.remote_url(repo, name)
        if url:
            return url
    return None


def project_id(repo: Repo) -> str:
    """blake3 of the normalized remote URL (``origin`` first), or of the work tree path when there is none."""
    url = remote_for_identity(repo)
    key = normalize_url(url) if url else "file://" + str(repos.workdir(repo).resolve())
    return blake3_hex(key.encode())


def project_label(repo: Repo) -> str:
    """A readable name for the project: ``host/org/repo`` or the directory name."""
    url = remote_for_identity(repo)
    if not url:
        return repos.workdir(repo).name
    return readable_url(url).split("://", 1)[-1]
