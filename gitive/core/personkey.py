"""The person key: an ed25519 key that signs a person's decisions, separate from the machine key.

An agent runs as the same OS user as its person and can read every file the person can, the machine key
included; so the person key is never stored in the clear. It is either encrypted under a passphrase
(``$GITIVE_HOME/person.key``, mode 0600: PyNaCl ``pwhash.argon2id`` derives the key of a ``SecretBox``; the
KDF parameters live in the file so they can be raised later), or it lives in ``ssh-agent`` (the file then only
names the public key; add it with ``ssh-add -c`` so the agent asks the person before each signature).

What the passphrase is worth if the file leaks: argon2id at libsodium's MODERATE cost (3 passes over 256 MiB,
about 0.8 s of one core per guess), and a passphrase of at least 12 characters that zxcvbn scores 3 or more.
A key file written at a lower cost (gitive before 2026-12 used INTERACTIVE, 64 MiB) is re-encrypted at
MODERATE the next time it is unlocked: the new file replaces the old one atomically, under a lock, and only if
nobody changed it meanwhile, so an interrupted upgrade leaves the old file, which still opens.

Test suites may create and keep keys at argon2id's minimum cost only with ``GITIVE_TEST_KDF=minimum``, which
gitive honours only for a key file inside the system's temporary directory and refuses for any other (the
command fails): a person's real key never gets cheaper because of an environment variable.

The unlocked key stays in the process that asked for the passphrase: no cache, no agent of our own.
FIDO2 keys (``sk-ssh-ed25519``) sign a different message shape and are not supported yet.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import secrets
import stat
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
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
MIN_PASSPHRASE = 12
MIN_SCORE = 3  # zxcvbn's "safely unguessable: moderate protection from offline slow-hash scenario"
ARGON2ID = nacl.pwhash.argon2id
TEST_KDF = "GITIVE_TEST_KDF"


class WrongPassphrase(GitiveError):
    pass


@dataclass(frozen=True)
class Limits:
    """argon2id cost: ``opslimit`` passes over ``memlimit`` bytes. Kept in the key file."""

    opslimit: int
    memlimit: int


INTERACTIVE = Limits(ARGON2ID.OPSLIMIT_INTERACTIVE, ARGON2ID.MEMLIMIT_INTERACTIVE)
MODERATE = Limits(ARGON2ID.OPSLIMIT_MODERATE, ARGON2ID.MEMLIMIT_MODERATE)
# The cheapest argon2id allows: for test suites that create many keys (only with GITIVE_TEST_KDF=minimum).
MINIMUM = Limits(ARGON2ID.OPSLIMIT_MIN, ARGON2ID.MEMLIMIT_MIN)
DEFAULT = MODERATE  # what a new key gets, and the least an existing key is raised to at its next unlock


def test_cost_allowed(path: Path | None = None) -> bool:
    """Whether ``GITIVE_TEST_KDF=minimum`` is set for a test's key file (``path``, default this home's), one
    inside the system's temporary directory.

    Raises:
        GitiveError: the setting is present for a key file anywhere else (a real home), or has another value.
    """
    value = os.environ.get(TEST_KDF)
    if value is None:
        return False
    temp = Path(tempfile.gettempdir()).resolve()
    where = (path or key_path()).resolve()
    if value != "minimum" or not where.is_relative_to(temp):
        raise GitiveError(f"{TEST_KDF} is for test suites (GITIVE_TEST_KDF=minimum, the key file under {temp}); "
                          f"it is refused for {str(where)[:80]}: unset it")
    return True


def floor_cost(path: Path | None = None) -> Limits:
    """The least cost the key file at ``path`` may keep: MODERATE (MINIMUM for a test's key file, see
    :func:`test_cost_allowed`)."""
    return MINIMUM if test_cost_allowed(path) else DEFAULT


def below(limits: Limits, floor: Limits) -> bool:
    return limits.opslimit < floor.opslimit or limits.memlimit < floor.memlimit


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
    path: Path | None = field(default=None, compare=False)  # where it was read: an unlock may upgrade it there
    raw: str = field(default="", compare=False, repr=False)  # the file as read: an upgrade replaces only that

    @property
    def limits(self) -> Limits | None:
        kdf = self.data.get("kdf")
        return Limits(kdf["opslimit"], kdf["memlimit"]) if kdf else None


def key_path() -> Path:
    return gitive_home() / KEY_FILE


def exists(path: Path | None = None) -> bool:
    return (path or key_path()).exists()


def _parse(text: str, where: str, path: Path | None = None) -> KeyFile:
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
    return KeyFile(kind, public, data, path, text if path is not None else "")


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
    return _parse(path.read_text(encoding="utf-8", errors="replace"), str(path), path)


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


def check_passphrase(passphrase: str) -> bytes:
    """The passphrase as bytes, if it is worth protecting a person key: at least 12 characters, and a zxcvbn
    score of at least 3 (no common password, keyboard walk, repeat or date pattern).

    Raises:
        GitiveError: it is too short or too easy to guess; the message says why, never the passphrase.
    """
    if len(passphrase) < MIN_PASSPHRASE:
        raise GitiveError(f"the passphrase must have at least {MIN_PASSPHRASE} characters; nothing was written")
    from zxcvbn import zxcvbn

    verdict = zxcvbn(passphrase[:100], user_inputs=["gitive", "person", "key"])  # zxcvbn slows on long input
    if verdict["score"] < MIN_SCORE:
        warning = verdict["feedback"].get("warning") or "it is easy to guess"
        hint = " ".join(verdict["feedback"].get("suggestions") or ["Use four or five uncommon words."])
        raise GitiveError(f"the passphrase is too easy to guess ({warning.rstrip('.')}). {hint} Nothing was "
                          "written")
    return passphrase.encode("utf-8")


def _seal(seed: bytes, passphrase: str, limits: Limits) -> dict[str, Any]:
    salt = nacl.utils.random(ARGON2ID.SALTBYTES)
    box_key = ARGON2ID.kdf(nacl.secret.SecretBox.KEY_SIZE, passphrase.encode("utf-8"), salt,
                           opslimit=limits.opslimit, memlimit=limits.memlimit)
    return {"kdf": {"name": "argon2id", "opslimit": limits.opslimit, "memlimit": limits.memlimit,
                    "salt": salt.hex()},
            "box": nacl.secret.SecretBox(box_key).encrypt(seed).hex()}


def create(passphrase: str, limits: Limits | None = None, path: Path | None = None) -> KeyFile:
    """Create a new person key encrypted under ``passphrase`` at ``limits`` (default MODERATE; MINIMUM for a
    test home).

    Raises:
        KeyFileError: a person key already exists there.
        GitiveError: the passphrase is too short or too easy to guess, or ``limits`` is below the floor.
    """
    path = path or key_path()
    if path.exists():
        raise KeyFileError(f"a person key already exists at {path}; nothing was changed")
    floor = floor_cost(path)
    limits = limits or floor
    if below(limits, floor):
        raise GitiveError(f"argon2id cost {limits.opslimit} passes over {limits.memlimit >> 20} MiB is below "
                          f"gitive's least ({floor.opslimit} over {floor.memlimit >> 20} MiB); nothing was written")
    check_passphrase(passphrase)
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
    if keyfile.path is not None and keyfile.limits is not None and below(keyfile.limits, floor_cost(keyfile.path)):
        upgrade(keyfile, seed, passphrase or "")
    return LocalSigner(key)


def upgrade(keyfile: KeyFile, seed: bytes, passphrase: str) -> bool:
    """Re-encrypt a key file written at a lower cost at :data:`DEFAULT`, in place; true when it was replaced.

    Atomic: the new file is written beside the old one and renamed over it, under the key's lock, only if the
    file still holds exactly what was read (a passphrase changed meanwhile is never undone). A failure (a
    read-only home) keeps the old file, which still opens; the upgrade is tried again at the next unlock.
    """
    path = keyfile.path
    if path is None:
        return False
    data = {**keyfile.data, **_seal(seed, passphrase, DEFAULT)}
    try:
        with _locked(path):
            if path.read_text(encoding="utf-8", errors="replace") != keyfile.raw:
                return False
            _write(path, data, replace=True)
    except OSError:
        return False
    return True


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """The key file's lock (``person.key.lock`` beside it): upgrades and passphrase changes take turns."""
    fd = os.open(path.with_name(path.name + ".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def change_passphrase(old: str, new: str, limits: Limits | None = None, path: Path | None = None) -> KeyFile:
    """Re-encrypt the person key under ``new`` (the key itself, and so every signature, stays the same).

    The KDF cost is raised to at least ``limits`` (default: the file's own, or the floor if higher).

    Raises:
        WrongPassphrase: ``old`` does not open the key.
        GitiveError: ``new`` is too short or too easy to guess; nothing was written.
    """
    path = path or key_path()
    check_passphrase(new)
    keyfile = load(path)
    if keyfile.kind != "passphrase":
        raise GitiveError("this person key lives in ssh-agent; it has no gitive passphrase")
    signer = unlock(dataclasses.replace(keyfile, path=None), old)  # re-encrypted below anyway: no upgrade
    assert isinstance(signer, LocalSigner)
    floor = floor_cost(path)
    current = keyfile.limits or floor
    target = limits or Limits(max(current.opslimit, floor.opslimit), max(current.memlimit, floor.memlimit))
    data = {**keyfile.data, **_seal(signer._key.encode(), new, target)}
    with _locked(path):
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
