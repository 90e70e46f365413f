"""The gate: the one place where a candidate item becomes an interruption, in exactly the reference order.

```
floor → preference → duplicate → urgency → alarm (if the person enabled alarms) → quiet-hours hold
      → attention within the daily budget and the source's share, shown at the next breakpoint → digest
```

Consequences kept from the reference (anchor-spec C-2): a floor is delivered before preferences, duplicates,
quiet hours and without the budget, even in shadow mode; an alarm goes through quiet hours only when the person
enabled alarms, and otherwise falls through (held in quiet hours, else the digest: the budget branch is for
``attention`` only); ``info`` never interrupts; duplicates are silenced even at night. Every call returns
exactly one :class:`Decision`, and each decision is one ledger entry (:mod:`gitive.anchor.gate.ledger`).

:func:`decide` reads only what :class:`Context` gives it, so a table-driven test runs every branch without git.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gitive.anchor.gate import prefs as prefs_mod
from gitive.anchor.gate.floors import floor
from gitive.anchor.gate.items import Candidate
from gitive.anchor.gate.prefs import Prefs
from gitive.anchor.gate.urgency import Facts, urgency

MAX_HOLD_MS = {"attention": 10 * 60_000}  # bounded deferral: shown at the next breakpoint, or by then
DUPLICATE_WINDOW_MS = 86_400_000
DELIVERING = ("floor", "alarm", "attention", "note")


@dataclass
class Decision:
    item: Candidate
    person: str
    branch: str
    rule: str
    shadow: bool
    urgency: str | None = None
    because: list[dict[str, str]] = field(default_factory=list)
    until: int | None = None
    prior: str | None = None
    channel: tuple[str, ...] = ()
    budget: dict[str, int] | None = None

    @property
    def delivered(self) -> bool:
        """Whether this decision sends the item: a floor always, the rest only when the person's gate is live."""
        return self.branch == "floor" or (self.branch in DELIVERING and not self.shadow)

    def record(self) -> dict[str, Any]:
        """The ledger record: metadata only (ids, the branch, the rule, the urgency's records; no item text)."""
        out: dict[str, Any] = {"type": "ledger", "item": self.item.id, "person": self.person, "branch": self.branch,
                               "rule": self.rule[:300], "fingerprint": self.item.fingerprint,
                               "source": self.item.source_key[:200], "shadow": self.shadow}
        if self.urgency:
            out["urgency"] = self.urgency
        if self.because:
            out["because"] = self.because[:16]
        for name in ("until", "prior", "budget"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if self.channel:
            out["channel"] = list(self.channel)
        return out


@dataclass
class Context:
    """What one tick's gate reads: the time, preferences, who is live, checkable facts, and the ledger so far.

    ``seen(item, person)`` returns the prior item id with the same fingerprint (or the anchor that already
    decided this very item); ``used(person, day, source)`` returns (attention items today, from this source).
    """

    now: int
    prefs: dict[str, Prefs]
    live: dict[str, bool]
    facts: Facts
    seen: Callable[[Candidate, str], tuple[str, str] | None]
    used: Callable[[str, str, str], tuple[int, int]]

    def prefs_for(self, person: str) -> Prefs:
        return self.prefs.get(person) or Prefs(person)


def _channel(chosen: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*chosen, "inbox")))  # the inbox always lists what was delivered


def decide(c: Candidate, person: str, ctx: Context) -> Decision:
    """The gate's decision for ``c`` (for ``person``, its owner), in the reference order."""
    p = ctx.prefs_for(person)
    shadow = not ctx.live.get(person, False)
    rule = floor(c, ctx.facts.watch.get(c.id))
    if rule:
        return Decision(c, person, "floor", rule, shadow, channel=_channel(p.alarm_channel))
    muted = p.allows(c.source_key, c.kind)
    if muted:
        return Decision(c, person, "preference", f"preference: {muted}", shadow)
    prior = ctx.seen(c, person)
    if prior:
        return Decision(c, person, "duplicate", prior[1], shadow, prior=prior[0])
    if c.kind == "digest":
        return Decision(c, person, "note", f"your digest, at {p.digest_at} {p.tz}", shadow,
                        channel=_channel(p.channel))
    level, because = urgency(c.id, c.about, ctx.facts, ctx.now)
    if level == "alarm" and p.alarms:
        return Decision(c, person, "alarm", "alarm: " + _signals(because), shadow, level, because,
                        channel=_channel(p.alarm_channel))
    end = prefs_mod.quiet_end(p, ctx.now)
    if end is not None:
        return Decision(c, person, "hold", f"quiet hours {p.quiet[0]}-{p.quiet[1]} {p.tz}" if p.quiet else "quiet",
                        shadow, level, because, until=end)
    if level == "attention":
        day = prefs_mod.day_of(p, ctx.now)
        used, from_source = ctx.used(person, day, c.source_key)
        share = p.source_share()
        if used < p.budget and from_source < share:
            budget = {"used": used + 1, "of": p.budget, "source_used": from_source + 1, "source_of": share}
            return Decision(c, person, "attention", "attention: " + _signals(because), shadow, level, because,
                            until=ctx.now + MAX_HOLD_MS["attention"], channel=_channel(p.channel), budget=budget)
        spent = (f"the day's budget is spent ({used} of {p.budget})" if used >= p.budget
                 else f"its source's share is spent ({from_source} of {share} from {c.source_key})")
        return Decision(c, person, "digest", f"attention, but {spent}", shadow, level, because)
    why = "alarm, but alarms are off" if level == "alarm" else "info: nothing checkable makes it urgent"
    return Decision(c, person, "digest", why, shadow, level, because)


def _signals(because: list[dict[str, str]]) -> str:
    return ", ".join(dict.fromkeys(b["rule"] for b in because)) or "checked records"
