"""The person key: an ed25519 key that signs a person's decisions, separate from the machine key.

An agent runs as the same OS user as its person and can read every file the person can, the machine key
included; so the person key is never stored in the clear. It is either encrypted under a passphrase
(``$GITIVE_HOME/person.key``, mode 0600: PyNaCl ``pwhash.argon2id`` derives the key of a ``SecretBox``; the
KDF parameters live in the file so they can be raised later), or it lives in ``ssh-agent`` (the file then only
names the public key; add it with ``ssh-add -c`` so the agent asks the person before each signature).

The unlocked key stays in the process that asked for the passphrase: no cache, no agent of our own.
FIDO2 keys (``sk-ssh-ed25519``) sign a different message shape and are not supported yet.
"""

from __future__ import annotations

import json
import os
import secrets
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import nacl.pwhash
import nacl.secret
import nacl.utils
from nacl.exceptions import CryptoError
from nacl.signing import SigningKey

from gitive.core import sshagent
from gitive.core.home import ensure_home, gitive_home
from gitive.core.ids import is_hex64
from gitive.errors import GitiveError, KeyFileError

KEY_FILE = "person.key"
FORMAT = "gitive-person-key"
VERSION = 1
MIN_PASSPHRASE = 8
ARGON2ID = nacl.pwhash.argon2id


class WrongPassphrase(GitiveError):
    pass


@dataclass(frozen=True)
class Limits:
    """argon2id cost: ``opslimit`` passes over ``memlimit`` bytes. Kept in the key file."""

    opslimit: int
    memlimit: int


INTERACTIVE = Limits(ARGON2ID.OPSLIMIT_INTERACTIVE, ARGON2ID.MEMLIMIT_INTERACTIVE)
MODERATE = Limits(ARGON2ID.OPSLIMIT_MODERATE, ARGON2ID.MEMLIMIT_MODERATE)
# The cheapest argon2id allows: for test suites that create many keys. Recorded in the file like any other.
MINIMUM = Limits(ARGON2ID.OPSLIMIT_MIN, ARGON2ID.MEMLIMIT_MIN)


class Signer(Protocol):
    """Something that signs as a person key: an unlocked key in this process, or ssh-agent."""

    @property
    def public(self) -> str: ...

    def sign(self, message: bytes) -> bytes: ...


class LocalSigner:
    """A person key unlocked with its passphrase, held only by this object in this process."""

    def __init__(self, key: SigningKey) -> None:
        self._key = key

    @property
    def public(self) -> str:
        return self._key.verify_key.encode().hex()

    def sign(self, message: bytes) -> bytes:
        return self._key.sign(message).signature

    def __repr__(self) -> str:  # never show key material in a traceback or log
        return f"LocalSigner({self.public[:12]}…)"


class AgentSigner:
    """A person key held by ssh-agent; each signature may make the agent ask the person to confirm."""

    def __init__(self, public: str, socket_path: str | None = None) -> None:
        self._public = public
        self._socket = socket_path

    @property
    def public(self) -> str:
        return self._public

    def sign(self, message: bytes) -> bytes:
        return sshagent.sign(self._public, message, self._socket)


@dataclass(frozen=True)
class KeyFile:
    kind: str  # "passphrase" | "ssh-agent"
    public: str
    data: dict[str, Any]

    @property
    def limits(self) -> Limits | None:
        kdf = self.data.get("kdf")
        return Limits(kdf["opslimit"], kdf["memlimit"]) if kdf else None


def key_path() -> Path:
    return gitive_home() / KEY_FILE


def exists(path: Path | None = None) -> bool:
    return (path or key_path()).exists()


def _parse(text: str, where: str) -> KeyFile:
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise KeyFileError(f"{where} is not a gitive person key")
    if data.get("version") != VERSION:
        raise KeyFileError(f"{where} is a person key of version {data.get('version')!r}; this gitive reads "
                           f"version {VERSION}: upgrade gitive")
    kind, public = data.get("kind"), data.get("public")
    if not is_hex64(public) or kind not in ("passphrase", "ssh-agent"):
        raise KeyFileError(f"{where} is not a gitive person key (bad kind or public key)")
    if kind == "passphrase":
        kdf = data.get("kdf")
        ok = (isinstance(kdf, dict) and kdf.get("name") == "argon2id"
              and all(isinstance(kdf.get(k), int) and kdf[k] > 0 for k in ("opslimit", "memlimit"))
              and isinstance(kdf.get("salt"), str) and isinstance(data.get("box"), str))
        if not ok:
            raise KeyFileError(f"{where} is not a gitive person key (bad KDF parameters)")
    return KeyFile(kind, public, data)


def load(path: Path | None = None) -> KeyFile:
    """Read the person key file (not unlocking it).

    Raises:
        KeyFileError: missing, malformed, of an unknown version, or readable by group or others.
    """
    path = path or key_path()
    if not path.exists():
        raise KeyFileError(f"no person key at {path}: run `gitive person init` (or `gitive person import` "
                           "with the key exported from your other machine)")
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(f"{path} is readable by other users (mode {stat.S_IMODE(mode):o}); "
                           f"run `chmod 600 {path}` and try again")
    return _parse(path.read_text(encoding="utf-8", errors="replace"), str(path))


def _write(path: Path, data: dict[str, Any], *, replace: bool) -> None:
    """Write the key file atomically with mode 0600; never overwrite an existing key unless ``replace``."""
    ensure_home()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
    try:
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise KeyFileError(f"a person key already exists at {path}; nothing was changed") from None
    finally:
        tmp.unlink(missing_ok=True)


def _check_passphrase(passphrase: str) -> bytes:
    if len(passphrase) < MIN_PASSPHRASE:
        raise GitiveError(f"the passphrase must have at least {MIN_PASSPHRASE} characters; nothing was written")
    return passphrase.encode("utf-8")


def _seal(seed: bytes, passphrase: str, limits: Limits) -> dict[str, Any]:
    salt = nacl.utils.random(ARGON2ID.SALTBYTES)
    box_key = ARGON2ID.kdf(nacl.secret.SecretBox.KEY_SIZE, _check_passphrase(passphrase), salt,
                           opslimit=limits.opslimit, memlimit=limits.memlimit)
    return {"kdf": {"name": "argon2id", "opslimit": limits.opslimit, "memlimit": limits.memlimit,
                    "salt": salt.hex()},
            "box": nacl.secret.SecretBox(box_key).encrypt(seed).hex()}


def create(passphrase: str, limits: Limits = INTERACTIVE, path: Path | None = None) -> KeyFile:
    """Create a new person key encrypted under ``passphrase``.

    Raises:
        KeyFileError: a person key already exists there.
        GitiveError: the passphrase is too short.
    """
    path = path or key_path()
    if path.exists():
        raise KeyFileError(f"a person key already exists at {path}; nothing was changed")
    key = SigningKey.generate()
    data = {"format": FORMAT, "version": VERSION, "kind": "passphrase",
            "public": key.verify_key.encode().hex(), **_seal(key.encode(), passphrase, limits)}
    _write(path, data, replace=False)
    return _parse(json.dumps(data), str(path))


def use_agent_key(public: str, comment: str = "", path: Path | None = None) -> KeyFile:
    """Name an ed25519 key held by ssh-agent as this home's person key (nothing secret is stored)."""
    path = path or key_path()
    data = {"format": FORMAT, "version": VERSION, "kind": "ssh-agent", "public": public, "comment": comment}
    _write(path, data, replace=False)
    return _parse(json.dumps(data), str(path))


def unlock(keyfile: KeyFile, passphrase: str | None = None) -> Signer:
    """A signer for ``keyfile``: decrypt it with ``passphrase``, or reach its key in ssh-agent.

    Raises:
        WrongPassphrase: the passphrase does not open the key.
        AgentError: the agent does not hold the key.
    """
    if keyfile.kind == "ssh-agent":
        if keyfile.public not in {i.public for i in sshagent.identities()}:
            raise sshagent.AgentError(f"ssh-agent does not hold your person key {keyfile.public[:12]}…: "
                                      "add it with `ssh-add -c KEYFILE`")
        return AgentSigner(keyfile.public)
    kdf = keyfile.data["kdf"]
    try:
        box_key = ARGON2ID.kdf(nacl.secret.SecretBox.KEY_SIZE, (passphrase or "").encode("utf-8"),
                               bytes.fromhex(kdf["salt"]), opslimit=kdf["opslimit"], memlimit=kdf["memlimit"])
        seed = nacl.secret.SecretBox(box_key).decrypt(bytes.fromhex(keyfile.data["box"]))
    except (CryptoError, ValueError):
        raise WrongPassphrase("wrong passphrase for your person key; nothing was signed") from None
    key = SigningKey(seed)
    if key.verify_key.encode().hex() != keyfile.public:
        raise KeyFileError("the person key file is inconsistent (its public key does not match); "
                           "import it again from your other machine")
    return LocalSigner(key)


def change_passphrase(old: str, new: str, limits: Limits | None = None, path: Path | None = None) -> KeyFile:
    """Re-encrypt the person key under ``new`` (the key itself, and so every signature, stays the same).

    The KDF cost is raised to at least ``limits`` (default: the file's own, or INTERACTIVE if higher).
    """
    path = path or key_path()
    keyfile = load(path)
    if keyfile.kind != "passphrase":
        raise GitiveError("this person key lives in ssh-agent; it has no gitive passphrase")
    signer = unlock(keyfile, old)
    assert isinstance(signer, LocalSigner)
    current = keyfile.limits or INTERACTIVE
    target = limits or Limits(max(current.opslimit, INTERACTIVE.opslimit),
                              max(current.memlimit, INTERACTIVE.memlimit))
    data = {**keyfile.data, **_seal(signer._key.encode(), new, target)}
    _write(path, data, replace=True)
    return _parse(json.dumps(data), str(path))


def export_text(path: Path | None = None) -> str:
    """The key file as text, for ``gitive person import`` on the person's other machine (still encrypted)."""
    return json.dumps(load(path).data, indent=2, sort_keys=True) + "\n"


def import_text(text: str, path: Path | None = None) -> KeyFile:
    """Install an exported person key in this home.

    Raises:
        KeyFileError: the text is not a person key, or this home already has a different one.
    """
    path = path or key_path()
    keyfile = _parse(text, "the imported text")
    if path.exists():
        mine = load(path)
        if mine.public == keyfile.public:
            return mine
        raise KeyFileError(f"this home already has another person key ({mine.public[:12]}…) at {path}; "
                           "nothing was changed")
    _write(path, keyfile.data, replace=False)
    return keyfile
