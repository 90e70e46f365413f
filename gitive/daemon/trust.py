"""The checks every inbound message passes before delivery, in order; the first that objects decides.

1. **Identity**: the machine that signed the message belongs to the person named in ``from``.
2. **Inbound policy**: ``accept``, ``hold`` or ``refuse``, a default with per-person overrides.
3. **Rate limit** per sending machine (default 30 messages in 10 minutes); over it, messages are held.
4. **Loop guard**: consecutive agent-to-agent messages between the same two sessions, either direction, with
   no person's input in between (default: the 9th is held). A person's message or prompt resets the pair; this
   is a count reset by people, not the mesh's sliding count per direction (``hive-overview.md`` part 1 §11).
5. **Screening** with the injection rules (``gitive.daemon.screening``); a match holds the message.

Counters live in SQLite tables in the connection the caller gives; time comes from ``TrustContext.now_ms``.
Nothing here reads the network or the roster itself: ``person_of`` answers who owns a machine.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gitive.core.clock import now_ms as clock_now_ms
from gitive.daemon.screening import Rule, screen, typed_by_person
from gitive.errors import GitiveError

POLICIES = ("accept", "hold", "refuse")
DEFAULT_RATE_MESSAGES = 30
DEFAULT_RATE_WINDOW_S = 600
DEFAULT_LOOP_MAX = 8
DEFAULT_LOOP_IDLE_S = 6 * 3600  # a pair quiet this long starts again from zero (0: never)

_ADDRESS = re.compile(r"^([a-z0-9][a-z0-9-]{0,63})/([^\s/]{1,128})$")

SCHEMA = (
    # One row per message counted against its sending machine's window.
    """CREATE TABLE IF NOT EXISTS trust_rate (
        machine TEXT NOT NULL, id TEXT NOT NULL, at INTEGER NOT NULL,
        PRIMARY KEY (machine, id)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS trust_rate_at ON trust_rate (machine, at)",
    # One row per pair of session addresses (a < b): agent messages since a person last spoke.
    """CREATE TABLE IF NOT EXISTS trust_loop (
        a TEXT NOT NULL, b TEXT NOT NULL, count INTEGER NOT NULL, last_id TEXT NOT NULL, at INTEGER NOT NULL,
        PRIMARY KEY (a, b)) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS trust_loop_b ON trust_loop (b)",
)


class TrustConfigError(GitiveError):
    """The inbound part of the configuration is not usable; the message says which key and why."""


class Verdict(NamedTuple):
    action: str  # accept | hold | refuse
    reason: str
    rule: str | None = None  # the screening rule that held the message
    check: str = ""  # message | identity | policy | rate | loop | screen ("" when accepted outright)


ACCEPT = Verdict("accept", "accepted")


@dataclass(frozen=True)
class Limits:
    rate_messages: int = DEFAULT_RATE_MESSAGES
    rate_window_ms: int = DEFAULT_RATE_WINDOW_S * 1000
    loop_max: int = DEFAULT_LOOP_MAX
    loop_idle_ms: int = DEFAULT_LOOP_IDLE_S * 1000


@dataclass(frozen=True)
class Policy:
    default: str = "accept"
    people: Mapping[str, str] = field(default_factory=dict)

    def for_person(self, person: str) -> str:
        return self.people.get(person, self.default)


@dataclass
class TrustContext:
    """What ``admit`` needs: who owns a machine, the counters' database, the rules, the config, a clock.

    ``config`` is the machine's configuration as a dict::

        {"inbound": {"default": "accept", "people": {"mallory": "refuse", "bob": "hold"}},
         "rate_limit": {"messages": 30, "window_seconds": 600},
         "loop_guard": {"max_consecutive": 8, "idle_reset_seconds": 21600}}

    Raises:
        TrustConfigError: (on construction) a policy or limit in ``config`` is not usable.
    """

    person_of: Callable[[str], str | None]
    db: sqlite3.Connection
    rules: Sequence[Rule] = ()
    config: Mapping[str, Any] = field(default_factory=dict)
    now_ms: Callable[[], int] = clock_now_ms
    policy: Policy = field(init=False)
    limits: Limits = field(init=False)

    def __post_init__(self) -> None:
        self.policy = parse_policy(self.config)
        self.limits = parse_limits(self.config)
        ensure_schema(self.db)


# --- configuration -------------------------------------------------------------------------------------


def parse_policy(config: Mapping[str, Any]) -> Policy:
    """The inbound policy in ``config["inbound"]``; absent means accept everyone."""
    inbound = _section(config, "inbound")
    default = inbound.get("default", "accept")
    if default not in POLICIES:
        raise TrustConfigError(f"inbound.default: {default!r} is not one of {', '.join(POLICIES)}")
    people = inbound.get("people", {})
    if not isinstance(people, Mapping):
        raise TrustConfigError("inbound.people must map person names to accept, hold or refuse")
    for person, action in people.items():
        if action not in POLICIES:
            raise TrustConfigError(f"inbound.people.{person}: {action!r} is not one of {', '.join(POLICIES)}")
    return Policy(default=default, people=dict(people))


def parse_limits(config: Mapping[str, Any]) -> Limits:
    """Rate limit and loop guard settings, defaults filled in."""
    rate = _section(config, "rate_limit")
    loop = _section(config, "loop_guard")
    return Limits(
        rate_messages=_count(rate, "rate_limit.messages", "messages", DEFAULT_RATE_MESSAGES, minimum=1),
        rate_window_ms=1000 * _count(rate, "rate_limit.window_seconds", "window_seconds",
                                     DEFAULT_RATE_WINDOW_S, minimum=1),
        loop_max=_count(loop, "loop_guard.max_consecutive", "max_consecutive", DEFAULT_LOOP_MAX, minimum=1),
        loop_idle_ms=1000 * _count(loop, "loop_guard.idle_reset_seconds", "idle_reset_seconds",
                                   DEFAULT_LOOP_IDLE_S, minimum=0),
    )


def _section(config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    section = config.get(name, {})
    if not isinstance(section, Mapping):
        raise TrustConfigError(f"{name} must be a table of settings, not {type(section).__name__}")
    return section


def _count(section: Mapping[str, Any], label: str, key: str, default: int, minimum: int) -> int:
    value = section.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise TrustConfigError(f"{label}: {value!r} must be a whole number of at least {minimum}")
    return value


# --- storage -------------------------------------------------------------------------------------------


def ensure_schema(db: sqlite3.Connection) -> None:
    """Create the counter tables if they are missing (idempotent)."""
    for statement in SCHEMA:
        db.execute(statement)


@contextmanager
def _savepoint(db: sqlite3.Connection) -> Iterator[None]:
    # Nested inside the caller's transaction when there is one; its own transaction, committed, otherwise.
    db.execute("SAVEPOINT gitive_trust")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK TO gitive_trust")
        db.execute("RELEASE gitive_trust")
        raise
    db.execute("RELEASE gitive_trust")


# --- the checks ----------------------------------------------------------------------------------------


def admit(msg: Mapping[str, Any], ctx: TrustContext) -> Verdict:
    """Decide whether an inbound message is delivered, held for the recipient's person, or refused.

    ``msg`` holds ``id``, ``from`` and ``to`` (addresses ``person/session``; ``person/terminal`` for a person
    typing), ``body``, ``machine`` (the verified signer) and optionally ``from_person``. Counters for the rate
    limit and loop guard are written in one savepoint on ``ctx.db``. Deterministic given ``ctx.now_ms``.

    Returns:
        The first non-accept verdict of identity, policy, rate limit, loop guard and screening, else accept.
    """
    malformed = _malformed(msg)
    if malformed:
        return Verdict("refuse", malformed, None, "message")
    with _savepoint(ctx.db):
        for check in (_identity, _policy, _rate, _loop, _screen):
            verdict = check(msg, ctx)
            if verdict is not None:
                return verdict
    return ACCEPT


def _malformed(msg: Mapping[str, Any]) -> str | None:
    for key in ("from", "to"):
        value = msg.get(key)
        if not isinstance(value, str) or not _ADDRESS.match(value):
            return f"{key} address {value!r} is not person/session"
    if not isinstance(msg.get("id"), str) or not msg["id"]:
        return "message has no id"
    if not isinstance(msg.get("machine"), str) or not msg["machine"]:
        return "message has no signing machine"
    return None


def _person(address: str) -> str:
    return address.split("/", 1)[0]


def _identity(msg: Mapping[str, Any], ctx: TrustContext) -> Verdict | None:
    machine, claimed = msg["machine"], _person(msg["from"])
    owner = ctx.person_of(machine)
    if owner is None:
        return Verdict("refuse", f"machine {machine[:12]} is not on the roster", None, "identity")
    if owner != claimed:
        return Verdict("refuse", f"machine {machine[:12]} belongs to {owner}, but the message says it is from "
                       f"{claimed}", None, "identity")
    return None


def _policy(msg: Mapping[str, Any], ctx: TrustContext) -> Verdict | None:
    person = _person(msg["from"])
    action = ctx.policy.for_person(person)
    if action == "accept":
        return None
    verb = {"hold": "holds", "refuse": "refuses"}[action]
    default = "" if person in ctx.policy.people else " (the default)"
    return Verdict(action, f"inbound policy {verb} messages from {person}{default}", None, "policy")


def _rate(msg: Mapping[str, Any], ctx: TrustContext) -> Verdict | None:
    db, machine, limits = ctx.db, msg["machine"], ctx.limits
    now = ctx.now_ms()
    db.execute("DELETE FROM trust_rate WHERE machine = ? AND at <= ?", (machine, now - limits.rate_window_ms))
    if db.execute("SELECT 1 FROM trust_rate WHERE machine = ? AND id = ?", (machine, msg["id"])).fetchone():
        return None  # already counted (the same message seen again)
    (count,) = db.execute("SELECT count(*) FROM trust_rate WHERE machine = ?", (machine,)).fetchone()
    if count >= limits.rate_messages:
        return Verdict("hold", f"rate limit: {count} messages from machine {machine[:12]} in the last "
                       f"{_duration(limits.rate_window_ms)} (limit {limits.rate_messages})", None, "rate")
    db.execute("INSERT INTO trust_rate (machine, id, at) VALUES (?, ?, ?)", (machine, msg["id"], now))
    return None


def _loop(msg: Mapping[str, Any], ctx: TrustContext) -> Verdict | None:
    sender, recipient = msg["from"], msg["to"]
    if typed_by_person(msg):
        _reset(ctx.db, sender, recipient)
        return None
    a, b = sorted((sender, recipient))
    now, limits = ctx.now_ms(), ctx.limits
    row = ctx.db.execute("SELECT count, last_id, at FROM trust_loop WHERE a = ? AND b = ?", (a, b)).fetchone()
    count, last_id, last_at = row if row else (0, "", now)
    if limits.loop_idle_ms and now - last_at >= limits.loop_idle_ms:
        count = 0
    if last_id != msg["id"]:  # the same message seen again does not count twice
        count += 1
        ctx.db.execute(
            "INSERT INTO trust_loop (a, b, count, last_id, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (a, b) "
            "DO UPDATE SET count = excluded.count, last_id = excluded.last_id, at = excluded.at",
            (a, b, count, msg["id"], now))
    if count > limits.loop_max:
        return Verdict("hold", f"loop guard: {count} agent messages in a row between {a} and {b} with no "
                       f"person's input (limit {limits.loop_max}); check with your user before continuing",
                       None, "loop")
    return None


def _screen(msg: Mapping[str, Any], ctx: TrustContext) -> Verdict | None:
    hits = screen(msg, ctx.rules)
    held = [hit for hit in hits if hit.severity == "hold"]
    if held:
        titles = "; ".join(hit.title for hit in held)
        return Verdict("hold", f"screening ({', '.join(h.rule for h in held)}): {titles}", held[0].rule, "screen")
    if hits:
        return Verdict("accept", f"accepted; logged by {', '.join(h.rule for h in hits)}", hits[0].rule, "screen")
    return None


def _duration(ms: int) -> str:
    seconds = ms // 1000
    if seconds % 60:
        return f"{seconds} s"
    minutes = seconds // 60
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


# --- people in the loop --------------------------------------------------------------------------------


def note_person_input(db: sqlite3.Connection, address: str) -> int:
    """A person spoke to the session at ``address`` (typed a prompt, released a held message): reset its pairs.

    Returns:
        How many session pairs were reset.
    """
    ensure_schema(db)
    with _savepoint(db):
        return _reset(db, address)


def _reset(db: sqlite3.Connection, *addresses: str) -> int:
    marks = ", ".join("?" * len(addresses))
    cursor = db.execute(f"DELETE FROM trust_loop WHERE a IN ({marks}) OR b IN ({marks})", addresses * 2)
    return cursor.rowcount
