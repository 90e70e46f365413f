"""Lesson records: a lesson's header, its reviews, its tombstone and the citations of its use (docs/lessons.md).
The body itself lives in the author's body store under ``body_hash``. Each kind's fields, and their size caps."""

from __future__ import annotations

LESSON_KINDS = ("Convention", "Correction", "Gotcha", "Decision", "Routing", "Preference")

FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    # Lessons (header; the body lives in the author's body store under body_hash).
    "lesson": {
        "id": ("hex", True),
        "kind": ("lesson-kind", True),
        "evidence": ("list", True),
        "tags": ("list", True),
        "body_hash": ("hex", True),
        "hearsay": ("bool", True),
        "supersedes": ("hex", False),
        "session": ("str", False),
    },
    "review": {
        "about": ("hex", True),
        "approver": ("name", True),
        "approved": ("bool", True),
        "note": ("str", True),
        "asker": ("str", False),
        "question": ("str", False),
        "scope": ("dict", False),
        "edits": ("hex", False),  # body hash of the reviewer's replacement text, in the reviewer's body store
        "diff_hash": ("str", False),
        "base": ("str", False),
        "gesture": ("gesture", False),
    },
    "tombstone": {"lesson": ("hex", True), "reason": ("str", True), "bodies": ("list", True),
                  "gesture": ("gesture", False)},
    # An agent used a lesson in a session; written once the outcome is known (a day after the session ended).
    "citation": {
        "lesson": ("hex", True),
        "session": ("str", True),
        "success": ("bool", True),
        "tests_passed": ("bool", True),
        "reverted": ("bool", True),
    },
}

CAPS: dict[tuple[str, str], int] = {
    ("review", "note"): 8 * 1024,
    ("review", "question"): 8 * 1024,
    ("tombstone", "reason"): 4 * 1024,
    ("lesson", "evidence"): 32 * 1024,
    ("lesson", "tags"): 4 * 1024,
}
