"""Prepared-work records: tasks handed to the anchor, its steps on them, standing approvals and their states,
and a project's extra Outside paths (docs/prepared.md). Each kind's fields, and their size caps."""

from __future__ import annotations

PREPARED_STATES = ("running", "drafted", "failed", "over-budget", "question", "stale", "landed", "proposed",
                   "refused")
STANDING_STATES = ("suspended", "revoked")

FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    # A task handed to the anchor: by a person (`gitive hand`), a handoff, an obligation or a watcher; in the
    # hander's team log. The anchor's work on it is `prepared` records.
    "task": {
        "id": ("hex", True),  # blake3 of [author, the record without id]
        "repo": ("hex", True),  # project id
        "base": ("dict", True),  # {branch, commit}: what the worker starts from
        "brief": ("str", True),  # the handoff brief, or what to fix (at most 48 KiB)
        "test": ("str", True),  # the test command ("" when there is none)
        "worker": ("name", True),  # a worker named in the anchor's config
        "kind": ("name", True),  # the class of change (standing approvals cover a kind)
        "budget": ("dict", True),  # {wall: seconds, spend?: units}
        "owner": ("name", True),  # who the prepared item goes to
        "created": ("int", True),
        "actor": ("actor", True),
        "source": ("dict", True),  # {kind: hand|handoff|obligation|watcher, ref?}
        "target": ("str", False),  # the branch an approved change lands on (default: the base branch)
        "marker": ("dict", False),  # the handoff marker the sending machine signed
    },
    # The anchor's record of one step of a task (its ledger log): drafted, failed, landed, ...
    "prepared": {
        "task": ("hex", True),
        "state": ("prepared-state", True),
        "attempt": ("int", True),  # 1, then one more per rebase onto a moved base
        "branch": ("str", False),  # refs/heads/hive/<name>
        "head": ("str", False),  # the draft's commit
        "base": ("dict", False),  # {branch, commit} its tests ran on
        "diff_hash": ("str", False),  # blake3 of the exact diff base..head
        "stat": ("dict", False),  # {files, insertions, deletions, paths}
        "tests": ("dict", False),  # {command, before, after}: exit codes
        "fixes": ("list", False),  # failing tests the draft fixes
        "question": ("str", False),  # the worker needs a person's decision
        "reason": ("str", False),
        "review": ("dict", False),  # {author, log, seq}: the review that authorized a landing or proposal
        "standing": ("hex", False),  # or the standing approval that covered it
        "commit": ("str", False),  # what was landed or proposed
    },
    # A standing approval (a person's decision, with a gesture): covered uses need no per-change review.
    "standing-approval": {
        "id": ("hex", True),
        "kind": ("name", True),
        "repo": ("hex", True),
        "perimeter": ("dict", True),  # {paths: [globs], changes: [types], max_lines, checks: [commands]}
        "earned_from": ("list", True),  # [{author, log, seq}] of the reviews that earned it
        "sponsor": ("name", True),
        "expires": ("int", True),
        "created": ("int", True),
        "gesture": ("gesture", False),
    },
    # Suspended (by the anchor, by itself) or revoked (by a person, with a gesture).
    "standing-state": {
        "standing": ("hex", True),
        "state": ("standing-state", True),
        "reason": ("str", True),
        "ref": ("str", False),  # what caused it: a commit, a task
        "gesture": ("gesture", False),
    },
    # More Outside paths for one project: an admin's decision, with a gesture. Paths only grow: every valid
    # record adds its globs, so an old one replayed takes nothing away.
    "outside-paths": {"v": ("format-version", True), "repo": ("hex", True), "paths": ("list", True),
                      "created": ("int", True), "gesture": ("gesture", False)},
}

CAPS: dict[tuple[str, str], int] = {
    ("task", "brief"): 48 * 1024,  # a handoff brief is at most 48 KiB
    ("task", "test"): 2 * 1024,
    ("prepared", "question"): 4 * 1024,
}
