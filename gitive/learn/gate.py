"""Scoring drafts: the lesson gate done right (the critique's four fixes, anchor-spec F.2).

- Task success is read from the record: the failing command's last run in the session passed and it did not
  fail again afterwards. No model is asked what the exit code already says.
- Reuse has its own floor: a draft nobody would reuse never passes, however well evidenced.
- Thresholds are parameters; every evaluation is stored (passing or not) under the rubric's hash, and
  :func:`candidates` rebuilds the candidate list from stored scores alone, so moving a threshold costs nothing.
- Scores are integers 0..100. The rubric is a constant: nothing in the loop writes it, and changing one word of
  it changes the hash, so old scores are never silently compared with new ones. Ids never contain scores.

The reuse judgement is the one a model may make (a configured writer command returns it). Without one a
deterministic heuristic stands in, stored under its own scorer name so the two are never mixed up.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Sequence
from typing import Any, NamedTuple

from gitive.learn import pairs, store
from gitive.learn.pairs import Pair

RUBRIC: tuple[tuple[str, str], ...] = (
    ("task_success", "Did the last run of the failing command in the session pass, with no failure after it?"),
    ("evidence", "Does the draft cite the failing run, the edits and the passing run of the same command?"),
    ("reuse", "Is the correction one a future agent in this repository would reuse, rather than a fix specific "
              "to this one task?"),
)
COMPUTED = ("task_success", "evidence")  # read from the record; never asked of a model
RUBRIC_HASH = hashlib.sha256(json.dumps(RUBRIC, separators=(",", ":")).encode()).hexdigest()
HEURISTIC = "heuristic"
_TOOLS = re.compile(r"^(?:python -m |uv run |poetry run |npx |pnpm |yarn |bundle exec )?"
                    r"(?:pytest|tox|nox|npm (?:run )?test|jest|vitest|go test|cargo (?:test|build|check)|make|"
                    r"mypy|ruff|eslint|tsc|mvn|gradle|alembic|rspec|phpunit|dotnet test)\b")
_TEST_FILE = re.compile(r"(?:^|/)(?:tests?/|test_[^/]*$|[^/]*_test\.\w+$|[^/]*\.(?:spec|test)\.\w+$)")


class Thresholds(NamedTuple):
    """When a scored draft becomes a candidate for review; parameters, never constants in the loop."""

    reuse_floor: int = 50  # reuse must reach this on its own before the mean is looked at
    min_mean: int = 60  # then the mean of every rubric score must reach this


def computed(pair: Pair, later: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Task success and evidence, from the events themselves. ``later``: the session's events after the pass."""
    failed_again = any((run := pairs.run_of(e)) is not None and run[0] == pair.command and run[1] != 0 for e in later)
    passed = pairs.run_of(pair.passed)
    parts = [bool(pair.failed), bool(pair.edits), passed is not None and passed[1] == 0]
    return {"task_success": 0 if failed_again or not parts[2] else 100, "evidence": round(100 * sum(parts) / 3)}


def heuristic_reuse(pair: Pair, recurrences: int) -> int:
    """A deterministic stand-in for the reuse judgement when no model scores it (0..100).

    Named error classes and recurring failures make a lesson more likely to help again; a known test or build
    tool makes the failure one the next agent will meet the same way; a fix that only edited tests is more
    often specific to the task.
    """
    score = 40
    score += 20 if pair.error_class and not pair.error_class.startswith("exit ") else 0
    score += 20 if recurrences >= 2 else 0
    score += 10 if _TOOLS.match(pair.command) else 0
    score += 10 if any(not _TEST_FILE.search(f) for f in pair.files) else -20
    return max(0, min(100, score))


def passes(scores: dict[str, int], thresholds: Thresholds) -> bool:
    """Task success is a floor, reuse has its own floor, then the mean must reach ``min_mean``."""
    if any(name not in scores for name, _ in RUBRIC):
        return False
    if scores["task_success"] < 100 or scores["reuse"] < thresholds.reuse_floor:
        return False
    return sum(scores[name] for name, _ in RUBRIC) / len(RUBRIC) >= thresholds.min_mean


def candidates(conn: sqlite3.Connection, thresholds: Thresholds) -> list[str]:
    """The undecided lesson drafts whose stored scores pass ``thresholds`` (no scorer is called)."""
    stored = store.scores(conn, RUBRIC_HASH)
    undecided = [d["id"] for d in store.listing(conn, ("new",)) if d["kind"] == "lesson"]
    return [d for d in undecided if d in stored and passes(stored[d], thresholds)]


def clamp(value: Any) -> int | None:
    """A scorer's answer as an integer score, or None if it is not a number in 0..100."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return round(value) if 0 <= value <= 100 else None
