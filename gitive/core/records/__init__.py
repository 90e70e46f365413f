"""Record kinds and their shapes: the write-time checks every entry passes before it is signed.

One module per record family says which kinds it has and their fields: ``roster`` (team, members, invites,
person keys, migration), ``lessons`` (lessons, reviews, tombstones, citations), ``mail`` (messages, acks),
``projects`` (project members and links), ``obligations`` (obligations, their states, firings, verdicts,
routing), ``gate`` (items, ledger, preferences), ``screening`` (findings), ``prepared`` (tasks, prepared
steps, standing approvals, Outside paths) and ``sealed`` (scope keys, sealed records). Beside them: ``fields``
(what each field type accepts), ``kinds`` (every kind in one table, and the size caps), ``logs`` (log names and
scopes) and ``entries`` (``check_record`` and ``check_entry``). Families import nothing of this package.

The JSON Schemas in ``refs_schema/`` say the same in a machine-readable form; tests hold the two together.
Every name below is importable from ``gitive.core.records`` as it was when this was one module; the constants it
only imported (``LOG_NAMES``, ``MAX_SKEW_MS``, ``PROJECT_LOG_PREFIX``) are imported from ``gitive.constants``.
"""

from __future__ import annotations

from gitive.core.records.entries import ENTRY_VERSION, check_entry, check_record
from gitive.core.records.fields import ACTORS, MAX_INT
from gitive.core.records.gate import GATE_BRANCHES, URGENCIES
from gitive.core.records.kinds import FIELD_CAPS, KINDS, TYPE_CAPS, field_cap
from gitive.core.records.lessons import LESSON_KINDS
from gitive.core.records.logs import TEAM_SCOPE, check_log_name, check_scope, is_log_name, project_log
from gitive.core.records.mail import MAX_MESSAGE_BODY
from gitive.core.records.obligations import FIRING_REASONS, OBLIGATION_STATES, ROUTING_OUTCOMES, VERDICTS
from gitive.core.records.prepared import PREPARED_STATES, STANDING_STATES
from gitive.core.records.projects import PROJECT_ROLES
from gitive.core.records.roster import ROLES

__all__ = [
    "ACTORS", "ENTRY_VERSION", "FIELD_CAPS", "FIRING_REASONS", "GATE_BRANCHES", "KINDS", "LESSON_KINDS", "MAX_INT",
    "MAX_MESSAGE_BODY", "OBLIGATION_STATES", "PREPARED_STATES", "PROJECT_ROLES", "ROLES", "ROUTING_OUTCOMES",
    "STANDING_STATES", "TEAM_SCOPE", "TYPE_CAPS", "URGENCIES", "VERDICTS", "check_entry", "check_log_name", "check_record", "check_scope",
    "field_cap", "is_log_name", "project_log",
]
