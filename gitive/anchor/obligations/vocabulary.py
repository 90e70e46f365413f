"""The one event vocabulary conditions are written against (``events.json``, also ``refs_schema/events.json``).

A condition means the same on every machine only if every machine names events the same way, so the field
names and actions live in one data file beside this loader, and a condition naming anything outside it is
refused when it is written, with the closest known spelling suggested.
"""

from __future__ import annotations

import difflib
import json
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

PATH = Path(__file__).with_name("events.json")
SHARED, LOCAL, WATCHER = "shared", "local", "watcher"


class Action(NamedTuple):
    name: str
    source: str  # log | ref | presence | clock | local | watcher
    seen: str  # shared | local | watcher
    record: str | None  # the record kind a log event comes from ("*": any other kind)
    doc: str


class Vocabulary(NamedTuple):
    version: int
    fields: dict[str, dict[str, Any]]
    actions: dict[str, Action]
    watcher_prefix: str
    suggestions: dict[str, str]

    def field_known(self, path: str) -> bool:
        """Whether ``path`` (dotted, without ``e.``) is a field, or a key under an open map such as ``watch.data``."""
        if path in self.fields:
            return True
        parts = path.split(".")
        return any(self.fields.get(".".join(parts[:i]), {}).get("open") for i in range(1, len(parts)))

    def field_type(self, path: str) -> str | None:
        spec = self.fields.get(path)
        return spec["type"] if spec else None

    def action(self, name: str) -> Action | None:
        found = self.actions.get(name)
        if found is None and name.startswith(self.watcher_prefix) and len(name) > len(self.watcher_prefix):
            return Action(name, "watcher", WATCHER, None, "a watcher's event")
        return found

    def suggest_field(self, path: str) -> str | None:
        """The right spelling for ``e.<path>``, as ``e.x.y``, or None."""
        full = f"e.{path}"
        if full in self.suggestions:
            return self.suggestions[full]
        close = difflib.get_close_matches(path, list(self.fields), n=1, cutoff=0.6)
        if not close:  # ``e.branch`` -> ``e.vcs.branch``: match on the last part
            last = path.rsplit(".", 1)[-1]
            close = [f for f in self.fields if f.rsplit(".", 1)[-1] == last]
        return f"e.{close[0]}" if close else None

    def suggest_action(self, name: str) -> str | None:
        if name in self.suggestions:
            return self.suggestions[name]
        close = difflib.get_close_matches(name, list(self.actions), n=1, cutoff=0.6)
        return close[0] if close else None

    def record_action(self, kind: str, record: dict[str, Any]) -> str:
        """The action of a verified log entry holding ``record`` of ``kind``."""
        match kind:
            case "member":
                return "member.joined" if record.get("active") else "member.left"
            case "review":
                return "review.approved" if record.get("approved") else "review.rejected"
            case "ack":
                return "message.read" if record.get("state") == "read" else "message.delivered"
            case "obligation-state":
                return {"done": "obligation.done", "cancelled": "obligation.cancelled"}.get(
                    str(record.get("state")), "obligation.renewed")
        return _BY_KIND.get(kind, "record.written")


_BY_KIND = {"team": "team.named", "invite": "invite.created", "lesson": "lesson.proposed",
            "tombstone": "lesson.retracted", "citation": "lesson.cited", "message": "message.sent",
            "project-member": "project.member", "obligation": "obligation.created", "firing": "obligation.fired",
            "routing": "routing.recorded", "routing-outcome": "routing.outcome"}


@cache
def load() -> Vocabulary:
    """The vocabulary shipped with this version of gitive."""
    data = json.loads(PATH.read_text(encoding="utf-8"))
    actions = {name: Action(name, spec["from"], spec["seen"], spec.get("record"), spec.get("doc", ""))
               for name, spec in data["actions"].items()}
    return Vocabulary(int(data["version"]), data["fields"], actions, data["watcher_prefix"], data["suggest"])
