"""Obligations: open, fired, late and lapsing, each with its condition and its three-valued state."""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.team.hive import Hive
from gitive.ui.views import pending

ENABLE = ["gitive owe --when 'e.event.action == \"vcs.merged\" && e.branch == \"auth-rotation\"' "
          "--do \"remove the grace period\"", "gitive invite --anchor"]


def collect(hive: Hive, conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    if not pending.available("gitive.anchor"):
        return pending.not_enabled("obligations", "this gitive has no obligations yet (they arrive with "
                                   "`gitive owe` and the anchor)", ENABLE, now)
    return pending.not_enabled("obligations", "nobody owes anything yet", ENABLE, now)


def render(data: dict[str, Any]) -> str:
    return pending.render_not_enabled("Obligations", data)
