"""Project records: who belongs to a project (granted by its owners) and a project's link from a new id to its
old one (docs/people.md, Projects that move). Each kind's fields."""

from __future__ import annotations

PROJECT_ROLES = ("owner", "member")

FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    "project-member": {
        "project": ("hex", True),
        "person": ("name", True),
        "role": ("project-role", True),
        "confirmed": ("bool", True),
        "gesture": ("gesture", False),
    },
    # A project's new id is also its old one (docs/people.md, Projects that move): an admin's decision, with a
    # gesture. Readers count v1 only; a repository whose remote id is `to` then reads as project `from`.
    "project-link": {"v": ("format-version", True), "from": ("hex", True), "to": ("hex", True),
                     "label": ("str", False), "was": ("str", False), "created": ("int", True),
                     "gesture": ("gesture", False)},
}

CAPS: dict[tuple[str, str], int] = {}
