"""Floors: items that always reach their owner, whatever the preferences, quiet hours, budget or shadow mode.

Floors are code, not settings: nothing a person sets, a proposer writes or a learned component suggests
changes them. The first (and today only) floor: a *security finding* reaches the code owner. A finding is
something the anchor established itself, never a claim:

- an injection-screening match: the anchor screens every verified message with the same rules the
  recipient's daemon uses (``gitive/daemon/rules``) and makes a ``screening`` item for the recipient;
- an outbound-screening finding: a member machine's ``finding`` record (a session's message or ``curl`` and a
  credential-file read within 120 s, :mod:`gitive.daemon.findings`); the anchor makes its ``screening`` item
  for the person of the machine that wrote it, never for anyone the record names;
- a watcher event marked security: a line of a watcher the anchor runs (its own configuration) with
  ``"security": true``, or an action in the ``security`` group (``watch.scan.security.leak``).

A session's proposal is never a floor, whatever it says: its source kind is ``session``.
"""

from __future__ import annotations

from typing import Any

from gitive.anchor.gate.items import Candidate


def floor(c: Candidate, watch: dict[str, Any] | None) -> str | None:
    """The floor rule ``c`` meets, or None."""
    if c.source.get("kind") == "screening" and c.kind == "security.screening":
        return "floor: security finding (injection screening matched a message to you)"
    if c.source.get("kind") == "screening" and c.kind == OUTBOUND:
        return "floor: security finding (outbound screening: a credential read and an egress in one session)"
    if c.source.get("kind") == "watcher" and watch is not None and is_security(c.kind, watch):
        return f"floor: security finding (watcher {c.source.get('ref', '?')})"
    return None


OUTBOUND = "security.outbound"


def outbound_finding(entry: dict[str, Any], person: str) -> Candidate | None:
    """The candidate a verified ``finding`` entry is, for ``person`` (the writing machine's), or None when the
    record is not one the daemon writes."""
    from gitive.anchor.gate import items

    record = entry["record"]
    ident, session, egress = record.get("id"), record.get("session"), record.get("egress")
    if not all(isinstance(v, str) and v for v in (ident, session, egress)):
        return None
    about = [{"kind": "session", "id": f"{person}/{session}"[:128]}]
    if isinstance(record.get("message"), str):
        about.append({"kind": "message", "id": record["message"][:128]})
    title = (f"outbound screening: your session {person}/{session} read a credential file within 120 s of a "
             f"{egress} leaving it; check what it sent")
    return items.make({"kind": "screening", "ref": str(ident)}, OUTBOUND, f"finding:{ident}", person, title,
                      int(entry["at"]), about=about)


def is_security(kind: str, data: dict[str, Any]) -> bool:
    """A watcher event marked security: ``"security": true`` in its line, or an action in the security group."""
    action = kind.split(".", 2)[-1] if kind.startswith("watch.") else kind
    return data.get("security") is True or action == "security" or action.startswith("security.")


def screen_messages(entries: list[dict[str, Any]]) -> list[tuple[dict[str, Any], list[str]]]:
    """``(message entry, rule ids)`` for each verified message a hold-severity injection rule matches.

    The rules are the daemon's (one rule set, so the anchor and every recipient agree on what a finding is);
    they are data files beside :mod:`gitive.daemon.screening`, loaded here lazily.
    """
    # screen is a pure function (no daemon state); load_rules re-reads the rule files, and compiles and checks
    # only a file whose text changed (screening keeps each rule per path and text)
    from gitive.daemon.screening import load_rules, screen

    rules = load_rules()
    out = []
    for entry in entries:
        record = entry["record"]
        message = {"body": record.get("body"), "from": record.get("from"), "from_person": record.get("from_person"),
                   "kind": "message"}
        matched = [hit.rule for hit in screen(message, rules) if hit.severity == "hold"]
        if matched:
            out.append((entry, matched))
    return out
