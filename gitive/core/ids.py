"""Typed ids and the blake3 hashing that makes them."""

from __future__ import annotations

import re
from typing import Any, NewType

import blake3

from gitive.core import canonical

MachineId = NewType("MachineId", str)  # lowercase hex of an ed25519 public key (64 chars)
TeamId = NewType("TeamId", str)  # 16 random bytes, hex
RecordId = NewType("RecordId", str)  # blake3 hex
RefName = NewType("RefName", str)

_MACHINE_RE = re.compile(r"^[0-9a-f]{64}$")
_TEAM_RE = re.compile(r"^[0-9a-f]{32}$")
NAME_RE = re.compile(r"^[a-z0-9-]{1,64}$")
_HEX64_RE = re.compile(r"[0-9a-f]{64}")


def blake3_hex(data: bytes) -> str:
    return blake3.blake3(data).hexdigest()


def record_id(*parts: Any) -> RecordId:
    """Id of a record built from its identifying fields, stable across machines."""
    return RecordId(blake3_hex(canonical.dumps(list(parts))))


def is_machine_id(value: object) -> bool:
    return isinstance(value, str) and bool(_MACHINE_RE.fullmatch(value))


def is_team_id(value: object) -> bool:
    return isinstance(value, str) and bool(_TEAM_RE.fullmatch(value))


def is_hex64(value: object) -> bool:
    return isinstance(value, str) and bool(_HEX64_RE.fullmatch(value))


def id_prefix(value: str, min_length: int = 1) -> str | None:
    """``value`` as a lowercase prefix of a 64-hex id, or None when it cannot be one (too long, not hex, shorter
    than ``min_length``): the caller answers "no such id" without a query. A 100 KB ``LIKE`` pattern is an
    SQLite error ("pattern too complex"), not an answer."""
    text = value.strip().lower()
    if not min_length <= len(text) <= 64 or any(ch not in "0123456789abcdef" for ch in text):
        return None
    return text


def is_name(value: object) -> bool:
    """Person and session names: ``a-z0-9-``, 1 to 64 characters."""
    return isinstance(value, str) and bool(NAME_RE.fullmatch(value))
