"""Who may decide what in a team: roles, status by position, person keys and the gestures decisions carry.

The rules are those of ``docs/verification.md`` §3; :mod:`gitive.team.roster` applies them while it merges
the roster, and the index reads what it decided (gaps, person keys, admins, the migration point).
"""

from __future__ import annotations

from typing import Any

from gitive.core import gesture
from gitive.core.roles import ADMIN, ANCHOR, ANCHOR_PERSON, MEMBER, TEAM_VERSION
from gitive.errors import NotAllowed
from gitive.team.roster_state import MemberState, Roster


def is_anchor(state: MemberState | None) -> bool:
    return state is not None and state.role == ANCHOR


def admin_persons(roster: Roster) -> set[str]:
    """Persons with an active non-anchor machine in the admin role; in a v1 team, the founder's person too.

    Cached on the roster until a change touches an admin (``touches_admins``): rosters hold thousands of
    machines, and every change asks.
    """
    if roster.admins_cache is None:
        states = roster.view()
        out = {m.person for m in states.values() if m.active and m.role == ADMIN}
        founder = states.get(roster.founder)
        if roster.version < TEAM_VERSION and founder is not None and any(
                m.active and m.role != ANCHOR and m.person == founder.person for m in states.values()):
            out.add(founder.person)
        roster.admins_cache = out
    return roster.admins_cache


def touches_admins(roster: Roster, person: str, role_before: str | None, role_after: str) -> bool:
    """Whether a change of a machine of ``person`` can change who the admins are."""
    founder = roster.state_of(roster.founder)
    return ADMIN in (role_before, role_after) or (founder is not None and founder.person == person)


def is_admin(roster: Roster, machine: str) -> bool:
    state = roster.state_of(machine)
    return state is not None and state.role != ANCHOR and state.person in admin_persons(roster)


def admin_keys(roster: Roster) -> set[str]:
    return {key for person in admin_persons(roster) for key in roster.keys_of(person)}


def needs_gesture(roster: Roster, machine: str, log: str, seq: int) -> bool:
    """Whether a decision at this position must carry a gesture (v2 team, or past the migration heads)."""
    if roster.version >= TEAM_VERSION:
        return True
    migration = roster.effective_migration()
    if migration is None:
        return False
    return seq > migration.get(machine, {}).get(log, 0)


def gesture_key(roster: Roster, env: dict[str, Any], field_name: str = "gesture") -> str | None:
    """The person key that validly signed this entry's gesture (cached per entry signature)."""
    cache_key = (env["sig"], field_name)
    if cache_key not in roster.gesture_cache:
        body = env["body"]
        roster.gesture_cache[cache_key] = gesture.key_of(roster.team_id, body["author"], body["record"],
                                                         field_name)
    return roster.gesture_cache[cache_key]


def gesture_refusal(roster: Roster, env: dict[str, Any], person: str) -> str | None:
    """Why this decision's gesture does not count for ``person`` (None when it counts or is not needed)."""
    body = env["body"]
    if not needs_gesture(roster, body["author"], body["log"], body["seq"]):
        return None
    key = gesture_key(roster, env)
    if key is None:
        return "a decision without a valid gesture by a person key"
    if key not in roster.keys_of(person):
        return f"the gesture is not by {person}'s registered person key"
    return None


def seniority(roster: Roster, machine: str) -> tuple[int, str]:
    """Lower is more senior: the founder first, then by admission depth, then machine id."""
    state = roster.members.get(machine)
    return (state.depth if state else 1 << 30, machine)


def anchor_refusal(roster: Roster, env: dict[str, Any], via: str | None) -> str | None:
    """The anchor's side of the roster rules: the reserved name goes with the anchor role and only with it, an
    anchor is admitted only by an admin (its invite, or directly), and an anchor signs no roster change but its
    own departure."""
    record, signer = env["body"]["record"], env["by"]
    if (record["person"] == ANCHOR_PERSON) != (record["role"] == ANCHOR):
        return f"the person name {ANCHOR_PERSON!r} is reserved for the anchor role"
    # judged on this pass's states: an anchor's own admission is not a change it signs
    if is_anchor(roster.members.get(signer)) and not (signer == record["machine"] and not record["active"]):
        return "an anchor cannot change the roster"
    if record["role"] == ANCHOR and via != "invite" and record["machine"] not in roster.members \
            and (signer == record["machine"] or not is_admin(roster, signer)):
        return "only an admin admits an anchor (gitive invite --anchor)"
    return None


def change_refusal(roster: Roster, env: dict[str, Any], state: MemberState) -> str | None:
    """Why the signer may not make this change to an admitted machine's member state (None if it may).

    Called after :func:`anchor_refusal`: an anchor signer here is leaving, which needs no gesture (an anchor has
    no person key) but its heads.
    """
    record, signer = env["body"]["record"], env["by"]
    signer_state = roster.state_of(signer)
    if is_anchor(signer_state):
        if signer == state.machine and not record["active"]:
            return heads_refusal(roster, env, state)
        return "an anchor cannot change the roster"
    if record["person"] != state.person:
        return "a machine cannot change the person it belongs to"
    admin = is_admin(roster, signer)
    same_person = signer_state is not None and signer_state.person == state.person
    returning = record["active"] and not state.active
    if signer == state.machine and returning:
        return "a machine may sign its own departure but never its own return"
    if not admin:
        if not same_person:
            return "only an admin removes or changes another person's machines"
        if returning:
            return "only an admin re-activates a removed machine"
        if record["role"] != state.role and record["role"] in (ADMIN, ANCHOR):
            return f"only an admin makes a machine {'an admin' if record['role'] == ADMIN else 'an anchor'}"
    return heads_refusal(roster, env, state) or gesture_refusal(roster, env, signer_state.person
                                                                  if signer_state else "")


def heads_refusal(roster: Roster, env: dict[str, Any], state: MemberState) -> str | None:
    """A removal or re-activation that needs a gesture must record the machine's heads."""
    body, record = env["body"], env["body"]["record"]
    if record["active"] == state.active or not needs_gesture(roster, body["author"], body["log"], body["seq"]):
        return None
    heads = record.get("heads")
    if heads is None:
        return "a removal or re-activation must record the machine's log heads"
    if env["by"] == state.machine and heads.get(body["log"], 0) < body["seq"]:
        return "a machine's own departure must name its heads up to the departure itself"
    return None


def leaves_no_admin(roster: Roster, target: str, record: dict[str, Any]) -> bool:
    """Whether applying ``record`` to ``target`` would leave a team that has admins without any."""
    state = roster.members[target]
    if not touches_admins(roster, state.person, state.role, record["role"]) or not admin_persons(roster):
        return False
    saved = (state.active, state.role)
    state.active, state.role = record["active"], record["role"]
    roster.admins_cache = None
    try:
        return not admin_persons(roster)
    finally:
        state.active, state.role = saved
        roster.admins_cache = None


def joiner_role_refusal(roster: Roster, record: dict[str, Any], sponsor: str) -> str | None:
    """A new machine's role: admin only when an admin admits it directly; anchor only by an admin's invite."""
    role = record["role"]
    if role == MEMBER:
        return None
    if role == ADMIN and record.get("admission", {}).get("via") == "founder":
        return None
    if role == ANCHOR and is_admin(roster, sponsor):
        return None
    if role == ADMIN and is_admin(roster, sponsor) and record.get("admission") is None:
        return None
    return f"only an admin admits a machine as {'an admin' if role == ADMIN else 'an anchor'}"


def check_removal(chosen: list[dict[str, Any]], active: list[dict[str, Any]], person: str, admins: list[str]) -> None:
    """Refuse, before anything is signed, a removal the readers would refuse (the write-side of the rules).

    Raises:
        NotAllowed: another person's machine and ``person`` is not an admin, or no active admin would be left.
    """
    others = sorted({m["person"] for m in chosen if m["person"] != person})
    if others and person not in admins:
        raise NotAllowed(f"only an admin removes another person's machines ({', '.join(others)}); ask "
                         f"{' or '.join(admins) or 'an admin'}, or remove only your own")
    gone = {m["machine"] for m in chosen}
    left = {m["person"] for m in active if m["machine"] not in gone and m["role"] != ANCHOR}
    if admins and not set(admins) & left:
        raise NotAllowed("that would leave the team without an active admin: make someone else an admin first "
                         "(`gitive team role PERSON admin`)")
