"""The merged roster's state: who was admitted and how, their invites, the refused stretches of removed
machines (gaps), person keys and the migration point.

Values only: :mod:`gitive.team.roster` fills them in as it merges, and :mod:`gitive.team.authority` judges
decisions against them.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Gap:
    """Entries of one machine that are refused: those past a removal's heads and up to a re-activation's.

    A removal written before heads existed (v1) refuses by time instead: ``at`` in ``[t_lo, t_hi)``.
    """

    machine: str
    opened_by: str  # signature of the removal entry that opened it
    remover: str  # the machine that signed that removal, and the seq of the removal in its roster log
    remover_seq: int
    lo: dict[str, int] | None  # the removal's heads; None for a v1 (time) removal
    t_lo: int
    hi: dict[str, int] | None = None  # the re-activation's heads (None while still removed)
    t_hi: int | None = None
    closed_by: str | None = None
    extra: list[str] = field(default_factory=list)  # later removals folded into this open gap

    @property
    def open(self) -> bool:
        return self.closed_by is None

    def refuses(self, log: str, seq: int, at: int) -> bool:
        if self.lo is None:  # a v1 removal: by time
            return at >= self.t_lo and (self.t_hi is None or at < self.t_hi)
        low = self.lo.get(log, 0)
        if seq <= low:
            return False
        if self.closed_by is None:
            return True
        if self.hi is None:  # closed by a re-activation written before heads existed: by its time
            return self.t_hi is not None and at < self.t_hi
        return seq <= max(low, self.hi.get(log, 0))

    def fold(self, heads: dict[str, int] | None, ts: int, sig: str) -> None:
        """Another removal while this gap is open: refuse the union (the lower head of each log)."""
        self.extra.append(sig)
        if self.lo is not None and heads is not None:
            self.lo = {log: min(seq, heads[log]) for log, seq in self.lo.items() if log in heads}
        elif heads is None:
            self.lo, self.t_lo = None, min(self.t_lo, ts)

    def close(self, heads: dict[str, int] | None, ts: int, sig: str) -> None:
        self.hi, self.t_hi, self.closed_by = heads, ts, sig

    def key(self) -> tuple[Any, ...]:
        return (self.machine, self.opened_by, self.closed_by, tuple(sorted((self.lo or {}).items())))


@dataclass
class MemberState:
    machine: str
    person: str
    name: str
    role: str
    active: bool
    emails: list[str]
    ts: int
    sig: str
    via: str
    depth: int
    sponsor: str | None = None  # the machine whose entry or invite admitted this one

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Invite:
    id: str
    key: str
    inviter: str
    reusable: bool
    expires: int
    at: int
    person: str | None = None
    role: str | None = None  # "anchor": admits only the anchor machine


@dataclass
class Roster:
    team_id: str
    founder: str
    members: dict[str, MemberState] = field(default_factory=dict)
    invites: dict[str, list[Invite]] = field(default_factory=dict)  # one id may be copied: keep every signer's
    used: dict[str, str] = field(default_factory=dict)  # one-time invite id -> machine that redeemed it
    refused: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    name: str = ""
    version: int = 1  # the team record's version: 2 = founded with roles and gestures
    history: dict[str, list[tuple[int, str, bool]]] = field(default_factory=dict)  # machine -> (ts, sig, active)
    gaps: dict[str, list[Gap]] = field(default_factory=dict)  # machine -> its refused stretches
    keys: dict[str, list[str]] = field(default_factory=dict)  # person -> registered person keys, oldest first
    migration: dict[str, dict[str, int]] | None = None  # the migration's heads (v1 teams)
    migration_sig: str | None = None
    ever_admins: set[str] = field(default_factory=set)  # persons whose grants count as an admin's
    previous: Roster | None = None  # what the previous pass decided (clock-skew and order tolerance)
    gesture_cache: dict[tuple[str, str], str | None] = field(default_factory=dict)
    admins_cache: set[str] | None = None  # authority.admin_persons, until a change touches an admin
    by_person: dict[str, list[str]] = field(default_factory=dict)  # person -> admitted machines (a machine
    # never changes its person)

    @property
    def known(self) -> dict[str, MemberState]:
        """Machines the previous pass admitted."""
        return self.previous.members if self.previous is not None else {}

    def admitted(self, machine: str) -> bool:
        return machine in self.members

    def state_of(self, machine: str) -> MemberState | None:
        found = self.members.get(machine)
        if found is None and self.previous is not None:
            return self.previous.members.get(machine)
        return found

    def view(self) -> dict[str, MemberState]:
        """Member states decided so far, over those of the previous pass."""
        return {**self.previous.members, **self.members} if self.previous is not None else self.members

    def may_sign(self, machine: str, at: int) -> bool:
        """True when ``machine`` is admitted and its state at time ``at`` was active (time-based state).

        Used where only time can be compared across machines (an invite redeemed after its maker left);
        whether an entry of ``machine`` counts is :meth:`admits`, judged by position.
        """
        states = self.history.get(machine)
        if not states:
            return machine in self.known
        i = bisect.bisect_right(states, (at, "\uffff", True)) - 1
        return i < 0 or states[i][2]

    def admits(self, machine: str, log: str, seq: int, at: int) -> bool:
        """Whether an entry of ``machine`` at ``(log, seq)`` counts: admitted, and not inside a removal gap."""
        return machine in self.members and not any(g.refuses(log, seq, at) for g in self.gaps.get(machine, ()))

    def keys_of(self, person: str) -> list[str]:
        found = self.keys.get(person, [])
        if self.previous is not None:
            found = found + [k for k in self.previous.keys.get(person, []) if k not in found]
        return found

    def effective_migration(self) -> dict[str, dict[str, int]] | None:
        if self.migration is not None:
            return self.migration
        return self.previous.migration if self.previous is not None else None

    def machines_of(self, person: str) -> list[MemberState]:
        return [self.members[m] for m in self.by_person.get(person, ())]

    def person_of(self, machine: str) -> str | None:
        state = self.members.get(machine)
        return state.person if state else None

    def persons(self) -> dict[str, list[MemberState]]:
        out: dict[str, list[MemberState]] = {}
        for state in sorted(self.members.values(), key=lambda m: (m.person, m.name, m.machine)):
            out.setdefault(state.person, []).append(state)
        return out

    def _record(self, machine: str, ts: int, sig: str, active: bool) -> None:
        bisect.insort(self.history.setdefault(machine, []), (ts, sig, active))

    def _gaps_for(self, machine: str) -> list[Gap]:
        """This pass's gaps of ``machine`` where the previous pass has no fuller view of the same one."""
        mine = {g.opened_by: g for g in self.gaps.get(machine, ())}
        if self.previous is not None:
            mine.update({g.opened_by: g for g in self.previous.gaps.get(machine, ())})
        return list(mine.values())

    def fingerprint(self) -> tuple[Any, ...]:
        """What a pass decided, to see when passes stop changing anything."""
        return (
            tuple(sorted((m.machine, m.active, m.role, m.sig) for m in self.members.values())),
            tuple(sorted((k, len(v)) for k, v in self.invites.items())),
            tuple(sorted(g.key() for gs in self.gaps.values() for g in gs)),
            tuple(sorted((p, tuple(k)) for p, k in self.keys.items())),
            self.migration_sig,
        )
