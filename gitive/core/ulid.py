"""ULIDs for message ids: sortable by time, 26 characters of Crockford base32 (daemon and anchor)."""

from __future__ import annotations

import os

from gitive.core.clock import now_ms

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_ulid(ms: int | None = None) -> str:
    value = ((ms if ms is not None else now_ms()) & ((1 << 48) - 1)) << 80 | int.from_bytes(os.urandom(10), "big")
    out = []
    for _ in range(26):
        out.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(out))
