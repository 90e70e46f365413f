"""The anchor's tick in words: what one tick did, for its log (``anchor.log``) and ``gitive anchor run``.

A person reading the log should see the work, not counters: the events it read by source, what fired, each
prepared task's step (drafted and pushed, landed, gone stale), speculative merges, rescues, the gate's
decisions and what was pushed.
"""

from __future__ import annotations

from typing import Any

from gitive.anchor.base.context import TickReport

_SOURCES = {"log": "log entries", "ref": "ref movements", "presence": "presence changes",
            "watcher": "watcher lines", "clock": "clock checks"}
PREPARED_WORDS = {"running": "started on a clean worktree", "drafted": "drafted, tested and pushed for review",
             "landed": "landed", "proposed": "proposed (the configured command ran)",
             "stale": "gone stale (its base moved; prepared again)", "failed": "failed",
             "over-budget": "stopped at its budget", "question": "waiting for its owner's answer",
             "refused": "refused (outside what the anchor may do)"}


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def _events(report: TickReport) -> list[str]:
    total = sum(report.events.values())
    if not total:
        return []
    by = ", ".join(f"{n} {_SOURCES.get(k, k)}" for k, n in sorted(report.events.items(), key=lambda kv: -kv[1]))
    return [f"{_plural(total, 'new event')} ({by})"]


def _fired(report: TickReport) -> list[str]:
    out = []
    for item in report.fired:
        late = ", late" if item["late"] else ""
        out.append(f"fired {item['kind']} {item['obligation'][:12]} for {item['owner']}{late}: "
                   f"{item['action'][:60]}")
    out += [f"obligation {v['obligation'][:12]} is now {v['value']} ({v['reason'][:80]})" for v in report.verdicts]
    return out


def _prepared(report: TickReport) -> list[str]:
    return [f"task {p['task'][:12]} {PREPARED_WORDS.get(p['state'], p['state'])}" for p in report.prepared]


def _merges(merges: dict[str, Any]) -> list[str]:
    if not merges:
        return []
    failed = merges.get("failures", 0)
    return [f"speculative merges: {_plural(merges.get('pairs', 0), 'pair')} of pushed branches checked, "
            f"{merges.get('merged', 0)} merged and tested, {failed} failing together"
            + (" (their sessions were told)" if failed else "")]


def _gate(gate: dict[str, Any]) -> list[str]:
    decided = gate.get("decided") or {}
    if not decided:
        return []
    by = ", ".join(f"{n} {branch}" for branch, n in sorted(decided.items()))
    return [f"gate: {_plural(sum(decided.values()), 'item')} decided ({by}), {gate.get('delivered', 0)} to deliver"]


def describe(report: TickReport) -> str | None:
    """One line of words for a tick that did something (None for an idle one)."""
    if report.idle and not report.unreachable and not report.problems:
        return None
    parts = [f"{_plural(report.received, 'new entry', 'new entries')} ingested"] if report.received else []
    parts += _events(report)
    if report.evaluations:
        parts.append(_plural(report.evaluations, "condition evaluation"))
    parts += _fired(report) + _prepared(report) + _merges(report.merges)
    if report.rescued:
        parts.append(f"{_plural(report.rescued, 'stuck session')} pointed at what the team already knows")
    parts += _gate(report.gate)
    if report.pushed:
        parts.append(f"pushed {_plural(report.pushed, 'ref')}")
    parts += [f"{r} unreachable: {why}" for r, why in report.unreachable.items()]
    parts += [f"{source}: {why}" for source, why in report.problems.items()]
    return "; ".join(parts) or "nothing new"
