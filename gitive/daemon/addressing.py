"""Resolving an address to sessions, as the mesh's directory does (``hive-overview.md`` part 1 §3).

``alice/api-claude`` one session; ``alice/api-claude@laptop`` that session on that machine; ``api-claude`` a
session if the name is unique in the team; ``alice/*`` every live session of alice's; ``repo:acme/api`` or
``repo:api`` every live session in that repository; ``*`` every live session. A bare person is refused with
that person's sessions listed: messages go to sessions, which have context. Groups are for people at a
terminal, never for agents.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from gitive.errors import GitiveError


class AddressError(GitiveError):
    pass


class Recipient(NamedTuple):
    machine: str
    session: str  # the session name on that person's machines
    address: str


def is_group(address: str) -> bool:
    return address == "*" or address.endswith("/*") or address.startswith("repo:")


def _pick(rows: list[dict[str, Any]], what: str) -> list[dict[str, Any]]:
    """Prefer live sessions; several live ones with one name are ambiguous."""
    live = [r for r in rows if r["live"]]
    chosen = live or sorted(rows, key=lambda r: -int(r.get("last_seen") or 0))[:1]
    if len(chosen) > 1:
        options = ", ".join(f"{r['address']}@{r.get('machine_name') or r['machine'][:12]}" for r in chosen)
        raise AddressError(f"{what} is ambiguous: say which one ({options})")
    return chosen


def resolve(address: str, directory: list[dict[str, Any]], persons: set[str], *, sender_is_person: bool,
            sender: str | None = None) -> list[Recipient]:
    """The sessions ``address`` names (never the sender's own session).

    Raises:
        AddressError: unknown, ambiguous, a bare person, or a group address from an agent.
    """
    address = address.strip()
    if not address:
        raise AddressError("say whom to write to: person/session, e.g. alice/api-claude (`gitive who` lists them)")
    if is_group(address) and not sender_is_person:
        raise AddressError("agents message one session, not a group: pick one with list_team, or ask your user")
    others = [r for r in directory if r.get("address") != sender]
    if address == "*":
        found = [r for r in others if r["live"]]
    elif address.endswith("/*"):
        person = address[:-2]
        found = [r for r in others if r["person"] == person and r["live"]]
    elif address.startswith("repo:"):
        want = address[5:].strip("/").lower()
        found = [r for r in others if r["live"] and r.get("repo_label") and (
            r["repo_label"].lower() == want or want.endswith("/" + r["repo_label"].lower())
            or want == r["repo_label"].lower())]
    elif "/" in address:
        base, _, machine_name = address.partition("@")
        rows = [r for r in others if r["address"] == base]
        if machine_name:
            rows = [r for r in rows if machine_name in (r.get("machine_name"), r["machine"][:len(machine_name)])]
        found = _pick(rows, address) if rows else []
    else:
        if address in persons:
            mine = sorted({r["address"] for r in others if r["person"] == address and r["live"]})
            listing = ", ".join(mine) if mine else "none is live now"
            raise AddressError(f"messages go to sessions, not people; {address}'s sessions: {listing}")
        found = _pick([r for r in others if r["name"] == address], address)
    if not found:
        raise AddressError(f"no session answers to {address!r}; `gitive who` lists the team's sessions")
    return [Recipient(r["machine"], r["name"], r["address"]) for r in found]
