"""``Signed<T>``: a body, the machine that signed it, and an ed25519 signature bound to team and kind.

The signature covers ``"hive/1/<team-id>/<kind>/" + canonical(body)``, so an entry cannot be replayed
into another team or read as another kind of record.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from nacl.signing import SigningKey

from gitive.constants import PROTOCOL
from gitive.core import canonical
from gitive.core.keys import machine_id, verify


@lru_cache(maxsize=256)
def domain(team_id: str, kind: str) -> bytes:
    return f"{PROTOCOL}/{team_id}/{kind}/".encode()


def sign(key: SigningKey, team_id: str, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    """Return ``{body, by, sig}`` for ``body`` signed by ``key``."""
    message = domain(team_id, kind) + canonical.dumps(body)
    return {"body": body, "by": machine_id(key), "sig": key.sign(message).signature.hex()}


def signature_ok(team_id: str, kind: str, signed: dict[str, Any]) -> bool:
    """True when ``signed['sig']`` is ``signed['by']``'s signature over the body for this team and kind."""
    message = domain(team_id, kind) + canonical.dumps_trusted(signed["body"])
    return verify(signed["by"], message, signed["sig"])


def signature_ok_raw(team_id: str, kind: str, by: str, sig: str, body_bytes: bytes) -> bool:
    """As :func:`signature_ok`, over body bytes already in canonical form (the ingest hot path)."""
    return verify(by, domain(team_id, kind) + body_bytes, sig)
