"""A module imported at its first attribute read, so a command that never uses it never pays for it."""

from __future__ import annotations

import importlib
from typing import Any


class OnFirstUse:
    """Stands for the module ``name`` and imports it at the first attribute read.

    The CLI and the MCP server answer before PyNaCl, pygit2 and the index code behind them have loaded.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)
