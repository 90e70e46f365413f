"""What one tick's prepared work sees: the anchor's run, the index, the gate, the settings and the remote.

Below ``work`` (the tick's step) and ``standing_use`` (standing approvals in the tick), which both take it.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from gitive.anchor.base.context import Gate, Run, TickReport
from gitive.anchor.prepared.settings import Prepared


@dataclass
class Context:
    anchor: Run
    index: sqlite3.Connection
    gate: Gate | None  # gitive.anchor.gate.gating.Gate in a running anchor
    now: int
    settings: Prepared
    remote: str
    report: TickReport
