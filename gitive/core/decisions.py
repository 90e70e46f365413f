"""A person's decisions carry their own signed time and place: one rule for every gestured decision kind.

A log entry's ``at`` is chosen by whoever holds the machine key, so an agent on a person's machine could
re-append that person's old decision (gesture and all) and have readers take it for the newest (issue 23).
So every decision a person signs carries ``decided = {at, n}`` *inside* the record, under the gesture:

- ``at``: when the person decided (ms, their machine's clock);
- ``n``: their per-subject sequence, one more than the highest ``n`` this person's machine knew of for the same
  subject (a lesson's reviews, one task's reviews, one standing approval's states…).

Readers order one person's decisions on one subject by ``(n, at)``; decisions of different people by ``at``.
A gestured record counts only at its first appearance (the same gesture sig appended again is a *replay*),
and one dated more than :data:`SKEW_MS` ahead does not count before its time. Records written before this
field existed (decision format v1) have no ``decided``; they order before every stamped decision of the same
person on the same subject, by the time their first copy claims.
"""

from __future__ import annotations

from typing import Any, NamedTuple

FIELD = "decided"
VERSION = 2  # decision format: 2 = records carry `decided`; 1 = without (still read, see the module docstring)
SKEW_MS = 5 * 60_000  # a decision dated further ahead than this waits for its time

# Each decision kind and what it is about: the fields that name its subject. A new decision kind adds a line.
SUBJECTS: dict[str, tuple[str, ...]] = {
    "review": ("about",),
    "tombstone": ("lesson",),
    "project-member": ("project", "person"),
    "obligation-state": ("obligation",),
    "standing-approval": ("kind", "repo"),
    "standing-state": ("standing",),
    "prefs": ("person",),
    "gate-live": ("person",),
    "project-link": ("to",),
}
KINDS = tuple(SUBJECTS)


class Stamp(NamedTuple):
    at: int
    n: int


def subject(record: dict[str, Any]) -> str | None:
    """What ``record`` decides about, as one string (None: not a decision kind, or a malformed one)."""
    fields = SUBJECTS.get(record.get("type", ""))
    if fields is None or not all(isinstance(record.get(f), str) for f in fields):
        return None
    return "/".join([record["type"], *(record[f] for f in fields)])


def is_stamp(value: Any) -> bool:
    """``{at, n}``: two positive integers (the schema check of the ``decided`` field)."""
    return (isinstance(value, dict) and set(value) == {"at", "n"}
            and all(isinstance(value[k], int) and not isinstance(value[k], bool) and 0 < value[k] < 2**63
                    for k in ("at", "n")))


def stamp(record: dict[str, Any], at: int, n: int) -> dict[str, Any]:
    """``record`` with its decision stamp; sign the gesture after this, so the stamp is under it."""
    return {**record, FIELD: {"at": at, "n": n}}


def stamp_of(record: dict[str, Any]) -> Stamp | None:
    value = record.get(FIELD)
    return Stamp(value["at"], value["n"]) if is_stamp(value) else None


def gesture_id(record: dict[str, Any]) -> str | None:
    """The identity of a gestured record: its gesture's signature (the same decision, however often copied)."""
    found = record.get("gesture")
    sig = found.get("sig") if isinstance(found, dict) else None
    return sig if isinstance(sig, str) else None


def when(stamp_: Stamp | None, entry_at: int) -> int:
    """The time a decision counts from: its signed time, or (decision format v1) its first copy's entry time."""
    return stamp_.at if stamp_ is not None else entry_at


def order(stamp_: Stamp | None, entry_at: int, tie: str = "") -> tuple[int, int, int, str]:
    """Sort key of one person's decisions on one subject: v1 ones first by time, then stamped ones by n."""
    if stamp_ is None:
        return (0, entry_at, 0, tie)
    return (1, stamp_.n, stamp_.at, tie)


def due(stamp_: Stamp | None, now: int) -> bool:
    """Whether a decision may count at ``now``: undated (v1) ones always, dated ones once within the skew."""
    return stamp_ is None or stamp_.at <= now + SKEW_MS


def next_n(known: int | None) -> int:
    return (known or 0) + 1
