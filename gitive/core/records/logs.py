"""Where an entry lives: the log names a machine writes (and a project's log name) and the scopes an entry may
have. Shared by the field checks (a ``heads`` field names logs) and the entry checks."""

from __future__ import annotations

from typing import Any

from gitive.constants import LOG_NAMES, PROJECT_LOG_PREFIX
from gitive.core.ids import is_hex64, is_name
from gitive.errors import InvalidRecord

TEAM_SCOPE: dict[str, Any] = {"team": True}  # never mutated: every team-scope entry shares it


def project_log(project_id: str) -> str:
    """The log a machine writes project-scope entries of ``project_id`` to."""
    return PROJECT_LOG_PREFIX + project_id[:16]


def is_log_name(log: Any) -> bool:
    """A known log, or a project log ``project-<16 hex>`` (one per author and project)."""
    if log in LOG_NAMES:
        return True
    suffix = log[len(PROJECT_LOG_PREFIX):] if isinstance(log, str) and log.startswith(PROJECT_LOG_PREFIX) else ""
    return len(suffix) == 16 and all(c in "0123456789abcdef" for c in suffix)


def check_log_name(log: Any) -> None:
    if not is_log_name(log):
        raise InvalidRecord(f"unknown log {log!r}; logs are {', '.join(LOG_NAMES)} and project-<16 hex>")


def check_scope(scope: Any) -> None:
    ok = isinstance(scope, dict) and len(scope) == 1 and (
        scope.get("team") is True
        or is_hex64(scope.get("project"))
        or is_name(scope.get("personal"))
    )
    if not ok:
        raise InvalidRecord(f"bad scope {scope!r}: use {{team: true}}, {{project: id}} or {{personal: person}}")
