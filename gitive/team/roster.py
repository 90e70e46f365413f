"""Merging the roster from every machine's signed roster log.

Rules (from the mesh's roster, ``hive-overview.md`` part 1 §4):
- admission chains to the founder: the founder's self-signed entry, then entries signed by an admitted
  machine, or a joiner's own entry proving an invite made by an admitted machine; admissions are never
  removed, so who may sign never depends on the order entries arrive in;
- member state merges last-writer-wins by ``(ts, sig)``;
- a machine may sign its own departure, never its own return; a removed machine signs nothing after its
  removal (and its invites die with it);
- a machine joining as a person who already has machines needs an invite from, or admission by, one of that
  person's machines;
- entries stamped more than a day in the future are refused.

Entries are applied in ``(ts, sig)`` order, so whether a signer was active is judged at the time it signed.
Passes repeat while an entry that waited for its signer's admission (clocks disagree) can now be applied.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from gitive.constants import MAX_SKEW_MS
from gitive.team import invites


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
    history: dict[str, list[tuple[int, str, bool]]] = field(default_factory=dict)  # machine -> (ts, sig, active)
    known: set[str] = field(default_factory=set)  # admitted in the previous pass (clock-skew tolerance)
    known_invites: dict[str, list[Invite]] = field(default_factory=dict)  # accepted in the previous pass

    def admitted(self, machine: str) -> bool:
        return machine in self.members

    def may_sign(self, machine: str, at: int) -> bool:
        """True when ``machine`` is admitted and was not removed as of time ``at``.

        An entry stamped before the signer's own admission counts (clocks disagree; admissions never depend
        on the order entries arrive in); one stamped after its removal does not.
        """
        states = self.history.get(machine)
        if not states:
            return machine in self.known
        i = bisect.bisect_right(states, (at, "\uffff", True)) - 1
        return i < 0 or states[i][2]

    def machines_of(self, person: str) -> list[MemberState]:
        return [m for m in self.members.values() if m.person == person]

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


def _order(env: dict[str, Any]) -> tuple[int, str]:
    record = env["body"]["record"]
    return (record.get("ts", env["body"]["at"]), env["sig"])


def _sponsored_by(roster: Roster, machine: str, target: str) -> bool:
    """Whether ``target`` is on ``machine``'s admission chain (then ``machine`` cannot block it)."""
    seen = set()
    while machine and machine not in seen:
        if machine == target:
            return True
        seen.add(machine)
        state = roster.members.get(machine)
        machine = state.sponsor if state else None
    return False


def _person_taken(roster: Roster, person: str, target: str, at: int) -> bool:
    return any(m.person == person and m.machine != target and roster.may_sign(m.machine, at)
               and not _sponsored_by(roster, m.machine, target) for m in roster.members.values())


def _redeem(roster: Roster, env: dict[str, Any]) -> tuple[Invite | None, str]:
    """The invite a joiner's own entry redeems, or why none does."""
    record = env["body"]["record"]
    admission = record.get("admission") or {}
    ts, proof = record["ts"], str(admission.get("proof", ""))
    invite_id = str(admission.get("invite", ""))
    candidates = roster.invites.get(invite_id) or roster.known_invites.get(invite_id, [])
    if not candidates:
        return None, "redeems an invite this roster does not hold"
    valid = [i for i in candidates if invites.proof_ok(roster.team_id, i.id, i.key, record["machine"],
                                                       record["person"], proof)]
    if not valid:
        return None, "invite proof does not verify"
    invite = valid[0]
    if not invite.at - MAX_SKEW_MS <= ts <= invite.expires:  # a joiner's clock may run a little behind
        return None, "invite had expired (or was redeemed before it existed)"
    if invite.person and invite.person != record["person"]:
        return None, f"invite is for person {invite.person!r}"
    if (invite.role == ANCHOR) != (record["role"] == ANCHOR):
        return None, "an anchor joins only with an anchor invite, and an anchor invite admits only an anchor"
    if not roster.may_sign(invite.inviter, ts):
        return None, "the inviting machine is not (or no longer) an active member"
    if not invite.reusable and roster.used.get(invite.id, record["machine"]) != record["machine"]:
        return None, "one-time invite was already used"
    return invite, ""


ANCHOR = "anchor"  # the reserved person name, and the role that goes with it (gitive/team/anchors.py)


def _role(roster: Roster, machine: str) -> str | None:
    state = roster.members.get(machine)
    return state.role if state else None


def _anchor_refusal(roster: Roster, env: dict[str, Any], via: str | None) -> str | None:
    """The anchor's side of the roster rules: the reserved name goes with the anchor role, an anchor is admitted
    only through an anchor invite, and nothing an anchor signs changes the roster but its own departure."""
    record, signer = env["body"]["record"], env["by"]
    if (record["person"] == ANCHOR) != (record["role"] == ANCHOR):
        return f"the person name {ANCHOR!r} is reserved for the anchor role"
    if _role(roster, signer) == ANCHOR and not (signer == record["machine"] and not record["active"]):
        return "an anchor cannot change the roster"
    admin = roster.person_of(roster.founder)
    if record["role"] == ANCHOR and via != "invite" and record["machine"] not in roster.members \
            and (signer == record["machine"] or roster.person_of(signer) != admin):
        return "only an admin admits an anchor (gitive invite --anchor)"
    return None


def _depth(roster: Roster, machine: str) -> int:
    state = roster.members.get(machine)
    return state.depth if state else 1  # admitted later in time (clock skew): depth is approximate


def _admit(roster: Roster, env: dict[str, Any]) -> str | None:
    """Admit the entry's machine if its admission chains to the founder; return a refusal reason or None."""
    record, signer = env["body"]["record"], env["by"]
    target, ts = record["machine"], record["ts"]
    via = (record.get("admission") or {}).get("via")
    refusal = _anchor_refusal(roster, env, via)
    if refusal:
        return refusal
    if target == roster.founder and signer == target and via == "founder":
        depth, sponsor = 0, None
    elif via == "invite" and signer == target:
        invite, reason = _redeem(roster, env)
        if invite is None:
            return reason
        sponsor = invite.inviter
        if not invite.reusable:
            roster.used[invite.id] = target
        depth = _depth(roster, sponsor) + 1
    elif not record["active"]:
        return "not admitted: a departure entry cannot admit a machine"
    elif signer != target and roster.may_sign(signer, ts):
        sponsor, depth = signer, _depth(roster, signer) + 1
    else:
        return "not admitted: no admission chains to the founder"
    if sponsor and record["person"] != ANCHOR and _person_taken(roster, record["person"], target, ts) \
            and roster.person_of(sponsor) != record["person"]:
        return f"person {record['person']!r} exists; only their own machines may add machines as them"
    roster.members[target] = MemberState(
        target, record["person"], record["name"], record["role"], record["active"], list(record["emails"]),
        ts, env["sig"], via or "member", depth, sponsor,
    )
    roster._record(target, ts, env["sig"], record["active"])
    return None


def _apply(roster: Roster, env: dict[str, Any]) -> str | None:
    """A state change of an admitted machine, judged at the time it was signed; LWW by (ts, sig)."""
    record, signer = env["body"]["record"], env["by"]
    target, ts = record["machine"], record["ts"]
    state = roster.members[target]
    if env["sig"] == state.sig:
        return None
    refusal = _anchor_refusal(roster, env, None)
    if refusal:
        return refusal
    if (record["role"] == ANCHOR) != (state.role == ANCHOR):
        return "a machine's anchor role never changes: remove the machine and invite it again"
    if signer == target and record["active"] and not roster.may_sign(target, ts):
        return "a machine may sign its own departure but never its own return"
    if not roster.may_sign(signer, ts) and not (signer == target and not record["active"]):
        return "signer was not an active member when it signed"
    if record["person"] != state.person:
        return "a machine cannot change the person it belongs to"
    roster._record(target, ts, env["sig"], record["active"])
    if (ts, env["sig"]) > (state.ts, state.sig):
        state.name, state.role, state.active = record["name"], record["role"], record["active"]
        state.emails, state.ts, state.sig = list(record["emails"]), ts, env["sig"]
    return None


def _take_invite(roster: Roster, env: dict[str, Any]) -> str | None:
    record = env["body"]["record"]
    if not roster.may_sign(env["by"], env["body"]["at"]):
        return "signer was not an active member when it signed"
    if _role(roster, env["by"]) == ANCHOR:
        return "an anchor cannot invite"
    if record.get("role") == ANCHOR and (roster.person_of(env["by"]) != roster.person_of(roster.founder)
                                         or record.get("person") != ANCHOR):
        return "only an admin invites an anchor, and only as the person 'anchor'"
    found = roster.invites.setdefault(record["id"], [])
    if not any(i.key == record["key"] and i.inviter == env["by"] for i in found):
        found.append(Invite(record["id"], record["key"], env["by"], record["reusable"], record["expires"],
                            env["body"]["at"], record.get("person"), record.get("role")))
    return None


def _step(roster: Roster, env: dict[str, Any]) -> str | None:
    kind = env["body"]["record"]["type"]
    if kind == "invite":
        return _take_invite(roster, env)
    target = env["body"]["record"]["machine"]
    return _apply(roster, env) if roster.admitted(target) else _admit(roster, env)


def _pass(team_id: str, founder: str, entries: list[dict[str, Any]], previous: Roster | None) -> Roster:
    """One chronological pass, knowing the machines and invites the previous pass accepted."""
    roster = Roster(team_id, founder)
    if previous is not None:
        roster.known, roster.known_invites = set(previous.members), previous.invites
    for env in entries:
        reason = _step(roster, env)
        if reason is not None:
            roster.refused.append((env, reason))
    return roster


def _same(a: Roster, b: Roster) -> bool:
    return (set(a.members) == set(b.members)
            and {k: len(v) for k, v in a.invites.items()} == {k: len(v) for k, v in b.invites.items()})


def merge(team_id: str, founder: str, entries: list[dict[str, Any]], now: int) -> Roster:
    """Build the roster from signed roster-log envelopes whose signatures were already verified.

    Each pass applies every entry in ``(ts, sig)`` order from scratch; a signer admitted by the previous pass
    counts even for entries stamped before its own admission (clocks disagree). Passes repeat until the set
    of admitted machines stops changing, so the result does not depend on the order entries arrived in.
    """
    future, ordered = [], []
    for env in entries:
        record = env["body"]["record"]
        if max(env["body"]["at"], record.get("ts", 0)) > now + MAX_SKEW_MS:
            future.append((env, "stamped more than a day in the future"))
        elif record["type"] in ("member", "invite"):
            ordered.append(env)
    ordered.sort(key=_order)
    previous: Roster | None = None
    for _ in range(16):
        roster = _pass(team_id, founder, ordered, previous)
        if previous is not None and _same(roster, previous):
            break
        previous = roster
    roster.refused = future + roster.refused
    teams = sorted((e for e in entries if e["body"]["record"]["type"] == "team" and e["by"] == founder),
                   key=lambda e: (e["body"]["at"], e["sig"]))
    if teams:
        roster.name = teams[-1]["body"]["record"]["name"]
    return roster
