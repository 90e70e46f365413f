"""Reviews of prepared work: what a person signed about a draft, and whether it authorizes acting on it.

A review of a draft is an ordinary ``review`` record (docs/verification.md §3: a person's decision, with the
gesture of their person key) whose ``about`` is the task id and which carries ``diff_hash`` and ``base``: the
exact change and the base commit the person saw. ``edits``, when present, is the ``diff_hash`` of the owner's
own version (a commit over the draft on ``refs/heads/hive-edits/<name>``), which is then what is approved. A
skip is a review with ``approved: false`` and the note ``skip``.

Only reviews that readers count (``valid_reviews``: by the approver's own non-anchor machine, with a
registered key's gesture, admitted at its position) are read here, and only the task owner's. A review
authorizes one action: once a ``landed`` or ``proposed`` record names it, it covers nothing more.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.anchor.prepared.tiers import Authorization
from gitive.core import decisions
from gitive.index import decisions as index_decisions

SKIP = "skip"


def reviews(index: sqlite3.Connection, task: str) -> list[dict[str, Any]]:
    """Every counted review about ``task``, in decision order: author, log, seq, approver, approved, note, edits,
    diff_hash, base, at, gesture.

    A replayed copy is not counted (``valid_reviews``); one person's reviews are ordered by the sequence signed
    under their gesture, never by the time an entry claims (gitive/core/decisions.py).
    """
    rows = index.execute(
        "SELECT r.author, r.log, r.seq, r.approver, r.approved, r.note, r.edits, r.at, e.envelope, d.n, "
        "d.decided_at, d.gesture FROM valid_reviews r "
        "JOIN entries e ON e.author = r.author AND e.log = r.log AND e.seq = r.seq "
        "LEFT JOIN decisions d ON d.author = r.author AND d.log = r.log AND d.seq = r.seq "
        "WHERE r.about = ?", (task,)).fetchall()
    out = []
    for author, log, seq, approver, approved, note, edits, at, envelope, n, decided_at, sig in rows:
        record = json.loads(envelope)["body"]["record"]
        stamp = decisions.Stamp(decided_at, n) if n is not None else None
        out.append({"author": author, "log": log, "seq": seq, "approver": approver, "approved": bool(approved),
                    "note": note, "edits": edits, "at": decisions.when(stamp, at), "diff_hash": record.get("diff_hash"),
                    "base": record.get("base"), "gesture": sig,
                    "_order": decisions.order(stamp, at, f"{author}/{log}/{seq:020d}")})
    out.sort(key=lambda r: (r["approver"], r["_order"]))
    for r in out:
        del r["_order"]
    return out


def ref_of(review: dict[str, Any]) -> dict[str, Any]:
    return {"author": review["author"], "log": review["log"], "seq": review["seq"]}


def used(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s["review"] for s in steps if s["state"] in ("landed", "proposed") and s.get("review")]


def _spent(index: sqlite3.Connection, steps: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], set[str]]:
    """The review references a landing or proposal used, and their gestures: a copy of a spent review (the
    same gesture in another place) is spent too."""
    refs = used(steps)
    places = [(r.get("author"), r.get("log"), r.get("seq")) for r in refs if isinstance(r, dict)]
    return refs, index_decisions.gestures_of(index, [p for p in places if all(x is not None for x in p)])


def answer(index: sqlite3.Connection, task: dict[str, Any], draft: dict[str, Any], steps: list[dict[str, Any]]
           ) -> dict[str, Any] | None:
    """The owner's last counted answer to exactly this draft (its diff_hash on its base), not yet used."""
    spent, gestures = _spent(index, steps)
    found = None
    for r in reviews(index, task["id"]):
        if r["approver"] != task["owner"] or ref_of(r) in spent or (r["gesture"] and r["gesture"] in gestures):
            continue
        if r["diff_hash"] == draft.get("diff_hash") and r["base"] == (draft.get("base") or {}).get("commit"):
            found = r
    return found


def authorization(review: dict[str, Any]) -> Authorization | None:
    """What an approving review allows: the change it names (the owner's edit, if any) on its base."""
    if not review["approved"]:
        return None
    return Authorization("review", ref_of(review), review["edits"] or review["diff_hash"], review["base"])


def is_skip(review: dict[str, Any]) -> bool:
    return not review["approved"] and review["note"].strip().lower().startswith(SKIP)


def earned(found: dict[str, dict[str, Any]], progress: dict[str, list[dict[str, Any]]], repo: str, kind: str,
              index: Any) -> tuple[list[dict[str, Any]], bool]:
    """What a standing approval of ``kind`` in ``repo`` is earned from: (the approving reviews of this kind's landed
    drafts, approved as prepared; whether any was edited)."""
    earned, edited = [], False
    for task_id, steps in progress.items():
        task = found.get(task_id)
        if task is None or task["repo"] != repo or task["kind"] != kind:
            continue
        for s in steps:
            if s["state"] == "landed" and s.get("review"):
                review = next((r for r in reviews(index, task_id) if ref_of(r) == s["review"]),
                              None)
                if review is None:
                    continue
                if review["edits"]:
                    edited = True
                else:
                    earned.append(ref_of(review))
    return earned, edited
