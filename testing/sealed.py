"""Helpers for sealed-scope tests: read a store's sealed entries and try to open them with any key.

:func:`opened_with` works as an outsider holding one machine key and a copy of a repository would: it reads every
``scope-key`` and ``sealed`` entry under every ref, derives every epoch key that machine key reaches (boxes sealed
to it, then keys wrapped under those), and opens every record and body it can. Nothing in it uses the index.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple

import pygit2

from gitive.core import sealing
from gitive.store import logs
from testing import fixtures


class Sealed(NamedTuple):
    """What a repository holds of sealed scopes, as anyone who can read it sees it."""

    epochs: dict[str, list[dict[str, Any]]]  # epoch id -> its scope-key records
    records: list[tuple[str, dict[str, Any]]]  # (author, sealed record)
    blobs: list[bytes]  # every blob reachable from any ref


def read(repo_path: Path | str) -> Sealed:
    repo = pygit2.Repository(str(repo_path))
    epochs: dict[str, list[dict[str, Any]]] = {}
    records: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for name, tip in fixtures.ref_tips(repo_path, "refs/").items():
        if "/logs/" not in name:
            continue
        for entry in logs.walk(repo, tip):
            if entry.commit in seen:
                continue
            seen.add(entry.commit)
            record = entry.body["record"]
            if record["type"] == "scope-key":
                epochs.setdefault(record["epoch"], []).append(record)
            elif record["type"] == "sealed":
                records.append((entry.body["author"], record))
    listing = fixtures.run_git(["rev-list", "--objects", "--all"], cwd=repo_path)
    ids = dict.fromkeys(line.split(" ", 1)[0] for line in listing.splitlines() if line)
    blobs = [obj.data for obj in (repo[i] for i in ids) if isinstance(obj, pygit2.Blob)]
    return Sealed(epochs, records, blobs)


def keys_of(found: Sealed, machine_key: Any) -> dict[str, bytes]:
    """Every epoch key ``machine_key`` reaches in ``found``."""
    from gitive.core.keys import machine_id

    me = machine_id(machine_key)
    keys: dict[str, bytes] = {}
    for epoch, copies in found.epochs.items():
        for record in copies:
            if me in record["recipients"] and (key := sealing.open_key(machine_key, record["recipients"][me],
                                                                        epoch)) is not None:
                keys[epoch] = key
    queue = list(keys)
    while queue:
        newer = queue.pop()
        for record in found.epochs.get(newer, []):
            for old, box in record["wraps"].items():
                if old not in keys and (key := sealing.unwrap(keys[newer], box, old)) is not None:
                    keys[old] = key
                    queue.append(old)
    return keys


class Opened(NamedTuple):
    records: list[dict[str, Any]]  # the sealed plaintexts that opened
    bodies: list[bytes]  # the sealed bodies that opened


def opened_with(found: Sealed, machine_key: Any) -> Opened:
    """What ``machine_key`` opens of ``found``: with the keys it reaches, and with any box sealed to it."""
    keys = keys_of(found, machine_key)
    plain = []
    for _, record in found.records:
        key = keys.get(record["epoch"])
        if key is not None and (value := sealing.open_record(key, record["box"])) is not None:
            plain.append(value)
    bodies = [b for blob in found.blobs for key in keys.values() if (b := sealing.open_body(key, blob)) is not None]
    return Opened(plain, bodies)


def texts(opened: Opened) -> set[str]:
    """The lesson texts among opened bodies."""
    out = set()
    for data in opened.bodies:
        try:
            out.add(json.loads(data)["text"])
        except (ValueError, KeyError, TypeError):
            continue
    return out


def lesson_ids(opened: Opened) -> set[str]:
    return {p["record"]["id"] for p in opened.records if p["record"]["type"] == "lesson"}


def index_rows(index: Path, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(index)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


# Building sealed records without git (for index property tests): what `gitive.index.scopes` writes.

def epoch_record(key: bytes, recipients: list[str], wraps: dict[str, bytes] | None = None) -> dict[str, Any]:
    """A ``scope-key`` record for ``key``, sealed to ``recipients``, wrapping the older ``{epoch id: key}``."""
    return {"type": "scope-key", "v": sealing.SEALED_VERSION, "epoch": sealing.epoch_id(key),
            "recipients": {m: sealing.seal_key_to(m, key) for m in recipients},
            "wraps": {old: sealing.wrap(key, k) for old, k in (wraps or {}).items()}}


def sealed_record(key: bytes, author: str, log: str, record: dict[str, Any]) -> dict[str, Any]:
    """A ``sealed`` record of ``record`` under ``key``, its plaintext naming ``author`` and ``log``."""
    return {"type": "sealed", "v": sealing.SEALED_VERSION, "epoch": sealing.epoch_id(key),
            "box": sealing.seal_record(key, author, log, record)}
