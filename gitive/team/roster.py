"""Merging the roster from every machine's signed roster log.

Rules (from the mesh's roster, ``hive-overview.md`` part 1 §4):
- admission chains to the founder: the founder's self-signed entry, then entries signed by an admitted
  machine, or a joiner's own entry proving an invite made by an admitted machine; admissions are never
  removed, so who may sign never depends on the order entries arrive in;
- member state merges last-writer-wins by ``(ts, sig)``;
- a machine may sign its own departure, never its own return;
- a machine joining as a person who already has machines needs an invite from one of that person's machines;
- entries stamped more than a day in the future are refused.
"""

from __future__ import annotations

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


@dataclass
class Roster:
    team_id: str
    founder: str
    members: dict[str, MemberState] = field(default_factory=dict)
    invites: dict[str, Invite] = field(default_factory=dict)
    used: dict[str, str] = field(default_factory=dict)  # one-time invite id -> machine that redeemed it
    refused: list[tuple[dict[str, Any], str]] = field(default_factory=list)
    name: str = ""

    def admitted(self, machine: str) -> bool:
        return machine in self.members

    def may_sign(self, machine: str, at: int) -> bool:
        """True when ``machine`` was admitted and had not been removed by time ``at``."""
        state = self.members.get(machine)
        return state is not None and (state.active or at < state.ts)

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


def _order(env: dict[str, Any]) -> tuple[int, str]:
    record = env["body"]["record"]
    return (record.get("ts", env["body"]["at"]), env["sig"])


def _collect_invites(roster: Roster, entries: list[dict[str, Any]]) -> None:
    for env in sorted(entries, key=_order):
        record = env["body"]["record"]
        if record["type"] == "invite" and record["id"] not in roster.invites:
            roster.invites[record["id"]] = Invite(
                record["id"], record["key"], env["by"], record["reusable"], record["expires"],
                env["body"]["at"], record.get("person"),
            )


def _redemption_ok(roster: Roster, env: dict[str, Any]) -> str | None:
    """Why an invite redemption fails on its own terms (None when its proof and dates hold)."""
    record, admission = env["body"]["record"], env["body"]["record"].get("admission") or {}
    invite = roster.invites.get(admission.get("invite", ""))
    if invite is None:
        return "redeems an invite this roster does not hold"
    if not invites.proof_ok(roster.team_id, invite.id, invite.key, record["machine"], record["person"],
                            str(admission.get("proof", ""))):
        return "invite proof does not verify"
    if record["ts"] > invite.expires:
        return "invite had expired"
    if invite.person and invite.person != record["person"]:
        return f"invite is for person {invite.person!r}"
    return None


def _try_admit(roster: Roster, env: dict[str, Any]) -> str | None:
    """Admit the entry's machine if its admission chains to the founder; return a refusal reason or None."""
    record, signer = env["body"]["record"], env["by"]
    target, via = record["machine"], (record.get("admission") or {}).get("via")
    if target == roster.founder and signer == target and via == "founder":
        depth = 0
    elif via == "invite" and signer == target:
        reason = _redemption_ok(roster, env)
        if reason:
            return reason
        invite = roster.invites[record["admission"]["invite"]]
        if not roster.may_sign(invite.inviter, record["ts"]):
            return "the inviting machine is not (or no longer) a member"
        if not invite.reusable and roster.used.get(invite.id, target) != target:
            return "one-time invite was already used"
        holders = [m for m in roster.machines_of(record["person"]) if m.active]
        if holders and roster.person_of(invite.inviter) != record["person"]:
            return f"person {record['person']!r} exists; only their own machines may invite as them"
        if not invite.reusable:
            roster.used[invite.id] = target
        depth = roster.members[invite.inviter].depth + 1
    elif signer != target and roster.may_sign(signer, record["ts"]):
        depth = roster.members[signer].depth + 1
    else:
        return "not admitted: no admission chains to the founder"
    roster.members[target] = MemberState(
        target, record["person"], record["name"], record["role"], record["active"], list(record["emails"]),
        record["ts"], env["sig"], via or "member", depth,
    )
    return None


def _apply(roster: Roster, env: dict[str, Any]) -> str | None:
    """Last-writer-wins update of an admitted machine's state."""
    record, signer = env["body"]["record"], env["by"]
    state = roster.members[record["machine"]]
    if env["sig"] == state.sig:
        return None
    if not roster.admitted(signer):
        return "signer is not a member"
    if (record["ts"], env["sig"]) <= (state.ts, state.sig):
        return None  # older than what we hold: superseded, not wrong
    if signer == record["machine"] and record["active"] and not state.active:
        return "a machine may sign its own departure but never its own return"
    if record["person"] != state.person:
        return "a machine cannot change the person it belongs to"
    state.name, state.role, state.active = record["name"], record["role"], record["active"]
    state.emails, state.ts, state.sig = list(record["emails"]), record["ts"], env["sig"]
    return None


def merge(team_id: str, founder: str, entries: list[dict[str, Any]], now: int) -> Roster:
    """Build the roster from signed roster-log envelopes whose signatures were already verified."""
    roster = Roster(team_id, founder)
    fresh = []
    for env in entries:
        record = env["body"]["record"]
        stamp = max(env["body"]["at"], record.get("ts", 0))
        if stamp > now + MAX_SKEW_MS:
            roster.refused.append((env, "stamped more than a day in the future"))
        else:
            fresh.append(env)
    _collect_invites(roster, [e for e in fresh if e["body"]["record"]["type"] == "invite"])
    members = sorted((e for e in fresh if e["body"]["record"]["type"] == "member"), key=_order)
    pending, progress = list(members), True
    while progress:  # admissions may arrive in any order: repeat until nothing new chains to the founder
        progress, waiting = False, []
        for env in pending:
            if roster.admitted(env["body"]["record"]["machine"]):
                waiting.append(env)
            elif _try_admit(roster, env) is None:
                progress = True
            else:
                waiting.append(env)
        pending = waiting
    for env in pending:
        target = env["body"]["record"]["machine"]
        if not roster.admitted(target):
            roster.refused.append((env, _try_admit(roster, env) or "not admitted"))
        elif (reason := _apply(roster, env)) is not None:
            roster.refused.append((env, reason))
    for env in fresh:
        record = env["body"]["record"]
        if record["type"] == "team" and env["by"] == founder and not roster.name:
            roster.name = record["name"]
        elif record["type"] in ("invite", "team") and not roster.admitted(env["by"]):
            roster.refused.append((env, "signer is not a member"))
    return roster
