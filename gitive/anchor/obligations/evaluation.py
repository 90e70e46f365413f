"""Evaluating the open obligations' conditions over a batch of events, three ways.

An event is converted to CEL once and evaluated only against the conditions the dispatch index says could match
it; a condition is never satisfied by an event older than the obligation itself. The first event that makes a
condition true satisfies it; an error is kept as the reason it is unverifiable, and never fires.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitive.anchor.obligations import conditions
from gitive.anchor.obligations.events import longest_list
from gitive.anchor.obligations.records import static_reason


def value_at(event: dict[str, Any], path: str) -> Any:
    node: Any = event
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


@dataclass
class Results:
    satisfied: dict[str, dict[str, Any]] = field(default_factory=dict)  # obligation -> the event
    errors: dict[str, str] = field(default_factory=dict)  # obligation -> why it is unverifiable
    evaluations: int = 0


class Evaluator:
    """The compiled conditions of a set of open obligations, indexed for dispatch (built once, reused)."""

    def __init__(self, obligations: list[dict[str, Any]], watchers: set[str]) -> None:
        self.obligations = {ob["id"]: ob for ob in obligations}
        self.compiled: dict[str, conditions.Compiled] = {}
        self.static: dict[str, str] = {}  # obligation -> why no event it waits for can reach this anchor
        self.dispatch = conditions.Dispatch()
        for ob in obligations:
            try:
                compiled = conditions.compile_condition(ob["condition"])
            except conditions.ConditionError as exc:
                self.static[ob["id"]] = f"the condition cannot be evaluated: {exc}"
                continue
            reason = static_reason(compiled.analysis, watchers)
            if reason:
                self.static[ob["id"]] = reason
                continue
            self.compiled[ob["id"]] = compiled
            self.dispatch.add(ob["id"], compiled.analysis)

    def run(self, batch: list[dict[str, Any]], done: set[str]) -> Results:
        """Evaluate ``batch`` (in order) against every obligation not in ``done`` (already fired)."""
        from celpy.adapter import json_to_cel

        out = Results()
        for event in batch:
            action = event["event"]["action"]
            keys = [k for k in self.dispatch.candidates(action, lambda p, e=event: value_at(e, p))
                    if k not in done and k not in out.satisfied
                    and self.obligations[k]["created"] <= event["ts"] < self.obligations[k]["expires"]]
            if not keys:
                continue
            cel, longest = json_to_cel(event), longest_list(event)
            for key in keys:
                out.evaluations += 1
                outcome = conditions.evaluate(self.compiled[key], cel, longest)
                if outcome.matched:
                    out.satisfied[key] = event
                elif outcome.error:
                    out.errors[key] = f"evaluation failed on a {action} event: {outcome.error}"
        return out
