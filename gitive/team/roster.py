"""Merging the roster from every machine's signed roster log.

Rules (``docs/verification.md`` §3; the mesh's roster, ``hive-overview.md`` part 1 §4):
- admission chains to the founder: the founder's self-signed entry, then entries signed by an admitted
  machine, or a joiner's own entry proving an invite made by an admitted machine; admissions are never
  removed, so who may sign never depends on the order entries arrive in;
- member state merges last-writer-wins by ``(ts, sig)``;
- roles are ``admin | member | anchor``: only an admin removes or changes another person's machines, makes an
  admin or admits an anchor; anyone may leave; a change that leaves no active admin is refused; an anchor
  machine never changes the roster (``team.authority``);
- a machine may sign its own departure, never its own return; a removal records the removed machine's log
  heads, and its entries past them are refused *by position*, whatever time they claim (a v1 removal without
  heads falls back to time); invites die with the machine that made them;
- decisions carry a gesture by the signer's person key: from the start in a v2 team, past the migration
  heads in an older one; person keys are registered by ``person-key`` records (or the admission's gesture);
- a machine joining as a person who already has machines needs an invite from, or admission by, one of that
  person's machines;
- entries stamped more than a day in the future are refused.

Entries are applied in ``(ts, sig)`` order; status is judged by the position of the signer's entry in its
log. Passes repeat, each knowing what the previous one decided (admissions, removals, keys, the migration),
until nothing changes: the result does not depend on the order entries arrived in.
"""

from __future__ import annotations

from typing import Any

from gitive.constants import MAX_SKEW_MS
from gitive.core import roles
from gitive.team import authority, invites
from gitive.team.roster_state import Gap, Invite, MemberState, Roster


def _order(env: dict[str, Any]) -> tuple[int, str]:
    record = env["body"]["record"]
    return (record.get("ts", env["body"]["at"]), env["sig"])


def _sponsored_by(roster: Roster, machine: str, target: str) -> bool:
    """Whether ``target`` is on ``machine``'s admission chain (then ``machine`` cannot block it)."""
    seen = set()
    current: str | None = machine
    while current and current not in seen:
        if current == target:
            return True
        seen.add(current)
        state = roster.members.get(current)
        current = state.sponsor if state else None
    return False


def _person_taken(roster: Roster, person: str, target: str, at: int) -> bool:
    return any(m.machine != target and roster.may_sign(m.machine, at) and not _sponsored_by(roster, m.machine, target)
               for m in roster.machines_of(person))


def _redeem(roster: Roster, env: dict[str, Any]) -> tuple[Invite | None, str]:
    """The invite a joiner's own entry redeems, or why none does."""
    record = env["body"]["record"]
    admission = record.get("admission") or {}
    ts, proof = record["ts"], str(admission.get("proof", ""))
    invite_id = str(admission.get("invite", ""))
    known_invites = roster.previous.invites if roster.previous else {}
    candidates = roster.invites.get(invite_id) or known_invites.get(invite_id, [])
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
    if (invite.role == roles.ANCHOR) != (record["role"] == roles.ANCHOR):
        return None, "an anchor joins only with an anchor invite, and an anchor invite admits only an anchor"
    if not roster.may_sign(invite.inviter, ts):
        return None, "the inviting machine is not (or no longer) an active member"
    if not invite.reusable and roster.used.get(invite.id, record["machine"]) != record["machine"]:
        return None, "one-time invite was already used"
    return invite, ""


def _depth(roster: Roster, machine: str) -> int:
    state = roster.state_of(machine)
    return state.depth if state else 1  # admitted later in time (clock skew): depth is approximate


def _own_key_refusal(roster: Roster, env: dict[str, Any], person: str) -> str | None:
    """A joiner's own admission gestures with its person's key: the registered one, or the first one."""
    body = env["body"]
    key = authority.gesture_key(roster, env)
    registered = roster.keys_of(person)
    required = authority.needs_gesture(roster, body["author"], body["log"], body["seq"])
    if key is None:
        return "a decision without a valid gesture by a person key" if required else None
    if registered and key not in registered:
        return f"the gesture is not by {person}'s registered person key" if required else None
    if not registered:
        roster.keys[person] = [key]
    return None


def _admit(roster: Roster, env: dict[str, Any]) -> str | None:
    """Admit the entry's machine if its admission chains to the founder; return a refusal reason or None."""
    record, signer = env["body"]["record"], env["by"]
    target, ts = record["machine"], record["ts"]
    via = (record.get("admission") or {}).get("via")
    refusal = authority.anchor_refusal(roster, env, via)
    if refusal:
        return refusal
    sponsor: str | None
    redeemed: Invite | None = None
    if target == roster.founder and signer == target and via == "founder":
        depth, sponsor = 0, None
    elif via == "invite" and signer == target:
        invite, reason = _redeem(roster, env)
        if invite is None:
            return reason
        sponsor, redeemed = invite.inviter, invite
        depth = _depth(roster, sponsor) + 1
    elif not record["active"]:
        return "not admitted: a departure entry cannot admit a machine"
    elif signer != target and roster.state_of(signer) is not None and roster.may_sign(signer, ts):
        sponsor, depth = signer, _depth(roster, signer) + 1
        if authority.is_anchor(roster.state_of(signer)):
            return "an anchor machine never changes the roster"
        if not authority.is_admin(roster, signer) and roster.state_of(signer).person != record["person"]:
            return "only an admin admits another person's machine directly; send an invite"
    else:
        return "not admitted: no admission chains to the founder"
    if sponsor and record["person"] != roles.ANCHOR_PERSON and _person_taken(roster, record["person"], target, ts) \
            and roster.person_of(sponsor) != record["person"]:
        return f"person {record['person']!r} exists; only their own machines may add machines as them"
    reason = authority.joiner_role_refusal(roster, record, sponsor or target)
    if reason is None:
        if signer == target and record["role"] == roles.ANCHOR:
            reason = None  # the anchor has no person: the admin's invite was the decision
        elif signer == target:
            reason = _own_key_refusal(roster, env, record["person"])
        else:
            reason = authority.gesture_refusal(roster, env, roster.state_of(signer).person)  # type: ignore[union-attr]
    if reason is not None:
        return reason
    if redeemed is not None and not redeemed.reusable:
        roster.used[redeemed.id] = target
    known = roster.state_of(target)  # the previous pass's view of it, until now
    if authority.touches_admins(roster, record["person"], known.role if known else None, record["role"]) \
            or target == roster.founder:
        roster.admins_cache = None
    roster.members[target] = MemberState(
        target, record["person"], record["name"], record["role"], record["active"], list(record["emails"]),
        ts, env["sig"], via or "member", depth, sponsor,
    )
    roster.by_person.setdefault(record["person"], []).append(target)
    if record["role"] == roles.ADMIN and record["active"]:
        roster.ever_admins.add(record["person"])
    roster._record(target, ts, env["sig"], record["active"])
    return None


def _apply(roster: Roster, env: dict[str, Any]) -> str | None:
    """A state change of an admitted machine by a signer that may make it; LWW by ``(ts, sig)``."""
    record, signer = env["body"]["record"], env["by"]
    target, ts = record["machine"], record["ts"]
    state = roster.members[target]
    if env["sig"] == state.sig:
        return None
    refusal = authority.anchor_refusal(roster, env, None)
    if refusal:
        return refusal
    if (record["role"] == roles.ANCHOR) != (state.role == roles.ANCHOR):
        return "a machine's anchor role never changes: remove the machine and invite it again"
    if roster.state_of(signer) is None:
        return "signer was not an active member when it signed"
    reason = authority.change_refusal(roster, env, state)
    if reason is not None:
        return reason
    if authority.leaves_no_admin(roster, target, record):
        return "this change would leave the team without an active admin"
    roster._record(target, ts, env["sig"], record["active"])
    if (ts, env["sig"]) > (state.ts, state.sig):
        if authority.touches_admins(roster, state.person, state.role, record["role"]):
            roster.admins_cache = None
        _move_gaps(roster, env, state)
        state.name, state.role, state.active = record["name"], record["role"], record["active"]
        state.emails, state.ts, state.sig = list(record["emails"]), ts, env["sig"]
        if state.role == roles.ADMIN and state.active:
            roster.ever_admins.add(state.person)
    return None


def _move_gaps(roster: Roster, env: dict[str, Any], state: MemberState) -> None:
    """A removal opens a gap in the machine's logs (or widens the open one); a re-activation closes it."""
    record, body = env["body"]["record"], env["body"]
    gaps = roster.gaps.setdefault(state.machine, [])
    current = gaps[-1] if gaps and gaps[-1].open else None
    heads = record.get("heads")
    if not record["active"]:
        if current is None:
            gaps.append(Gap(state.machine, env["sig"], env["by"], body["seq"],
                            dict(heads) if heads is not None else None, record["ts"]))
        else:
            current.fold(heads, record["ts"], env["sig"])
    elif current is not None:
        current.close(dict(heads) if heads is not None else None, record["ts"], env["sig"])


def _take_invite(roster: Roster, env: dict[str, Any]) -> str | None:
    record, signer = env["body"]["record"], env["by"]
    state = roster.state_of(signer)
    if state is None or not roster.may_sign(signer, env["body"]["at"]):
        return "signer was not an active member when it signed"
    if authority.is_anchor(state):
        return "an anchor cannot invite"
    if record.get("role") == roles.ANCHOR and (not authority.is_admin(roster, signer)
                                                  or record.get("person") != roles.ANCHOR_PERSON):
        return "only an admin invites an anchor, and only as the person 'anchor'"
    reason = authority.gesture_refusal(roster, env, state.person)
    if reason is not None:
        return reason
    found = roster.invites.setdefault(record["id"], [])
    if not any(i.key == record["key"] and i.inviter == signer for i in found):
        found.append(Invite(record["id"], record["key"], signer, record["reusable"], record["expires"],
                            env["body"]["at"], record.get("person"), record.get("role")))
    return None


def _take_key(roster: Roster, env: dict[str, Any]) -> str | None:
    """Register a person key: the person's first, or one endorsed by a registered key of theirs or an admin's."""
    record, signer = env["body"]["record"], env["by"]
    state = roster.state_of(signer)
    if state is None:
        return "signer was not an active member when it signed"
    if authority.is_anchor(state):
        return "an anchor machine has no person key"
    if record["person"] != state.person:
        return "a machine registers a person key only for its own person"
    if authority.gesture_key(roster, env) != record["key"]:
        return "the gesture is not by the key it registers"
    registered = roster.keys_of(state.person)
    if record["key"] in registered:
        roster.keys.setdefault(state.person, [])
        if record["key"] not in roster.keys[state.person]:
            roster.keys[state.person].append(record["key"])
        return None
    if registered:
        endorser = authority.gesture_key(roster, env, "endorse")
        if endorser is None or (endorser not in registered and endorser not in authority.admin_keys(roster)):
            return (f"{state.person} already has a person key; another needs an endorsement by it or by an "
                    "admin's (`gitive person register --endorse`)")
    roster.keys.setdefault(state.person, []).append(record["key"])
    return None


def _take_migration(roster: Roster, env: dict[str, Any]) -> str | None:
    signer = env["by"]
    state = roster.state_of(signer)
    if roster.version >= roles.TEAM_VERSION:
        return "this team was founded with gestures; there is nothing to migrate"
    if state is None or not authority.is_admin(roster, signer):
        return "only an admin migrates the team"
    if authority.gesture_key(roster, env) not in roster.keys_of(state.person):
        return f"the gesture is not by {state.person}'s registered person key"
    if roster.migration_sig is not None:
        return "the team was already migrated"
    roster.migration, roster.migration_sig = env["body"]["record"]["heads"], env["sig"]
    return None


def _position_refusal(roster: Roster, env: dict[str, Any]) -> str | None:
    """Why the signer's entry is past a removal of its machine (None when its position is fine)."""
    body = env["body"]
    for gap in roster._gaps_for(body["author"]):
        if env["sig"] == gap.opened_by or env["sig"] in gap.extra:
            continue  # a removal is never refused by the gap it opened itself
        if gap.refuses(body["log"], body["seq"], body["at"]) and not _senior_counter_removal(roster, env, gap):
            return "signed after its machine was removed (past the removal's heads)"
    return None


def _senior_counter_removal(roster: Roster, env: dict[str, Any], gap: Gap) -> bool:
    """Two admins removed each other, neither having seen the other's removal: the senior one stands."""
    record = env["body"]["record"]
    if record.get("type") != "member" or record.get("active") or record.get("machine") != gap.remover:
        return False
    seen = (record.get("heads") or {}).get("roster", 0)
    return (gap.remover_seq > seen
            and authority.seniority(roster, env["by"]) < authority.seniority(roster, gap.remover))


def _step(roster: Roster, env: dict[str, Any]) -> str | None:
    record = env["body"]["record"]
    kind = record["type"]
    if kind == "team":
        return None
    own = roster.members.get(record.get("machine", "")) if env["by"] == record.get("machine") else None
    if kind == "member" and own is not None and record["active"] and not own.active:
        return "a machine may sign its own departure but never its own return"  # said before its position
    reason = _position_refusal(roster, env)
    if reason is not None:
        return reason
    if kind == "invite":
        return _take_invite(roster, env)
    if kind == "person-key":
        return _take_key(roster, env)
    if kind == "migration":
        return _take_migration(roster, env)
    return _apply(roster, env) if roster.admitted(record["machine"]) else _admit(roster, env)


def _pass(team_id: str, founder: str, version: int, entries: list[dict[str, Any]],
          previous: Roster | None, cache: dict[tuple[str, str], str | None]) -> Roster:
    """One chronological pass, knowing what the previous pass decided."""
    roster = Roster(team_id, founder, version=version, previous=previous, gesture_cache=cache)
    for env in entries:
        reason = _step(roster, env)
        if reason is not None:
            roster.refused.append((env, reason))
    return roster


ROSTER_KINDS = ("member", "invite", "person-key", "migration")


def merge(team_id: str, founder: str, entries: list[dict[str, Any]], now: int) -> Roster:
    """Build the roster from signed roster-log envelopes whose signatures were already verified.

    Each pass applies every entry in ``(ts, sig)`` order from scratch, knowing what the previous pass
    decided; passes repeat until a pass decides the same as the one before, so the result does not depend on
    the order entries arrived in.
    """
    future, ordered, teams = [], [], []
    for env in entries:
        record = env["body"]["record"]
        if max(env["body"]["at"], record.get("ts", 0)) > now + MAX_SKEW_MS:
            future.append((env, "stamped more than a day in the future"))
        elif record["type"] in ROSTER_KINDS:
            ordered.append(env)
        elif record["type"] == "team" and env["by"] == founder:
            teams.append(env)
    ordered.sort(key=_order)
    # A team is v2 once its founder said so; no later record takes it back.
    version = max([1, *(int(e["body"]["record"].get("version", 1)) for e in teams)])
    cache: dict[tuple[str, str], str | None] = {}
    previous: Roster | None = None
    roster = Roster(team_id, founder)
    for _ in range(16):
        roster = _pass(team_id, founder, version, ordered, previous, cache)
        if previous is not None and roster.fingerprint() == previous.fingerprint():
            break
        previous = roster
    roster.previous = None  # the final roster stands on its own
    roster.ever_admins |= authority.admin_persons(roster)
    roster.refused = future + roster.refused
    if teams:
        roster.name = max(teams, key=lambda e: (e["body"]["at"], e["sig"]))["body"]["record"]["name"]
    return roster
