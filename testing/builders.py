"""Builders for signed records: deterministic machine keys, roster records and log-entry envelopes.

They build the same shapes ``gitive.core.records`` checks, so tests can assemble rosters and logs from
compact specs without a repository.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import blake3
from nacl.signing import SigningKey

from gitive.core import signed
from gitive.core.keys import machine_id
from gitive.team import invites

TEAM_ID = "7e" * 16
OTHER_TEAM_ID = "0f" * 16
TEAM_SCOPE: dict[str, Any] = {"team": True}


class Machine(NamedTuple):
    key: SigningKey
    id: str


def machine(name: str) -> Machine:
    """A machine whose key is derived from ``name``: the same name gives the same key in every run."""
    key = SigningKey(blake3.blake3(b"gitive-test-machine/" + name.encode()).digest())
    return Machine(key, machine_id(key))


def invite_code(name: str, founder: Machine, team_id: str = TEAM_ID) -> invites.InviteCode:
    """An invite code whose secret is derived from ``name`` (deterministic)."""
    secret = blake3.blake3(b"gitive-test-invite/" + name.encode()).digest()[:16]
    return invites.InviteCode(team_id, founder.id, secret)


def team_record(name: str, founder: Machine) -> dict[str, Any]:
    return {"type": "team", "name": name, "founder": founder.id}


def member_record(
    target: Machine | str,
    person: str,
    ts: int,
    *,
    name: str | None = None,
    role: str = "member",
    active: bool = True,
    emails: Iterable[str] = (),
    admission: dict[str, Any] | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "member",
        "machine": target.id if isinstance(target, Machine) else target,
        "person": person,
        "name": name or person,
        "role": role,
        "active": active,
        "emails": list(emails),
        "ts": ts,
    }
    if admission is not None:
        record["admission"] = admission
    return record


def founder_admission() -> dict[str, Any]:
    return {"via": "founder"}


def invite_admission(code: invites.InviteCode, target: Machine | str, person: str) -> dict[str, Any]:
    target_id = target.id if isinstance(target, Machine) else target
    return {"via": "invite", "invite": code.invite_id, "proof": invites.prove(code, target_id, person)}


def invite_record(code: invites.InviteCode, expires: int, *, reusable: bool = False,
                  person: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "invite",
        "id": code.invite_id,
        "key": code.key().verify_key.encode().hex(),
        "reusable": reusable,
        "expires": expires,
    }
    if person is not None:
        record["person"] = person
    return record


def entry_body(author: Machine | str, record: dict[str, Any], *, seq: int = 1, at: int = 1_000,
               log: str = "roster", scope: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``LogEntry`` body (unsigned)."""
    return {
        "author": author.id if isinstance(author, Machine) else author,
        "log": log,
        "scope": dict(scope or TEAM_SCOPE),
        "seq": seq,
        "at": at,
        "record": record,
    }


def envelope(signer: Machine, body: dict[str, Any], team_id: str = TEAM_ID) -> dict[str, Any]:
    """``Signed<LogEntry>`` of ``body`` by ``signer``, bound to ``team_id`` and the record's kind."""
    return signed.sign(signer.key, team_id, body["record"]["type"], body)


class LogBook:
    """Collects signed entries of one log, numbering each machine's entries 1, 2, 3, …"""

    def __init__(self, team_id: str = TEAM_ID, log: str = "roster",
                 scope: dict[str, Any] | None = None) -> None:
        self.team_id = team_id
        self.log = log
        self.scope = dict(scope or TEAM_SCOPE)
        self.entries: list[dict[str, Any]] = []
        self._seq: dict[str, int] = {}

    def add(self, signer: Machine, record: dict[str, Any], at: int | None = None) -> dict[str, Any]:
        """Sign ``record`` as ``signer``'s next entry (``at`` defaults to the record's ``ts`` or 1000)."""
        seq = self._seq.get(signer.id, 0) + 1
        self._seq[signer.id] = seq
        stamp = at if at is not None else int(record.get("ts", 1_000))
        env = envelope(signer, entry_body(signer, record, seq=seq, at=stamp, log=self.log, scope=self.scope),
                       self.team_id)
        self.entries.append(env)
        return env


def entry_commit(repo: Any, data: bytes, parent: str | None) -> str:
    """Write a commit holding ``data`` as ``entry.json`` in canonical commit form when the bytes name enough of
    an entry to derive one (author, time and summary), else in a fixed wrapper; no ref moves.

    Forged entries built with this fail on what they forge, not on their wrapper.
    """
    import json

    import pygit2

    from gitive.constants import ENTRY_FILE
    from gitive.store import logs

    try:
        return logs.write_commit(repo, data, json.loads(data)["body"], parent)
    except Exception:  # not an entry gitive could wrap: any wrapper is as malformed as any other
        builder = repo.TreeBuilder()
        builder.insert(ENTRY_FILE, repo.create_blob(data), pygit2.enums.FileMode.BLOB)
        who = pygit2.Signature("forger", "forger@hive", 1_700_000_000, 0)
        parents = [pygit2.Oid(hex=parent)] if parent else []
        return str(repo.create_commit(None, who, who, "forged entry\n", builder.write(), parents))


def person_signer(name: str) -> Any:
    """A person key derived from ``name`` (deterministic), unlocked: what ``gitive person init`` would hold."""
    from gitive.core.personkey import LocalSigner

    return LocalSigner(SigningKey(blake3.blake3(b"gitive-test-person/" + name.encode()).digest()))


def gestured(signer: Any, author: Machine | str, record: dict[str, Any], team_id: str = TEAM_ID) -> dict[str, Any]:
    """``record`` with a gesture by ``signer`` for ``author`` (docs/verification.md §3)."""
    from gitive.core import gesture

    return gesture.sign(signer, team_id, author.id if isinstance(author, Machine) else author, record)
