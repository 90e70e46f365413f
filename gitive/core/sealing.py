"""Sealed scopes, the cryptography (docs/scopes.md): scope keys per epoch, sealed to machines, and what they seal.

A sealed scope has a sequence of *epochs*. Each epoch has a random 32-byte key; its id is a BLAKE3 derived key of
it, so the id names the key without revealing it and a reader can tell a wrong key from the right one. The key
is given to each recipient machine in a PyNaCl ``SealedBox`` to that machine's X25519 key, derived from its
ed25519 machine key (``to_curve25519_*``), and older epochs' keys are wrapped under the new one (``SecretBox``),
so holding the newest key of a scope opens its whole history. Records and bodies of the scope are encrypted
with an epoch key (``SecretBox``: XSalsa20-Poly1305, a random nonce per box).

Nothing here touches git or the index: these are pure functions over bytes and keys.
"""

from __future__ import annotations

import base64
import binascii
import functools
from typing import TYPE_CHECKING, Any

import blake3
import nacl.exceptions
import nacl.public
import nacl.secret
import nacl.signing
import nacl.utils

from gitive.core import canonical
from gitive.errors import InvalidRecord

if TYPE_CHECKING:
    from nacl.signing import SigningKey

SEALED_VERSION = 1  # the `v` of scope-key and sealed records, and of the sealed plaintext
KEY_BYTES = nacl.secret.SecretBox.KEY_SIZE
_ID_CONTEXT = "gitive 2026-12 scope key id"
_NAME_CONTEXT = "gitive 2026-12 sealed body names"


def new_key() -> bytes:
    """A fresh epoch key (32 random bytes)."""
    return nacl.utils.random(KEY_BYTES)


def epoch_id(key: bytes) -> str:
    """The public id of an epoch key: a BLAKE3 key derivation of it (64 hex), which reveals nothing of the key."""
    return blake3.blake3(key, derive_key_context=_ID_CONTEXT).hexdigest()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _unb64(text: Any) -> bytes | None:
    if not isinstance(text, str):
        return None
    try:
        return base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return None


def seal_key_to(machine: str, key: bytes) -> str:
    """``key`` in a SealedBox to the X25519 key of machine id ``machine`` (base64).

    Raises:
        ValueError: ``machine`` is not a valid ed25519 public key.
    """
    try:
        verify = nacl.signing.VerifyKey(bytes.fromhex(machine))
        public = verify.to_curve25519_public_key()
    except (nacl.exceptions.CryptoError, ValueError) as exc:
        raise ValueError(f"machine {machine[:12]} has no usable public key") from exc
    return _b64(nacl.public.SealedBox(public).encrypt(key))


def open_key(machine_key: SigningKey, box: Any, epoch: str) -> bytes | None:
    """The epoch key in ``box`` (sealed to ``machine_key``'s machine), if it opens and its id is ``epoch``."""
    key = open_any_key(machine_key, box)
    return key if key is not None and epoch_id(key) == epoch else None


def open_any_key(machine_key: SigningKey, box: Any) -> bytes | None:
    """A one-off key in ``box`` (sealed to ``machine_key``'s machine by :func:`seal_key_to`), with no epoch to
    check it against: for a single sealed value (an anchor's item title), where a wrong key opens nothing."""
    data = _unb64(box)
    if data is None:
        return None
    try:
        key = nacl.public.SealedBox(machine_key.to_curve25519_private_key()).decrypt(data)
    except nacl.exceptions.CryptoError:
        return None
    return key if len(key) == KEY_BYTES else None


def b64(data: bytes) -> str:
    return _b64(data)


def unb64(text: Any) -> bytes | None:
    """The bytes of base64 ``text``, or None when it is not base64 text."""
    return _unb64(text)


@functools.lru_cache(maxsize=64)
def _box(key: bytes) -> nacl.secret.SecretBox:
    return nacl.secret.SecretBox(key)  # one per epoch key: an index opens thousands of records with a few keys


def encrypt(key: bytes, plaintext: bytes) -> bytes:
    """``plaintext`` in a SecretBox under ``key`` (random nonce first)."""
    return bytes(_box(key).encrypt(plaintext))


def decrypt(key: bytes, data: bytes) -> bytes | None:
    """The plaintext of a SecretBox under ``key``, or None if it does not open (wrong key, tampered)."""
    try:
        return _box(key).decrypt(data)
    except (nacl.exceptions.CryptoError, ValueError, TypeError):
        return None


def wrap(key: bytes, old: bytes) -> str:
    """An older epoch key ``old`` wrapped under the newer ``key`` (base64)."""
    return _b64(encrypt(key, old))


def unwrap(key: bytes, box: Any, epoch: str) -> bytes | None:
    """The older epoch key wrapped in ``box`` under ``key``, if it opens and its id is ``epoch``."""
    data = _unb64(box)
    old = decrypt(key, data) if data is not None else None
    return old if old is not None and len(old) == KEY_BYTES and epoch_id(old) == epoch else None


def seal_record(key: bytes, author: str, log: str, record: dict[str, Any], migrated: str | None = None) -> str:
    """The ``box`` of a sealed record: the canonical plaintext ``{v, author, log, record[, migrated]}`` encrypted
    under ``key`` (base64). Author and log are inside so a box copied into another log does not open there."""
    plain: dict[str, Any] = {"v": SEALED_VERSION, "author": author, "log": log, "record": record}
    if migrated is not None:
        plain["migrated"] = migrated
    return _b64(encrypt(key, canonical.dumps(plain)))


def open_record(key: bytes, box: Any) -> dict[str, Any] | None:
    """The plaintext object of a sealed record's ``box`` (shape unchecked), or None if it does not open."""
    data = _unb64(box)
    plain = decrypt(key, data) if data is not None else None
    if plain is None:
        return None
    try:
        value = canonical.loads_canonical(plain)
    except InvalidRecord:  # not canonical JSON: refused by the caller like any other bad plaintext
        return None
    return value if isinstance(value, dict) else None


def body_name(key: bytes, body_hash: str) -> str:
    """Where a sealed body is stored in a body store: a keyed hash of its (plaintext) body hash, so the store
    shows nothing derived from the text; only holders of the epoch key can find it."""
    name_key = blake3.blake3(key, derive_key_context=_NAME_CONTEXT).digest()
    return blake3.blake3(body_hash.encode("ascii"), key=name_key).hexdigest()


def seal_body(key: bytes, data: bytes) -> bytes:
    """A sealed body blob: the body's canonical bytes in a SecretBox (nonce first, no framing)."""
    return encrypt(key, data)


def open_body(key: bytes, blob: bytes) -> bytes | None:
    return decrypt(key, blob)
