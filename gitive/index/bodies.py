"""Lesson bodies in the index: which body snapshots are accepted, where every body is, and loading them.

Every body snapshot a store holds (this machine's own, each remote's copy of each machine's, and our pins)
is judged when its ref moves (docs/verification.md §5): it must be signed by its machine, and its version
must go above the newest one accepted for that machine. The accepted one is pinned
(``refs/hive-pinned/bodies/<machine>``), so a replayed older snapshot neither erases nor revives anything,
and ``body_locations`` follows it by diffing the old and new trees (unchanged subtrees skipped by id). A
body is loaded through that table, checked against the hash in the signed header, and refused for good once
its lesson is retracted; this machine drops refused bodies from its own store, so the next push drops them
from the remote too.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.constants import BODIES_REF_PREFIX, MAX_BODY_BYTES, PINNED_REF_PREFIX, REMOTES_REF_PREFIX
from gitive.core import canonical
from gitive.core.ids import is_machine_id
from gitive.core.lessons import MAX_SYMPTOM, MAX_SYMPTOMS, MAX_TEXT, body_hash
from gitive.errors import InvalidRecord
from gitive.index import sealed
from gitive.index.lesson_text import drop_text_of_body
from gitive.store import bodies, objects, refs, snapshots
from gitive.store.snapshots import Snapshot

if TYPE_CHECKING:
    from gitive.store.types import Repo

_CHUNK = 500  # host parameters per IN (...) query, well under SQLite's limit


def parse_body(data: bytes) -> dict[str, Any]:
    """A lesson body from a peer's store, checked for shape (its hash is checked by the caller).

    Raises:
        InvalidRecord: not a lesson body.
    """
    value = canonical.loads_canonical(data)
    if (not isinstance(value, dict) or not {"text", "applicability", "quote"} <= value.keys() <= _BODY_KEYS
            or not isinstance(value["text"], str) or not isinstance(value["applicability"], str)
            or len(value["text"]) > MAX_TEXT or not (value["quote"] is None or isinstance(value["quote"], dict))
            or not _symptoms_ok(value.get("symptoms", []))):
        raise InvalidRecord("not a lesson body")
    return value


_BODY_KEYS = {"text", "applicability", "quote", "symptoms"}  # symptoms: body format 2, optional


def _symptoms_ok(symptoms: Any) -> bool:
    return (isinstance(symptoms, list) and len(symptoms) <= MAX_SYMPTOMS
            and all(isinstance(s, str) and 0 < len(s) <= MAX_SYMPTOM for s in symptoms))


def body_ref_machine(name: str) -> str | None:
    """The machine whose body store ``name`` is (own, a remote's copy, or a pin), or None."""
    if name.startswith(BODIES_REF_PREFIX):
        rest = name[len(BODIES_REF_PREFIX):]
    elif name.startswith(PINNED_REF_PREFIX + "bodies/"):
        rest = name[len(PINNED_REF_PREFIX) + 7:]
    elif name.startswith(REMOTES_REF_PREFIX):
        _, _, tail = name[len(REMOTES_REF_PREFIX):].partition("/")
        if not tail.startswith("bodies/"):
            return None
        rest = tail[7:]
    else:
        return None
    return rest if is_machine_id(rest) else None


def _priority(ref: str) -> int:
    """Among unversioned (v1) snapshots of one machine the last accepted wins: a remote's copy first,
    then our pin, then the machine's own ref."""
    return 2 if ref.startswith(BODIES_REF_PREFIX) else 1 if ref.startswith(PINNED_REF_PREFIX) else 0


def _pin(conn: sqlite3.Connection, store: str, machine: str) -> Snapshot | None:
    row = conn.execute("SELECT commit_id, tree, machine, version, layout FROM body_pins WHERE store = ? AND "
                       "machine = ?", (store, machine)).fetchone()
    return Snapshot(row[0], row[1], row[2], "bodies", row[3], row[4]) if row else None


def _accept(conn: sqlite3.Connection, repo: Repo, old: Snapshot | None, new: Snapshot,
            added: dict[str, str], removed: set[str], own: bool) -> None:
    """Move the pin of ``new.machine`` to ``new`` and the body locations with it (``own``: ``new`` is the
    repository's own ``refs/hive/bodies/<machine>``, which needs no pinned copy)."""
    store = repo.path
    try:
        more, fewer = bodies.changes(repo, old, new)
    except KeyError:  # the old snapshot's trees are gone (its pin was dropped for a retracted body): list anew
        more = dict(bodies.entries(repo, new.tree, new.layout))
        fewer = {h for (h,) in conn.execute("SELECT body_hash FROM body_locations WHERE store = ? AND machine = ?",
                                            (store, new.machine))} - more.keys()
    _note_dropped(conn, store, new.machine, fewer)
    conn.executemany("DELETE FROM body_locations WHERE body_hash = ? AND store = ? AND machine = ?",
                     [(h, store, new.machine) for h in fewer])
    conn.executemany("INSERT OR REPLACE INTO body_locations VALUES (?,?,?,?)",
                     [(h, store, new.machine, blob) for h, blob in more.items()])
    added.update(more)
    removed.update(fewer)
    conn.execute("INSERT OR REPLACE INTO body_pins VALUES (?,?,?,?,?,?)",
                 (store, new.machine, new.commit, new.tree, new.layout, new.version))
    name = refs.pinned_bodies_ref(new.machine)
    if own:  # the repository's own ref keeps its snapshot reachable; an older pin would keep old bodies
        if refs.tip(repo, name) is not None:
            refs.delete(repo, name)
            conn.execute("DELETE FROM body_sources WHERE store = ? AND ref = ?", (store, name))
        return
    if refs.tip(repo, name) != new.commit:
        refs.force_set(repo, name, new.commit, "gitive: pin accepted body snapshot")
    # Recorded as read, like a pinned log: the fast no-op sync compares every hive ref with a cursor.
    conn.execute("INSERT INTO cursors(store, ref, tip, seq) VALUES (?,?,?,0) ON CONFLICT(store, ref) "
                 "DO UPDATE SET tip = excluded.tip", (store, name, new.commit))
    conn.execute("INSERT OR REPLACE INTO body_sources VALUES (?,?,?,?,?,NULL)",
                 (store, name, new.commit, new.machine, new.version))


def _judge(conn: sqlite3.Connection, repo: Repo, team_id: str, machine: str,
           moved: list[tuple[str, str]], added: dict[str, str], removed: set[str]) -> None:
    """Judge the moved refs of one machine's store, newest version first, against the accepted pin."""
    store = repo.path
    pin = _pin(conn, store, machine)
    judged: list[tuple[str, str, Snapshot]] = []
    for ref, tip in moved:
        try:
            judged.append((ref, tip, snapshots.check(repo, team_id, "bodies", machine, tip)))
        except InvalidRecord as exc:
            conn.execute("INSERT OR REPLACE INTO body_sources VALUES (?,?,?,?,NULL,?)",
                         (store, ref, tip, machine, f"refused: {exc}"))
    for ref, tip, snap in sorted(judged, key=lambda j: (-j[2].version, _priority(j[0]))):
        why = snapshots.refusal(pin, snap)
        if why is None and (pin is None or snap.commit != pin.commit):
            _accept(conn, repo, pin, snap, added, removed, ref.startswith(BODIES_REF_PREFIX))
            pin = snap
        conn.execute("INSERT OR REPLACE INTO body_sources VALUES (?,?,?,?,?,?)",
                     (store, ref, tip, machine, snap.version, why and f"older: {why}"))


def refresh_locations(conn: sqlite3.Connection, stores: list[Repo], team_id: str
                      ) -> tuple[dict[str, str], set[str]]:
    """Judge every body snapshot ref that moved since last time; return bodies that became available
    (hash -> blob id) and hashes some accepted snapshot dropped."""
    added: dict[str, str] = {}
    removed: set[str] = set()
    for repo in stores:
        store = repo.path
        known = dict(conn.execute("SELECT ref, tip FROM body_sources WHERE store = ?", (store,)).fetchall())
        current = {name: tip for name, tip in refs.tips(repo, "refs/").items() if body_ref_machine(name)}
        gone = [(store, name) for name in known.keys() - current.keys()]
        conn.executemany("DELETE FROM body_sources WHERE store = ? AND ref = ?", gone)
        by_machine: dict[str, list[tuple[str, str]]] = {}
        for name, tip in current.items():
            if known.get(name) != tip:
                by_machine.setdefault(body_ref_machine(name) or "", []).append((name, tip))
        for machine, moved in sorted(by_machine.items()):
            _judge(conn, repo, team_id, machine, moved, added, removed)
    return added, removed


def _chunks(items: Iterable[str]) -> Iterable[list[str]]:
    batch: list[str] = []
    for item in items:
        batch.append(item)
        if len(batch) == _CHUNK:
            yield batch
            batch = []
    if batch:
        yield batch


def _wanting(conn: sqlite3.Connection, hashes: Iterable[str]) -> set[tuple[str, str]]:
    """(hash, lesson) for each of ``hashes`` that a lesson header or a review's edit names, or that an opened
    sealed record names under that sealed name."""
    out: set[tuple[str, str]] = set()
    for batch in _chunks(hashes):
        marks = ",".join("?" * len(batch))
        out.update(conn.execute(f"SELECT body_hash, id FROM lessons WHERE body_hash IN ({marks})", batch))
        out.update(conn.execute(f"SELECT edits, about FROM reviews WHERE edits IN ({marks})", batch))
        out.update(sealed.wanted_by_names(conn, batch))
    return out


def _wanted_by(conn: sqlite3.Connection, lessons: Iterable[str]) -> set[tuple[str, str]]:
    """(hash, lesson) for the bodies and reviewers' edits of ``lessons``."""
    out: set[tuple[str, str]] = set()
    for batch in _chunks(lessons):
        marks = ",".join("?" * len(batch))
        out.update(conn.execute(f"SELECT body_hash, id FROM lessons WHERE id IN ({marks})", batch))
        out.update(conn.execute(f"SELECT edits, about FROM reviews WHERE about IN ({marks}) AND edits IS NOT NULL",
                                batch))
    return out


def _retracted(conn: sqlite3.Connection, lesson: str) -> bool:
    return conn.execute("SELECT 1 FROM tombstones WHERE lesson = ? AND applied = 1 LIMIT 1", (lesson,)).fetchone() \
        is not None


def _load(conn: sqlite3.Connection, repos: dict[str, Repo], hash_: str, lesson: str,
          keyring: sealed.Keyring | None = None) -> bool:
    """Load ``hash_`` for ``lesson`` from any location whose blob really hashes to it (or, with ``keyring``,
    whose sealed blob opens to a body that does); true if loaded."""
    for store, blob in conn.execute("SELECT store, blob FROM body_locations WHERE body_hash = ?", (hash_,)):
        repo = repos.get(store)
        data = objects.blob_data(repo, blob, MAX_BODY_BYTES) if repo is not None else None
        if data is not None and _keep(conn, hash_, lesson, data):
            return True
    if keyring is not None:
        data = sealed.load_body(conn, repos, hash_, lesson, keyring)
        return data is not None and _keep(conn, hash_, lesson, data)
    return False


def _keep(conn: sqlite3.Connection, hash_: str, lesson: str, data: bytes) -> bool:
    """Store ``data`` as the body ``hash_`` of ``lesson`` if it is one; a body that does not match its signed
    hash is ignored (another location may match)."""
    try:
        value = parse_body(data)
    except InvalidRecord:
        return False
    if body_hash(lesson, value) != hash_:
        return False
    conn.execute("INSERT OR IGNORE INTO lesson_bodies(body_hash, lesson, text, applicability, quote, symptoms) "
                 "VALUES (?,?,?,?,?,?)",
                 (hash_, lesson, value["text"], value["applicability"],
                  json.dumps(value["quote"]) if value["quote"] else None,
                  json.dumps(value["symptoms"]) if value.get("symptoms") else None))
    return True


def _forget_unserved(conn: sqlite3.Connection, removed: set[str]) -> set[str]:
    """Bodies no accepted snapshot serves any more leave the index too (as a rebuild would find them)."""
    gone: set[str] = set()
    for batch in _chunks(removed):
        marks = ",".join("?" * len(batch))
        rows = conn.execute(f"SELECT body_hash, lesson FROM lesson_bodies WHERE body_hash IN ({marks}) AND "
                            f"body_hash NOT IN (SELECT body_hash FROM body_locations WHERE body_hash IN ({marks}))",
                            batch + batch).fetchall()
        for hash_ in sealed.unserved(conn, batch):  # a sealed body, stored under its sealed name
            rows += conn.execute("SELECT body_hash, lesson FROM lesson_bodies WHERE body_hash = ?", (hash_,)).fetchall()
        for hash_, lesson in rows:
            drop_text_of_body(conn, hash_)  # its search rows are deleted by what they indexed: this body
            conn.execute("DELETE FROM lesson_bodies WHERE body_hash = ?", (hash_,))
            gone.add(lesson)
    return gone


def attach_bodies(conn: sqlite3.Connection, stores: list[Repo], team_id: str,
                  touched: set[str] | None = None, keyring: sealed.Keyring | None = None) -> set[str]:
    """Follow moved body snapshots and load the bodies the index lacks; return lessons whose text changed.

    Only what changed is looked at: bodies that just became available, and the bodies and edits of
    ``touched`` lessons (every lesson when None). An edit of a retracted lesson, even one that arrives
    after the tombstone, is refused rather than loaded. Sealed bodies are opened with ``keyring``.
    """
    added, removed = refresh_locations(conn, stores, team_id)
    changed = _forget_unserved(conn, removed)
    if touched is None:
        touched = {r[0] for r in conn.execute("SELECT id FROM lessons")}
    wanted = _wanting(conn, added) | _wanted_by(conn, touched)
    have = set()
    for batch in _chunks({h for h, _ in wanted}):
        marks = ",".join("?" * len(batch))
        have.update(conn.execute(f"SELECT body_hash, lesson FROM lesson_bodies WHERE body_hash IN ({marks})", batch))
        have.update(conn.execute(f"SELECT body_hash, lesson FROM refused_bodies WHERE body_hash IN ({marks})", batch))
    repos = {repo.path: repo for repo in stores}
    for hash_, lesson in sorted(wanted - have):
        if _retracted(conn, lesson):
            conn.execute("INSERT OR IGNORE INTO refused_bodies VALUES (?, ?)", (hash_, lesson))
        elif _load(conn, repos, hash_, lesson, keyring):
            changed.add(lesson)
    return changed


class Missing(NamedTuple):
    """A body a verified header wants that no accepted snapshot serves, and a refused snapshot that has it."""

    body_hash: str
    lesson: str
    ref: str
    reason: str


def missing_bodies(conn: sqlite3.Connection, stores: list[Repo]) -> list[Missing]:
    """Wanted bodies found only in a snapshot this reader refused (for ``doctor``; a full scan)."""
    rows = conn.execute(
        "SELECT body_hash, id FROM lessons WHERE body_hash NOT IN (SELECT body_hash FROM lesson_bodies) "
        "UNION SELECT edits, about FROM reviews WHERE edits IS NOT NULL "
        "AND edits NOT IN (SELECT body_hash FROM lesson_bodies)").fetchall()
    refused = {(h, lesson) for h, lesson in conn.execute("SELECT body_hash, lesson FROM refused_bodies")}
    repos = {repo.path: repo for repo in stores}
    sources = conn.execute("SELECT store, ref, tip, refused FROM body_sources WHERE refused IS NOT NULL").fetchall()
    out = []
    for hash_, lesson in rows:
        if (hash_, lesson) in refused or not bodies.is_body_hash(hash_):
            continue
        for store, ref, tip, reason in sources:
            repo = repos.get(store)
            if repo is not None and _holds(repo, tip, hash_):
                out.append(Missing(hash_, lesson, ref, reason))
                break
    return out


def _holds(repo: Repo, tip: str, hash_: str) -> bool:
    """Whether the (refused, so unverified) commit ``tip`` has ``hash_`` in either layout."""
    tree = objects.commit_tree(repo, tip)
    try:
        return tree is not None and any(bodies.locate(repo, tree, layout, hash_) is not None
                                        for layout in (snapshots.FANOUT, snapshots.FLAT))
    except (KeyError, ValueError, AttributeError):
        return False


def refused_snapshots(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """(ref, tip, reason) of body snapshots refused as unsigned, a stranger's or malformed (not merely older)."""
    return [tuple(r) for r in conn.execute(
        "SELECT ref, tip, refused FROM body_sources WHERE refused LIKE 'refused:%' ORDER BY ref")]


def drop_own_bodies(stores: list[Repo], key: object, team_id: str, me: str,
                    hashes: list[str] | None = None, conn: sqlite3.Connection | None = None) -> int:
    """Remove refused bodies (``hashes``, or every refused one in ``conn``) from this machine's own body
    stores, so the next push drops them from the remote too; return how many stores changed.

    From ``conn``, a body is dropped only when it really is a body of the lesson it was refused for, so a
    tombstone naming another lesson's hash cannot make this machine delete that lesson's body.
    """
    pairs: list[tuple[str, str | None]]
    if hashes is None:
        assert conn is not None
        pairs = [(h, lesson) for h, lesson in conn.execute("SELECT body_hash, lesson FROM refused_bodies")]
    else:
        pairs = [(h, None) for h in hashes]
    if conn is not None:  # sealed bodies are stored under their sealed names (only ours: we named them)
        pairs += sealed.own_names(conn, me, pairs)
    changed = 0
    for repo in stores:
        gone = [h for h, lesson in pairs if bodies.is_body_hash(h) and _owns(repo, me, h, lesson)]
        if gone and bodies.delete(repo, key, team_id, gone):  # type: ignore[arg-type]
            changed += 1
    return changed


def _owns(repo: Repo, me: str, hash_: str, lesson: str | None) -> bool:
    data = bodies.get(repo, me, hash_)
    if data is None or lesson is None:
        return data is not None
    try:
        return body_hash(lesson, parse_body(data)) == hash_
    except InvalidRecord:
        return True  # not a lesson body at all: nothing worth keeping under a refused hash


def _note_dropped(conn: sqlite3.Connection, store: str, machine: str, hashes: set[str]) -> None:
    """Remember, for this connection, the blobs of bodies a newer snapshot dropped: if one of them turns out to
    be refused (the tombstone may come in the same fetch), ``drop_refused_copies`` purges it from disk."""
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS dropped_blobs(store TEXT NOT NULL, body_hash TEXT NOT NULL, "
                 "blob TEXT NOT NULL, PRIMARY KEY(store, body_hash, blob))")
    for batch in _chunks(hashes):
        marks = ",".join("?" * len(batch))
        conn.execute(f"INSERT OR IGNORE INTO temp.dropped_blobs SELECT store, body_hash, blob FROM body_locations "
                     f"WHERE store = ? AND machine = ? AND body_hash IN ({marks})", [store, machine, *batch])


def _dropped_refused(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """The blobs of refused bodies that a snapshot dropped during this connection (then forgotten)."""
    if not conn.execute("SELECT 1 FROM temp.sqlite_schema WHERE name = 'dropped_blobs'").fetchone():
        return {}
    out: dict[str, set[str]] = {}
    for store, blob in conn.execute("SELECT store, blob FROM temp.dropped_blobs WHERE body_hash IN "
                                    "(SELECT body_hash FROM refused_bodies)"):
        out.setdefault(store, set()).add(blob)
    conn.execute("DELETE FROM temp.dropped_blobs")
    return out


def drop_refused_copies(conn: sqlite3.Connection, stores: list[Repo], machines: set[str] | None = None
                        ) -> dict[str, set[str]]:
    """Delete every fetched or pinned body snapshot of another machine that still holds a refused body, and
    return the blobs of those bodies per store (for ``maintenance.purge``).

    The author drops a retracted body from its own store at its next sync, but until then the copy a reader
    fetched, and the pin that keeps it reachable, would keep the text on this disk; and a snapshot that dropped
    it leaves its blob behind as garbage. Both go now. The accepted version stays
    in ``body_pins``, so a replayed older snapshot is still refused; bodies already read stay in the index,
    and the machine's next snapshot is read in full (``_accept``). Only the snapshots of ``machines`` are
    looked at (every machine's when None: a tombstone was just applied).
    """
    refused = [h for (h,) in conn.execute("SELECT body_hash FROM refused_bodies") if bodies.is_body_hash(h)]
    out = _dropped_refused(conn)
    for repo in stores if refused else []:
        for name, tip in refs.tips(repo, "refs/").items():
            machine = body_ref_machine(name)
            if machine is None or name.startswith(BODIES_REF_PREFIX) or (machines is not None
                                                                          and machine not in machines):
                continue  # not a body store, this repository's own (rewritten by drop_own_bodies), or unmoved
            held = _refused_blobs(repo, tip, refused)
            if held:
                refs.delete(repo, name)
                for table in ("body_sources", "cursors"):
                    conn.execute(f"DELETE FROM {table} WHERE store = ? AND ref = ?", (repo.path, name))
                out.setdefault(repo.path, set()).update(held)
    return out


def _refused_blobs(repo: Repo, tip: str, refused: list[str]) -> set[str]:
    tree = objects.commit_tree(repo, tip)
    if tree is None:
        return set()
    found = set()
    for hash_ in refused:
        for layout in (snapshots.FANOUT, snapshots.FLAT):
            try:
                blob = bodies.locate(repo, tree, layout, hash_)
            except (KeyError, ValueError, AttributeError):
                blob = None
            if blob is not None:
                found.add(str(blob))
    return found
