"""Where a machine keeps its own state: ``$GITIVE_HOME``, by default ``~/.gitive``."""

from __future__ import annotations

import os
from pathlib import Path


def gitive_home() -> Path:
    env = os.environ.get("GITIVE_HOME")
    return Path(env).expanduser() if env else Path.home() / ".gitive"


def ensure_home() -> Path:
    home = gitive_home()
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    return home
