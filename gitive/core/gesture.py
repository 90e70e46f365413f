"""Gestures: a person key's signature inside a decision record, bound to the machine that writes it.

``gesture = {key, sig}``, ``sig`` over ``"hive/1/<team-id>/gesture/<kind>/" + canonical([author, record])``
where ``record`` is the record without its ``gesture`` and ``endorse`` fields. Binding the author machine
means a gesture copied into another machine's log does not verify. ``endorse`` has the same shape and covers
the same bytes; a ``person-key`` record that replaces a registered key carries one by the previous key or an
admin's. Whether a gesture *counts* (whose key it is, whether the record needs one) is the roster's question.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from gitive.constants import PROTOCOL
from gitive.core import canonical
from gitive.core.ids import is_hex64
from gitive.core.keys import verify

if TYPE_CHECKING:
    from gitive.core.personkey import Signer

# Record kinds that are a person's decision (docs/verification.md §3). A `project-member` record decides only
# when it grants (confirmed, or owner); a plain request to join a project is not a decision.
DECISION_KINDS = ("member", "invite", "person-key", "project-member", "review", "tombstone", "migration")
FIELDS = ("gesture", "endorse")


def is_decision(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    if kind == "project-member":
        return bool(record.get("confirmed")) or record.get("role") == "owner"
    return kind in DECISION_KINDS


def message(team_id: str, author: str, record: dict[str, Any]) -> bytes:
    """The bytes a gesture signs: team, record kind, author machine and the record without its gestures."""
    bare = {k: v for k, v in record.items() if k not in FIELDS}
    return f"{PROTOCOL}/{team_id}/gesture/{record['type']}/".encode() + canonical.dumps([author, bare])


def sign(signer: Signer, team_id: str, author: str, record: dict[str, Any], field: str = "gesture"
         ) -> dict[str, Any]:
    """Return ``record`` with ``field`` (``gesture`` or ``endorse``) signed by ``signer`` for ``author``."""
    sig = signer.sign(message(team_id, author, record))
    return {**record, field: {"key": signer.public, "sig": sig.hex()}}


def key_of(team_id: str, author: str, record: dict[str, Any], field: str = "gesture") -> str | None:
    """The person key whose valid signature ``record[field]`` carries, or None (absent, malformed, forged)."""
    found = record.get(field)
    if not isinstance(found, dict) or set(found) != {"key", "sig"}:
        return None
    key, sig = found["key"], found["sig"]
    if not is_hex64(key) or not isinstance(sig, str) or len(sig) != 128:
        return None
    try:
        data = message(team_id, author, record)
    except (TypeError, ValueError, KeyError):
        return None
    return key if _verified(key, data, sig) else None


@lru_cache(maxsize=4096)
def _verified(key: str, data: bytes, sig: str) -> bool:
    """One ed25519 check per distinct (key, message, signature): the anchor's gate reads every person's
    preferences and gate-live records again each tick, and their signatures do not change."""
    return verify(key, data, sig)
