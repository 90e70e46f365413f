"""Each person's gate preferences: quiet hours in their time zone, the daily budget, alarms, mutes, channels.

A person's own signed ``prefs`` record, written at a terminal (``gitive prefs set``) with their gesture
(:mod:`gitive.anchor.gate.gestures`); the newest by ``ts`` from one of that person's own machines counts. Without
one, :data:`DEFAULT` applies. Times of day are ``HH:MM`` in the person's time zone; everything in the record is
an integer, a string, a boolean or a list (no floats).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gitive.errors import GitiveError

CHANNELS = ("session", "desktop", "inbox")
DEFAULT_BUDGET = 6
DEFAULT_SHARE = 334  # per-mille: one source may take a third of the day's budget (2 of 6)
MAX_BUDGET = 100
MAX_MUTES = 64
_HHMM = re.compile(r"([01][0-9]|2[0-3]):[0-5][0-9]")


class PrefsError(GitiveError):
    pass


@dataclass(frozen=True)
class Prefs:
    person: str
    budget: int = DEFAULT_BUDGET
    alarms: bool = False
    channel: tuple[str, ...] = ("session", "inbox")
    alarm_channel: tuple[str, ...] = ("session", "desktop", "inbox")
    muted_sources: tuple[str, ...] = ()
    muted_kinds: tuple[str, ...] = ()
    tz: str = "UTC"
    digest_at: str = "08:00"
    share: int = DEFAULT_SHARE
    quiet: tuple[str, str] | None = None  # (start, end) HH:MM, end may be before start (over midnight)
    ts: int = 0  # 0: the defaults, no record
    author: str | None = None
    _zone: Any = field(default=None, compare=False, repr=False)

    @property
    def zone(self) -> ZoneInfo:
        return self._zone or zone(self.tz)

    def record(self, ts: int) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "prefs", "person": self.person, "ts": ts, "budget": self.budget,
                               "alarms": self.alarms, "channel": list(self.channel),
                               "alarm_channel": list(self.alarm_channel), "muted_sources": list(self.muted_sources),
                               "muted_kinds": list(self.muted_kinds), "tz": self.tz, "digest_at": self.digest_at,
                               "share": self.share, "actor": "person"}
        if self.quiet:
            out["quiet"] = {"start": self.quiet[0], "end": self.quiet[1]}
        return out

    def source_share(self) -> int:
        """Attention items one source may spend a day: its per-mille share of the budget, at least one."""
        return max(1, self.budget * self.share // 1000) if self.budget else 0

    def allows(self, source_key: str, kind: str) -> str | None:
        """The mute that silences an item of ``kind`` from ``source_key``, or None when none does.

        A mute names a source exactly (``session:alice/api-claude``), a source kind (``session``, ``watcher``),
        or an item kind, exactly or by its group (``dangling`` mutes ``dangling.branch``)."""
        for mute in self.muted_sources:
            if source_key == mute or source_key.split(":", 1)[0] == mute:
                return f"muted source {mute}"
        for mute in self.muted_kinds:
            if kind == mute or kind.startswith(mute + "."):
                return f"muted kind {mute}"
        return None


@functools.lru_cache(maxsize=256)
def zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise PrefsError(f"unknown time zone {name!r}: use an IANA name such as Europe/Berlin or UTC") from None


def _minutes(text: str) -> int:
    return int(text[:2]) * 60 + int(text[3:])


def _local(prefs: Prefs, now: int) -> datetime:
    return datetime.fromtimestamp(now / 1000, prefs.zone)


def quiet_end(prefs: Prefs, now: int) -> int | None:
    """When the quiet hours ``now`` falls in end (ms), or None when ``now`` is not in quiet hours."""
    if not prefs.quiet:
        return None
    start, end = (_minutes(t) for t in prefs.quiet)
    if start == end:
        return None
    local = _local(prefs, now)
    minute = local.hour * 60 + local.minute
    inside = start <= minute < end if start < end else (minute >= start or minute < end)
    if not inside:
        return None
    day = local.replace(hour=0, minute=0, second=0, microsecond=0)
    if start > end and minute >= start:
        day += timedelta(days=1)
    ends = (day + timedelta(minutes=end)).replace(tzinfo=prefs.zone)
    return int(ends.timestamp() * 1000)


def day_of(prefs: Prefs, now: int) -> str:
    """The person's local date (the budget's day begins at their midnight)."""
    return _day(prefs.tz, now // 60_000)


@functools.lru_cache(maxsize=4096)
def _day(tz: str, minute: int) -> str:  # every zone's offset today is whole minutes: one answer per minute
    return datetime.fromtimestamp(minute * 60, zone(tz)).date().isoformat()


def digest_time(prefs: Prefs, now: int) -> int:
    """The most recent digest time at or before ``now`` (ms): today's ``digest_at``, or yesterday's."""
    local = _local(prefs, now)
    at = local.replace(hour=int(prefs.digest_at[:2]), minute=int(prefs.digest_at[3:]), second=0, microsecond=0)
    if at > local:
        at -= timedelta(days=1)
    return int(at.timestamp() * 1000)


def from_record(record: dict[str, Any], author: str | None = None) -> Prefs | None:
    """The preferences a stored record says, or None when it is malformed (a reader never crashes on one)."""
    try:
        quiet = record.get("quiet")
        prefs = Prefs(record["person"], record["budget"], record["alarms"], tuple(record["channel"]),
                      tuple(record["alarm_channel"]), tuple(record["muted_sources"]), tuple(record["muted_kinds"]),
                      record["tz"], record["digest_at"], record["share"],
                      (quiet["start"], quiet["end"]) if quiet else None, record["ts"], author)
        check(prefs)
        return replace(prefs, _zone=zone(prefs.tz))
    except (KeyError, TypeError, PrefsError):
        return None


def check(prefs: Prefs) -> None:
    """Raises: PrefsError naming the first value that is wrong."""
    if not 0 <= prefs.budget <= MAX_BUDGET:
        raise PrefsError(f"budget must be 0 to {MAX_BUDGET} attention items a day")
    if not 1 <= prefs.share <= 1000:
        raise PrefsError("share must be 1 to 1000 (per-mille of the budget one source may take)")
    for name, chans in (("channel", prefs.channel), ("alarm channel", prefs.alarm_channel)):
        bad = [c for c in chans if c not in CHANNELS]
        if bad or not chans:
            raise PrefsError(f"{name} must be some of {', '.join(CHANNELS)} (got {', '.join(bad) or 'none'})")
    for name, values in (("muted sources", prefs.muted_sources), ("muted kinds", prefs.muted_kinds)):
        if len(values) > MAX_MUTES or any(not isinstance(v, str) or not v or len(v) > 200 for v in values):
            raise PrefsError(f"{name}: at most {MAX_MUTES}, each 1-200 characters")
    for text in (prefs.digest_at, *(prefs.quiet or ())):
        if not isinstance(text, str) or not _HHMM.fullmatch(text):
            raise PrefsError(f"time of day {text!r} must be HH:MM (24 h), e.g. 22:00")
    zone(prefs.tz)


def parse_quiet(text: str) -> tuple[str, str] | None:
    """``22:00-07:00`` → ``("22:00", "07:00")``; ``off`` → None.

    Raises:
        PrefsError: not two HH:MM times joined by a dash.
    """
    if text.strip().lower() in ("off", "none", ""):
        return None
    parts = [p.strip() for p in text.split("-")]
    if len(parts) != 2 or not all(_HHMM.fullmatch(p) for p in parts) or parts[0] == parts[1]:
        raise PrefsError(f"quiet hours {text!r}: use START-END in 24 h time, e.g. 22:00-07:00 (or off)")
    return parts[0], parts[1]


def current(conn: sqlite3.Connection, person: str, team_id: str | None = None) -> Prefs:
    """The person's preferences in force: their newest counting ``prefs`` record, else the defaults."""
    return all_current(conn, team_id).get(person) or Prefs(person)


def all_current(conn: sqlite3.Connection, team_id: str | None = None) -> dict[str, Prefs]:
    """Every person's newest counting preferences (see :func:`gitive.anchor.gate.gestures.counts`)."""
    from gitive.anchor.gate import gestures

    out: dict[str, Prefs] = {}
    for author, person, record in gestures.person_records(conn, "prefs", team_id):
        if record.get("person") != person:
            continue
        found = from_record(record, author)
        if found and (person not in out or found.ts > out[person].ts):
            out[person] = found
    return out
