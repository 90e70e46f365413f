"""Item ids and titles as every reader derives them (docs/gate.md): pure functions over records and keys.

A reader never takes an item's id from the record that claims it (issue 23: a member that could name an id
could take the id of the anchor's next firing and swallow it):

- a session's proposal is ``blake3("item", author, source ref, subject, created)``: it names its author's
  machine, so no member can make another's id;
- an anchor's item is ``blake3("item", source kind, source ref, kind, subject, about)``, with no author and no
  time, so the same item made by two anchors has the same id;
- the fingerprint (the duplicate check's key) is ``blake3("fingerprint", source kind, subject, owner)``.

An anchor's item of format 2 holds no title in the clear: its title is sealed to the machines of the person it
is for and to the anchors, under one fresh key per item (the team store is readable by the whole team).
Below ``store``: used by the index's readers and by the anchor's gate alike.
"""

from __future__ import annotations

from typing import Any

from gitive.core import canonical, sealing
from gitive.core.ids import blake3_hex
from gitive.errors import InvalidRecord

ITEM_VERSION = 2  # the anchor's items: title sealed to its audience, id derived from the content
MAX_TITLE = 140


def cut_title(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= MAX_TITLE else flat[:MAX_TITLE - 1] + "…"


def _id(*parts: Any) -> str:
    """``gitive.core.ids.record_id`` of ``parts``, the same bytes: the parts are strings and integers of a record
    that passed its checks (the gate derives thousands of ids a tick; the recursive check cost more than the
    hash)."""
    try:
        return blake3_hex(canonical.dumps_trusted(list(parts)))
    except (TypeError, ValueError):  # not JSON after all: the checked path raises its own error
        return blake3_hex(canonical.dumps(list(parts)))


def fingerprint(source_kind: str, subject: str, owner: str) -> str:
    return _id("fingerprint", source_kind, subject, owner)


def anchor_item_id(source: dict[str, Any], kind: str, subject: str, about: list[dict[str, str]] | tuple[
        dict[str, str], ...] = ()) -> str:
    """The id of an item an anchor makes: from what it is (never who made it or when), so two anchors agree."""
    cited = sorted(f"{a['kind']}:{a['id']}" for a in about)
    return _id("item", source["kind"], source.get("ref") or "", kind, subject, cited)


def proposal_id(author: str, ref: str, subject: str, created: int) -> str:
    """The id of a session's proposal: it names the author's machine, so no member can take another's id."""
    return _id("item", author, ref, subject, created)


def derived_id(record: dict[str, Any], author: str, anchor: bool) -> str | None:
    """The id a reader gives the ``item`` record ``author`` signed (``anchor``: an anchor machine did), or None
    when it can be no item: a member's record of a source other than a session, or a malformed one."""
    try:
        source, subject = record["source"], str(record["subject"])
        if not anchor:
            if source.get("kind") != "session":
                return None
            return proposal_id(author, str(source.get("ref") or ""), subject, int(record["created"]))
        if record.get("v") is None:
            return str(record["id"])  # format 1, by an anchor: old ledgers name it by the id it was written with
        return anchor_item_id(source, str(record["kind"]), subject, list(record.get("about") or ()))
    except (KeyError, TypeError, AttributeError, ValueError):
        return None


def seal_title(item: str, title: str, author: str, machines: list[str]) -> dict[str, Any]:
    """``title`` of the item ``item`` sealed to ``machines`` (the person's and the anchors'): one fresh key, in a
    SealedBox to each; the box binds the title to the author and the item, so a box copied into another record
    opens as nothing."""
    key = sealing.new_key()
    to = {m: sealing.seal_key_to(m, key) for m in sorted(set(machines))}
    plain = canonical.dumps({"author": author, "item": item, "title": title})
    return {"to": to, "box": sealing.b64(sealing.encrypt(key, plain))}


def open_title(record: dict[str, Any], author: str, machine_key: Any) -> str | None:
    """The title of a format 2 ``item`` record, if ``machine_key``'s machine is one it was sealed to."""
    from gitive.core.keys import machine_id

    sealed = record.get("sealed")
    if not isinstance(sealed, dict) or not isinstance(sealed.get("to"), dict):
        return None
    box = sealed["to"].get(machine_id(machine_key))
    key = sealing.open_any_key(machine_key, box)
    data = sealing.unb64(sealed.get("box"))
    plain = sealing.decrypt(key, data) if key is not None and data is not None else None
    try:
        found = canonical.loads(plain) if plain is not None else None
    except InvalidRecord:
        return None
    if not isinstance(found, dict) or found.get("author") != author or found.get("item") != record.get("id"):
        return None
    title = found.get("title")
    return cut_title(title) if isinstance(title, str) else None


