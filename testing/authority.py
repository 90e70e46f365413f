"""A v2 team as signed envelopes, for the authority property tests: founder, joiners, their person keys,
decisions with gestures, lessons, reviews, citations, removals with heads.

Every record is shaped exactly as gitive writes it (``gitive.enrolment.ops``, ``gitive.lessons``); hostile moves
are made by writing what an attacker with a machine key (but not the person's passphrase) could.
"""

from __future__ import annotations

from typing import Any

import blake3

from gitive.core import gesture
from testing.builders import (
    TEAM_ID,
    LogBook,
    Machine,
    founder_admission,
    invite_admission,
    invite_code,
    invite_record,
    machine,
    member_record,
    person_signer,
)

T0 = 1_700_000_000_000
NOW = T0 + 30 * 86_400_000
MINUTE = 60_000


def t(minutes: int) -> int:
    return T0 + minutes * MINUTE


PROJECT = "ab" * 32  # the project of every project-scope entry these builders write

class Team:
    """Signed logs of one team; ``machines[name]`` and ``keys[person]`` are what its members hold."""

    def __init__(self, founder: str = "alice", *, version: int = 2) -> None:
        self.books: dict[str, LogBook] = {}
        self.machines: dict[str, Machine] = {}
        self.person: dict[str, str] = {}  # machine id -> person
        self.role: dict[str, str] = {}  # machine id -> role, as the records written here left it
        self.keys: dict[str, Any] = {}
        self.version = version
        self.founder = self._machine(f"{founder}-laptop", founder)
        self.role[self.founder.id] = "admin" if version >= 2 else "member"
        record = member_record(self.founder, founder, t(0), name="laptop", admission=founder_admission(),
                               role="admin" if version >= 2 else "member")
        self.add(self.founder, record, signed=version >= 2, at=t(0))
        if version >= 2:
            self.add(self.founder, self.key_record(self.founder, t(0)), signed=False, at=t(0))
        team = {"type": "team", "name": "acme", "founder": self.founder.id}
        if version >= 2:
            team["version"] = version
        self.add(self.founder, team, signed=False, at=t(0))

    # --- building --------------------------------------------------------------------------------------

    def _machine(self, name: str, person: str) -> Machine:
        m = machine(name)
        self.machines[name] = m
        self.person[m.id] = person
        self.keys.setdefault(person, person_signer(person))
        return m

    def book(self, log: str) -> LogBook:
        if log not in self.books:  # a project log `project-<16 hex>` is of the project PROJECT
            self.books[log] = LogBook(TEAM_ID, log, {"project": PROJECT} if log.startswith("project") else None)
        return self.books[log]

    def add(self, author: Machine, record: dict[str, Any], *, log: str = "roster", at: int | None = None,
            signed: bool = True, signer: Any = None) -> dict[str, Any]:
        """Append ``record`` to ``author``'s ``log``; with ``signed``, gestured by ``signer`` (default: the
        author's person's key)."""
        if signed:
            record = gesture.sign(signer or self.keys[self.person[author.id]], TEAM_ID, author.id, record)
        return self.book(log).add(author, record, at=at if at is not None else int(record.get("ts", t(1))))

    def key_record(self, author: Machine, ts: int, signer: Any = None) -> dict[str, Any]:
        key = signer or self.keys[self.person[author.id]]
        record = {"type": "person-key", "person": self.person[author.id], "key": key.public, "ts": ts}
        return gesture.sign(key, TEAM_ID, author.id, record)

    def join(self, name: str, person: str, minutes: int, inviter: Machine | None = None,
             role: str = "member") -> Machine:
        """An invite by ``inviter`` (default the founder) and the joiner's own gestured admission."""
        inviter = inviter or self.founder
        code = invite_code(f"{name}-{minutes}", self.founder)
        self.add(inviter, invite_record(code, t(minutes + 7 * 24 * 60)), at=t(minutes))
        joiner = self._machine(name, person)
        record = member_record(joiner, person, t(minutes + 1), name=name, role=role,
                               admission=invite_admission(code, joiner, person))
        self.add(joiner, record, at=t(minutes + 1), signed=self.version >= 2)
        if self.version >= 2:
            self.add(joiner, self.key_record(joiner, t(minutes + 1)), signed=False, at=t(minutes + 1))
        return joiner

    def heads(self, m: Machine) -> dict[str, int]:
        return {log: book._seq[m.id] for log, book in self.books.items() if m.id in book._seq}

    def remove(self, by: Machine, target: Machine, minutes: int, *, heads: dict[str, int] | None = None,
               signed: bool = True, signer: Any = None) -> dict[str, Any]:
        record = member_record(target, self.person[target.id], t(minutes), name=target_name(self, target),
                               active=False, role=self.role.get(target.id, "member"))
        record["heads"] = self.heads(target) if heads is None else heads
        if by.id == target.id:
            record["heads"]["roster"] = record["heads"].get("roster", 0) + 1
        return self.add(by, record, at=t(minutes), signed=signed, signer=signer)

    def set_role(self, by: Machine, target: Machine, role: str, minutes: int, signer: Any = None) -> dict[str, Any]:
        record = member_record(target, self.person[target.id], t(minutes), name=target_name(self, target),
                               role=role)
        self.role[target.id] = role
        return self.add(by, record, at=t(minutes), signer=signer)

    def lesson(self, author: Machine, text: str, minutes: int, log: str = "team") -> str:
        lesson_id = blake3.blake3(f"lesson/{author.id}/{text}".encode()).hexdigest()
        record = {"type": "lesson", "id": lesson_id, "kind": "Gotcha", "evidence": [{"kind": "file", "path": "a.py"}],
                  "tags": [], "body_hash": blake3.blake3(text.encode()).hexdigest(), "hearsay": False}
        self.add(author, record, log=log, at=t(minutes), signed=False)
        return lesson_id

    def review(self, by: Machine, lesson: str, minutes: int, *, approved: bool = True, signed: bool = True,
               signer: Any = None, approver: str | None = None) -> dict[str, Any]:
        record = {"type": "review", "about": lesson, "approver": approver or self.person[by.id],
                  "approved": approved, "note": ""}
        return self.add(by, record, log="team", at=t(minutes), signed=signed, signer=signer)

    def tombstone(self, by: Machine, lesson: str, minutes: int, *, signed: bool = True) -> dict[str, Any]:
        record = {"type": "tombstone", "lesson": lesson, "reason": "wrong", "bodies": []}
        return self.add(by, record, log="team", at=t(minutes), signed=signed)

    def cite(self, by: Machine, lesson: str, session: str, minutes: int, success: bool = True) -> dict[str, Any]:
        record = {"type": "citation", "lesson": lesson, "session": session, "success": success,
                  "tests_passed": success, "reverted": False}
        return self.add(by, record, log="team", at=t(minutes), signed=False)

    @property
    def entries(self) -> list[dict[str, Any]]:
        return [env for book in self.books.values() for env in book.entries]


def target_name(team: Team, target: Machine) -> str:
    return next(name for name, m in team.machines.items() if m.id == target.id)


__all__ = ["NOW", "T0", "TEAM_ID", "Team", "t"]
