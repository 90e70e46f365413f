"""Invite codes that admit a machine while the inviter is offline.

The code carries the team id, the founder's key (the trust anchor a joiner pins) and a 16-byte secret.
The inviter's roster stores only ``blake3(secret)`` (the invite id) and the public half of a key derived
from the secret. The joiner proves it holds the secret by signing its own admission with that derived key,
so the secret itself never reaches a ref anyone can read.
"""

from __future__ import annotations

import base64
import os
from typing import NamedTuple

import blake3
from nacl.signing import SigningKey

from gitive.core import canonical
from gitive.core.keys import verify
from gitive.core.signed import domain
from gitive.errors import InviteError

PREFIX = "gitive-"
_SECRET_LEN = 16
_CHECK_LEN = 4


class InviteCode(NamedTuple):
    team_id: str
    founder: str
    secret: bytes

    @property
    def invite_id(self) -> str:
        return invite_id(self.secret)

    def key(self) -> SigningKey:
        return invite_key(self.secret)

    def encode(self) -> str:
        raw = bytes.fromhex(self.team_id) + bytes.fromhex(self.founder) + self.secret
        raw += _checksum(raw)
        return PREFIX + base64.b32encode(raw).decode().rstrip("=").lower()


def _checksum(raw: bytes) -> bytes:
    """Four bytes that catch a mistyped or truncated code before it is taken for another team."""
    return blake3.blake3(b"gitive/invite-code/" + raw).digest()[:_CHECK_LEN]


def new_secret() -> bytes:
    return os.urandom(_SECRET_LEN)


def invite_id(secret: bytes) -> str:
    return blake3.blake3(secret).hexdigest()


def invite_key(secret: bytes) -> SigningKey:
    return SigningKey(blake3.blake3(b"gitive/invite-key/" + secret).digest())


def parse(code: str) -> InviteCode:
    """Decode an invite code.

    Raises:
        InviteError: the text is not a gitive invite code.
    """
    text = code.strip()
    if not text.startswith(PREFIX):
        raise InviteError("that is not a gitive invite code (it starts with `gitive-`); ask for a new one")
    body = text[len(PREFIX):].upper()
    try:
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
    except ValueError:
        raw = b""
    if len(raw) != 16 + 32 + _SECRET_LEN + _CHECK_LEN:
        raise InviteError("the invite code is damaged (wrong length); copy it again or ask for a new one")
    body, check = raw[:-_CHECK_LEN], raw[-_CHECK_LEN:]
    if _checksum(body) != check:
        raise InviteError("the invite code is damaged (checksum mismatch); copy it again or ask for a new one")
    return InviteCode(body[:16].hex(), body[16:48].hex(), body[48:])


def _proof_message(team_id: str, invite: str, machine: str, person: str) -> bytes:
    return domain(team_id, "invite-redeem") + canonical.dumps([invite, machine, person])


def prove(code: InviteCode, machine: str, person: str) -> str:
    """The joiner's proof that it holds the invite secret, bound to its machine and person."""
    message = _proof_message(code.team_id, code.invite_id, machine, person)
    return code.key().sign(message).signature.hex()


def proof_ok(team_id: str, invite: str, invite_pub: str, machine: str, person: str, proof: str) -> bool:
    return verify(invite_pub, _proof_message(team_id, invite, machine, person), proof)
