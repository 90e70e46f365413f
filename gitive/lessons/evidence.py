"""Evidence a lesson cites: a commit, a file at a commit, an event, a message, an approval.

Each item carries a digest of what it points at, so a reader can tell later that the evidence drifted. Where
the evidence is reachable, its text is also what a quote must be found in. Every item must exist and be this
machine's to cite: a commit or file in the repository; an event in this machine's own event log; a verified
message this machine sent or received; a verified approving review. Nothing made up passes as evidence.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core.ids import blake3_hex
from gitive.errors import InvalidRecord
from gitive.index.queries import VERIFIED

if TYPE_CHECKING:
    from gitive.store.types import Repo


KINDS = ("commit", "file", "event", "message", "approval")
MAX_COMMIT_FILES = 64
USAGE = "cite evidence as commit:REV, file:PATH[@REV], event:ID, message:ID or approval:ID"
_EVENT = re.compile(r"[0-9a-f]{8,32}")  # an event id (32 hex digits, as the event log holds it) or a prefix
_MESSAGE = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")  # a ULID
_COMMIT = re.compile(r"[0-9a-f]{12,64}")  # an entry's commit id, or a prefix as `gitive log` shows it


class Resolved(NamedTuple):
    item: dict[str, Any]
    text: str | None  # what a quote may be checked against; None when not reachable here


def resolve(repo: Repo | None, spec: str, *, conn: sqlite3.Connection | None = None,
            me: str | None = None) -> Resolved:
    """Turn ``kind:ref`` into an evidence item with its digest; ``conn`` (the index) and ``me`` (this
    machine) are what a message or an approval is looked up in.

    Raises:
        InvalidRecord: an unknown kind, or evidence that is not there or not this machine's to cite.
    """
    kind, sep, ref = spec.partition(":")
    if not sep or kind not in KINDS or not ref:
        raise InvalidRecord(f"bad evidence {spec!r}: {USAGE}")
    if kind in ("commit", "file") and repo is None:
        raise InvalidRecord(f"evidence {spec!r} needs a git repository")
    if kind == "commit":
        assert repo is not None
        from gitive.store import objects

        found = objects.commit_text(repo, ref)
        item = {"kind": "commit", "ref": found.commit, "digest": blake3_hex(found.text.encode())}
        if found.files:  # so every reader can match the lesson to those files without the commit itself
            item["files"] = list(found.files[:MAX_COMMIT_FILES])
        return Resolved(item, found.text)
    if kind == "file":
        assert repo is not None
        path, _, rev = ref.partition("@")
        from gitive.store import objects

        at = objects.file_at(repo, path, rev or "HEAD")
        item = {"kind": "file", "ref": f"{at.commit}:{path}", "path": path, "blob": at.blob,
                "digest": blake3_hex(at.data)}
        return Resolved(item, at.data.decode("utf-8", "replace"))
    if kind == "event":
        return _event(spec, ref)
    if conn is None or me is None:
        raise InvalidRecord(f"evidence {spec!r} is looked up in the team's index; none was given")
    return _message(conn, me, spec, ref) if kind == "message" else _approval(conn, spec, ref)


def _event(spec: str, ref: str) -> Resolved:
    """An event of this machine's own log (events never leave it); a prompt's words may be quoted."""
    from gitive.capture import events  # the event log is read above this layer; only its reader is needed

    if not _EVENT.fullmatch(ref):
        raise InvalidRecord(f"bad evidence {spec!r}: an event id is 8 to 32 hex digits, as the event log holds it")
    found = [e for e in events.read() if str((e.get("event") or {}).get("id", "")).startswith(ref)]
    ids = {e["event"]["id"] for e in found}
    if not ids:
        raise InvalidRecord(f"evidence {spec!r}: no such event in this machine's event log "
                            f"({events.events_dir()}); only events recorded here can be cited")
    if len(ids) > 1:
        raise InvalidRecord(f"evidence {spec!r}: {len(ids)} events start with {ref}; give more of the id")
    event = found[-1]
    digest = blake3_hex(json.dumps(events.metadata_only(event), sort_keys=True, separators=(",", ":"),
                                   ensure_ascii=False).encode("utf-8", "backslashreplace"))
    prompt = (event.get("prompt") or {}).get("text")
    return Resolved({"kind": "event", "ref": event["event"]["id"], "digest": digest},
                    prompt if isinstance(prompt, str) else None)


def _message(conn: sqlite3.Connection, me: str, spec: str, ref: str) -> Resolved:
    """A verified message this machine sent or was sent; its body is what a quote is checked against."""
    if not _MESSAGE.fullmatch(ref):
        raise InvalidRecord(f"bad evidence {spec!r}: a message id is 26 characters, as `gitive inbox` shows it")
    rows = conn.execute(VERIFIED + " AND e.kind = 'message' AND e.envelope LIKE ?", (f'%"id":"{ref}"%',))
    for author, *_, envelope, _person, _name in rows:
        record = json.loads(envelope)["body"]["record"]
        if record.get("id") != ref:
            continue
        recipients = {r.get("machine") for r in record.get("recipients") or [] if isinstance(r, dict)}
        if author != me and me not in recipients:
            raise InvalidRecord(f"evidence {spec!r}: that message is between other machines; cite only "
                                "messages this machine sent or received")
        body = str(record.get("body", ""))
        return Resolved({"kind": "message", "ref": ref, "digest": blake3_hex(body.encode())}, body)
    raise InvalidRecord(f"evidence {spec!r}: no verified message with that id here (`gitive inbox` lists this "
                        "machine's; run `gitive sync` if it was sent just now)")


def _approval(conn: sqlite3.Connection, spec: str, ref: str) -> Resolved:
    """A verified, approving review, by the commit of its entry (`gitive log --kind review`)."""
    if not _COMMIT.fullmatch(ref):
        raise InvalidRecord(f"bad evidence {spec!r}: an approval is the commit id of an approving review "
                            "(12 or more hex digits, as `gitive log --kind review` shows it)")
    rows = conn.execute(VERIFIED + " AND e.kind = 'review' AND e.commit_id LIKE ?", (f"{ref}%",)).fetchall()
    approving = [(commit, envelope) for _a, _l, _s, commit, _k, _at, envelope, _p, _n in rows
                 if json.loads(envelope)["body"]["record"].get("approved") is True]
    if len(approving) != 1:
        what = "no verified approving review" if not approving else f"{len(approving)} approving reviews"
        raise InvalidRecord(f"evidence {spec!r}: {what} with that commit id here (`gitive log --kind review` "
                            "lists them)")
    commit = approving[0][0]
    (digest,) = conn.execute("SELECT hash FROM entries WHERE commit_id = ?", (commit,)).fetchone()
    return Resolved({"kind": "approval", "ref": commit, "digest": digest}, None)  # the hash of its signed bytes




def files(evidence: list[dict[str, Any]]) -> list[str]:
    """Paths a lesson's evidence names (file evidence), for overlap with the files a session touches."""
    return sorted({e["path"] for e in evidence if e.get("kind") == "file" and e.get("path")})


def touched(evidence: list[dict[str, Any]]) -> list[str]:
    """Paths a lesson's evidence touches: cited files and the files its cited commits changed."""
    commits = {p for e in evidence if e.get("kind") == "commit" and isinstance(e.get("files"), list)
               for p in e["files"] if isinstance(p, str)}
    return sorted(set(files(evidence)) | commits)


def check_items(evidence: Any) -> None:
    """Shape check of evidence read from a peer (the write path builds items with :func:`resolve`)."""
    if not isinstance(evidence, list) or not evidence:
        raise InvalidRecord("a lesson needs evidence: cite or omit")
    for item in evidence:
        if (not isinstance(item, dict) or item.get("kind") not in KINDS or not isinstance(item.get("ref"), str)
                or not isinstance(item.get("digest"), str) or len(item["digest"]) != 64):
            raise InvalidRecord(f"malformed evidence item {item!r:.80}")


def stale(repo: Repo, evidence: list[dict[str, Any]]) -> list[str]:
    """Cited files whose blob at HEAD differs from the one cited.

    A file absent at HEAD is not called stale here: the reader's checkout may simply not have it yet.
    """
    out = []
    for item in evidence:
        if item.get("kind") != "file" or not item.get("path"):
            continue
        from gitive.store import objects

        now = objects.head_blob(repo, item["path"])
        if now is not None and now != item.get("blob"):
            out.append(item["path"])
    return out
