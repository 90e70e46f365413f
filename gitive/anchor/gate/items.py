"""Candidate items: anything proposed for a person's attention, before the gate decides whether it reaches them.

An item comes from an obligation that fired, a watcher event, a dangling-work query, a digest, or a session
that proposes one (the MCP tool ``propose_item``). Every item is an ``item`` record: a proposal in the
proposer's team log, the anchor's own in its ledger log. Its ``id`` and ``fingerprint`` (what makes two items
*the same* for the duplicate check: source kind, subject and owner, never the wording) are derived from its
signed content by every reader, never taken from the record (:mod:`gitive.core.item_ids`, issue 23): a member
cannot take the id of the anchor's next firing. The anchor's items hold no title in the clear; it is sealed to
the person the item is for and to the anchors.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from gitive.core.ids import is_hex64, is_name, record_id
from gitive.core.item_ids import ITEM_VERSION, anchor_item_id, cut_title, derived_id, fingerprint, proposal_id
from gitive.errors import GitiveError

__all__ = ["anchor_item_id", "cut_title", "fingerprint", "proposal_id", "record_id"]  # the ids, for callers here

MAX_ABOUT = 16
MAX_FILES = 32
SOURCE_KINDS = ("obligation", "watcher", "dangling", "prepared", "session", "screening", "digest")
ABOUT_KINDS = ("obligation", "lesson", "message", "session", "branch", "commit", "event", "item", "file", "task")


class ItemError(GitiveError):
    pass


@dataclass(frozen=True)
class Candidate:
    id: str
    fingerprint: str
    source: dict[str, Any]  # {kind, ref}
    kind: str
    subject: str
    owner: str
    title: str
    about: tuple[dict[str, str], ...] = ()
    created: int = 0
    files: tuple[str, ...] = ()
    counts: dict[str, int] | None = None
    author: str | None = None  # the machine whose log holds the item record (None: not written yet)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)  # what the gate knows beside the record

    @property
    def source_key(self) -> str:
        """Whose share of the person's budget this item spends: one per session, watcher, obligation, query."""
        ref = self.source.get("ref") or ""
        return f"{self.source['kind']}:{ref}" if ref else self.source["kind"]

    def record(self, sealed: dict[str, Any] | None = None) -> dict[str, Any]:
        """The ``item`` record: format 2 with ``sealed`` (the anchor's: no title in the clear), else format 1."""
        out: dict[str, Any] = {"type": "item", "id": self.id, "fingerprint": self.fingerprint,
                               "source": dict(self.source), "kind": self.kind, "subject": self.subject,
                               "owner": self.owner, "about": [dict(a) for a in self.about], "created": self.created}
        if sealed is not None:
            out["v"], out["sealed"] = ITEM_VERSION, sealed
        else:
            out["title"] = self.title
        if self.files:
            out["files"] = list(self.files)
        if self.counts is not None:
            out["counts"] = dict(self.counts)
        return out


def obligation_item_id(obligation: str, reason: str, event: dict[str, Any] | None) -> str:
    """The id of the item an obligation's firing makes (``reason``: condition, deadline, lapsing)."""
    return anchor_item_id({"kind": "obligation", "ref": obligation}, KIND_OF_REASON[reason],
                          f"{obligation}:{reason}", _obligation_about(obligation, event))


KIND_OF_REASON = {"condition": "obligation.fired", "deadline": "obligation.due", "lapsing": "obligation.lapsing"}


def _obligation_about(obligation: str, event: dict[str, Any] | None) -> list[dict[str, str]]:
    about = [{"kind": "obligation", "id": obligation}]
    if event and event.get("id"):
        about.append({"kind": "event", "id": str(event["id"])[:128]})
    return about


def make(source: dict[str, Any], kind: str, subject: str, owner: str, title: str, created: int, *,
         about: list[dict[str, str]] | None = None, files: list[str] | None = None,
         counts: dict[str, int] | None = None) -> Candidate:
    """A candidate the anchor makes; its id is derived from its source, kind, subject and what it is about."""
    cited = list(about or ())
    return Candidate(anchor_item_id(source, kind, subject, cited), fingerprint(source["kind"], subject, owner),
                     dict(source), kind, subject, owner, cut_title(title), tuple(cited), created,
                     tuple(files or ()), counts)


def from_obligation(item: Any) -> Candidate:
    """The gate's candidate for an obligation item the tick fired (:class:`gitive.anchor.gate.queue.Item`)."""
    reason = {"obligation.fired": "condition", "obligation.due": "deadline"}.get(item.kind, "lapsing")
    subject = f"{item.obligation}:{reason}"
    what = {"condition": "now due", "deadline": "past its deadline", "lapsing": "lapses within a day"}[reason]
    title = f"{what}: {item.action}"
    return make({"kind": "obligation", "ref": item.obligation}, item.kind, subject, item.owner, title, item.fired,
                about=_obligation_about(item.obligation, item.event))


def from_record(record: dict[str, Any], author: str | None = None, title: str | None = None) -> Candidate | None:
    """The candidate a stored ``item`` record is, or None when it is malformed (never a crash). The ids are the
    record's own: use :func:`derived_id` (what :func:`verified` does) for a record anyone else wrote."""
    try:
        about = tuple({"kind": str(a["kind"]), "id": str(a["id"])} for a in record["about"][:MAX_ABOUT])
        cand = Candidate(record["id"], record["fingerprint"], dict(record["source"]), record["kind"],
                         record["subject"], record["owner"], cut_title(title or record.get("title") or ""), about,
                         record["created"], tuple(str(f) for f in record.get("files") or ())[:MAX_FILES],
                         record.get("counts"), author)
    except (KeyError, TypeError, AttributeError):
        return None
    if cand.source.get("kind") not in SOURCE_KINDS or not is_hex64(cand.id) or not is_name(cand.owner):
        return None
    return cand


def verified(record: dict[str, Any], author: str, anchor: bool, title: str | None = None) -> Candidate | None:
    """The candidate a stored record is when its id and fingerprint are the ones derived from its content."""
    c = from_record(record, author, title)
    if c is None or derived_id(record, author, anchor) != c.id:
        return None
    return c if fingerprint(c.source["kind"], c.subject, c.owner) == c.fingerprint else None


def proposal(author: str, person: str, session: str | None, title: str, about: list[dict[str, str]],
             files: list[str], owner: str, created: int) -> Candidate:
    """What a session proposes through ``propose_item``. Its subject is what it cites (never its wording):
    items citing the same records are the same item; one citing nothing is about its session."""
    ref = f"{person}/{session}" if session else person
    cited = sorted(f"{a['kind']}:{a['id']}" for a in about) + sorted(f"file:{f}" for f in files)
    subject = ",".join(cited)[:200] if cited else f"session:{ref}"
    return Candidate(proposal_id(author, ref, subject, created), fingerprint("session", subject, owner), {"kind": "session", "ref": ref}, "proposed",
                     subject, owner, cut_title(title), tuple(about), created, tuple(files))


def parse_about(values: list[str]) -> list[dict[str, str]]:
    """``obligation:7bce…``, ``lesson:ID``, ``branch:auth-rotation``, ``message:ULID`` … → ``[{kind, id}]``.

    Raises:
        ItemError: more than 16, or one that is not ``KIND:ID`` with a known kind.
    """
    if len(values) > MAX_ABOUT:
        raise ItemError(f"an item is about at most {MAX_ABOUT} records")
    out = []
    for value in values:
        kind, _, ident = str(value).partition(":")
        if kind not in ABOUT_KINDS or not ident or len(ident) > 200:
            raise ItemError(f"about {value!r}: use KIND:ID with KIND one of {', '.join(ABOUT_KINDS)}")
        out.append({"kind": kind, "id": ident.strip()})
    return out


def owner_of(conn: sqlite3.Connection, repo: Any, files: list[str], about: list[dict[str, str]],
             fallback: str | None, owners: dict[str, str] | None = None) -> tuple[str | None, str]:
    """``owner(c)`` from the graph: an obligation it is about (its owner), else the code owner of its files
    (CODEOWNERS, else whoever committed to them most in 30 days), else ``fallback``; with the reason.
    ``owners`` (obligation id -> owner, :func:`obligation_owners`) spares a query per item in a batch."""
    for a in about:
        if a["kind"] == "obligation":
            owner = (owners if owners is not None else obligation_owners(conn, a["id"])).get(a["id"])
            if owner:
                return owner, "owner of the obligation it is about"
    if files and repo is not None:
        from gitive.lessons.reviewer import choose

        found = choose(repo, conn, "team", fallback or "", files)
        if found.person:
            return found.person, found.reason
    return fallback, "proposer's person (nothing it cites names an owner)"


def obligation_owners(conn: sqlite3.Connection, ident: str | None = None) -> dict[str, str]:
    """Obligation id -> owner, of every obligation (or the one ``ident``) the index holds."""
    sql, args = "SELECT id, owner FROM obligations", ()
    if ident is not None:
        sql, args = sql + " WHERE id = ?", (ident,)
    return dict(conn.execute(sql, args).fetchall())


def person_of(conn: sqlite3.Connection, machine: str) -> tuple[str | None, str | None]:
    row = conn.execute("SELECT person, role FROM members WHERE machine = ?", (machine,)).fetchone()
    return (row[0], row[1]) if row else (None, None)


def active_people(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT DISTINCT person FROM members WHERE active = 1 AND role != 'anchor'")}
