"""Sealed-scope records: one epoch of a scope's key sealed to each recipient machine, and a record of a sealed
scope encrypted under an epoch's key (docs/scopes.md). Each kind's fields, and their size caps."""

from __future__ import annotations

FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    # One epoch of a scope's key, sealed to each recipient machine (X25519 from its machine key), with the keys of
    # earlier epochs wrapped under it. `epoch` names the key, never shows it.
    "scope-key": {"v": ("format-version", True), "epoch": ("hex", True), "recipients": ("sealed-boxes", True),
                  "wraps": ("sealed-boxes", True)},
    # A record of a sealed scope (a lesson, review, tombstone or citation), encrypted under an epoch's key.
    "sealed": {"v": ("format-version", True), "epoch": ("hex", True), "box": ("str", True)},
}

CAPS: dict[tuple[str, str], int] = {
    ("scope-key", "recipients"): 64 * 1024,  # about 360 recipient machines
    ("scope-key", "wraps"): 16 * 1024,  # about 90 earlier epochs
    ("sealed", "box"): 80 * 1024,  # the largest sealable record (a lesson with 32 KiB of evidence), in base64
}
