"""Finding a repository's git dir, its config and gitive's index from a working directory (stdlib only).

Hooks run in a harness's process with only a cwd; importing pygit2 would cost 85 ms, so this reads the few
things it needs from the files git itself keeps.
"""

from __future__ import annotations

from pathlib import Path

# The stdlib readers of git's files live in the store layer; hooks reach them through this module.
from gitive.store.gitdir import Located, find, read_config, read_config_all

__all__ = ["Located", "find", "index_path", "project_id", "read_config", "read_config_all"]


def index_path(found: Located) -> Path:
    """Where gitive's index for this repository lives (its common git dir, as ``Hive.index_path``)."""
    return found.common_dir / "gitive" / "index.sqlite"


def project_id(found: Located) -> str | None:
    """The project id cached by the last gitive command run here (computing it needs blake3)."""
    try:
        return (found.common_dir / "gitive" / "project-id").read_text().strip() or None
    except OSError:
        return None
