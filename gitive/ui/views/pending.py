"""Views whose data a team may not have: what "not enabled on this team" says, and what to run to enable it."""

from __future__ import annotations

import importlib.util
from typing import Any

from gitive.ui.html import empty, h


def available(module: str) -> bool:
    """Whether this gitive ships ``module`` (a feature that landed after the dashboard)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def not_enabled(view: str, why: str, commands: list[str], now: int) -> dict[str, Any]:
    return {"view": view, "enabled": False, "reason": f"not enabled on this team: {why}", "enable": commands,
            "now": now}


def render_not_enabled(title: str, data: dict[str, Any]) -> str:
    return (f"<h1>{h(title)}</h1>"
            + empty(f"{title}: not enabled on this team", [h(data["reason"][0].upper() + data["reason"][1:]) + "."],
                    data["enable"]))
