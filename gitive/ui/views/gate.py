"""Gate: the anchor's ledger as a timeline, interruptions per day against each person's budget, shadow or live."""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.team.hive import Hive
from gitive.ui.views import pending

ENABLE = ["gitive invite --anchor", "gitive anchor start"]


def collect(hive: Hive, conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    if not pending.available("gitive.anchor.gate"):
        return pending.not_enabled("gate", "this gitive has no attention gate yet (it arrives with the anchor "
                                   "and `gitive gate`)", ENABLE, now)
    return pending.not_enabled("gate", "no anchor has decided anything yet", ENABLE, now)


def render(data: dict[str, Any]) -> str:
    return pending.render_not_enabled("Gate", data)
