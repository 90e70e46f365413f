"""Evidence a lesson cites: a commit, a file at a commit, an event, a message, an approval.

Each item carries a digest of what it points at, so a reader can tell later that the evidence drifted. Where
the evidence is reachable in git, its text is also what a quote must be found in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core.ids import blake3_hex
from gitive.errors import InvalidRecord

if TYPE_CHECKING:
    import pygit2

KINDS = ("commit", "file", "event", "message", "approval")
USAGE = "cite evidence as commit:REV, file:PATH[@REV], event:ID, message:ID or approval:ID"


class Resolved(NamedTuple):
    item: dict[str, Any]
    text: str | None  # what a quote may be checked against; None when not reachable here


def resolve(repo: pygit2.Repository | None, spec: str) -> Resolved:
    """Turn ``kind:ref`` into an evidence item with its digest.

    Raises:
        InvalidRecord: an unknown kind, or a commit or file that is not there.
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
        return Resolved(item, found.text)
    if kind == "file":
        assert repo is not None
        path, _, rev = ref.partition("@")
        from gitive.store import objects

        at = objects.file_at(repo, path, rev or "HEAD")
        item = {"kind": "file", "ref": f"{at.commit}:{path}", "path": path, "blob": at.blob,
                "digest": blake3_hex(at.data)}
        return Resolved(item, at.data.decode("utf-8", "replace"))
    # Events, messages and approvals resolve through later features; the digest pins the reference itself.
    return Resolved({"kind": kind, "ref": ref, "digest": blake3_hex(f"{kind}:{ref}".encode())}, None)


def files(evidence: list[dict[str, Any]]) -> list[str]:
    """Paths a lesson's evidence names (file evidence), for overlap with the files a session touches."""
    return sorted({e["path"] for e in evidence if e.get("kind") == "file" and e.get("path")})


def check_items(evidence: Any) -> None:
    """Shape check of evidence read from a peer (the write path builds items with :func:`resolve`)."""
    if not isinstance(evidence, list) or not evidence:
        raise InvalidRecord("a lesson needs evidence: cite or omit")
    for item in evidence:
        if (not isinstance(item, dict) or item.get("kind") not in KINDS or not isinstance(item.get("ref"), str)
                or not isinstance(item.get("digest"), str) or len(item["digest"]) != 64):
            raise InvalidRecord(f"malformed evidence item {item!r:.80}")


def stale(repo: pygit2.Repository, evidence: list[dict[str, Any]]) -> list[str]:
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
