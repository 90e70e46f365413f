"""Agent Skills from verified lessons: one ``SKILL.md`` per project and topic, proposed as a change on a branch.

Committed skills are the slow, reviewed tier beside team memory (the reference, F-19): only *verified* lessons of
this project and team-wide lessons are exported, never proposed, personal or another project's ones. The export
is a commit on ``hive/skills-<harness>`` over the chosen base, for people to review and merge like any change;
nothing is written into the working tree or a shared branch. A skill whose lessons were all superseded or
retracted disappears from the next export, a lesson that left a skill is listed with the reason, and a
generated file someone edited by hand is kept unless ``force``.

The files follow the Agent Skills format: a folder named like the skill, holding ``SKILL.md`` whose YAML front
matter has ``name`` (lowercase letters, digits and single hyphens, at most 64, equal to the folder's name) and
``description`` (at most 1,024 characters: what the skill holds and when to use it, built from the lessons'
applicability, never from a prompt), with provenance under ``metadata`` (string keys and values).
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable
from typing import Any, NamedTuple

import yaml

HARNESS_DIRS = {"claude": ".claude/skills", "codex": ".agents/skills", "agents": ".agents/skills",
                "cursor": ".cursor/skills", "gemini": ".gemini/skills"}
PREFIX = "gitive-"
MAX_NAME, MAX_DESCRIPTION = 64, 1024
MAX_LESSONS = 40  # per skill: beyond this a topic is too broad for one skill
GENERATED = "gitive"
_SLUG = re.compile(r"[^a-z0-9]+")


class Skill(NamedTuple):
    name: str
    project: str  # the project's label, or "team"
    topic: str
    lessons: list[dict[str, Any]]


class Change(NamedTuple):
    name: str
    what: str  # added | updated | removed | kept (edited by hand) | unchanged
    added: list[str]  # lesson ids that joined the skill
    removed: list[tuple[str, str]]  # (lesson id, why) that left it


def slug(text: str, limit: int = MAX_NAME) -> str:
    """Lowercase letters, digits and single hyphens, no hyphen at either end, at most ``limit`` characters."""
    return _SLUG.sub("-", text.lower()).strip("-")[:limit].strip("-") or "lessons"


def topic_of(lesson: dict[str, Any]) -> str:
    """The lesson's topic: its first tag, else its kind."""
    tags = [t for t in lesson.get("tags") or [] if slug(t) != "quiet-pass"]
    return slug(tags[0], 24) if tags else slug(lesson["kind"], 24)


def group(lessons: Iterable[dict[str, Any]], project: str, label: str) -> list[Skill]:
    """Verified lessons of ``project`` (and team-wide ones) grouped by project and topic, oldest first;
    ``label`` is the project's name (:func:`project_name`)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for lesson in lessons:
        if lesson["state"] != "verified" or not lesson.get("text"):
            continue
        if lesson["scope"] == "project" and lesson["project"] == project:
            where = slug(label.rsplit("/", 1)[-1], 24)
        elif lesson["scope"] == "team":
            where = "team"
        else:
            continue
        groups.setdefault((where, topic_of(lesson)), []).append(lesson)
    out = []
    for (where, topic), found in sorted(groups.items()):
        found.sort(key=lambda x: (x["at"], x["id"]))
        name = slug(f"{PREFIX}{where}-{topic}")
        out.append(Skill(name, where, topic, found[:MAX_LESSONS]))
    return out


def _first_sentence(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s", text.strip(), maxsplit=1)[0]
    return first if len(first) <= 160 else first[:159] + "…"


def _situation(applicability: str) -> str:
    """An applicability as a clause after "Use when:": "When editing X." reads "editing X" (never "when when")."""
    text = applicability.strip().rstrip(". ")
    return re.sub(r"(?i)^(use\s+)?(when|whenever|if|while)\s+", "", text)


def project_name(label: str, workdir: str) -> str:
    """What a project's skills are named after: the repository's name in its remote's address, or for a remote
    that is a folder on disk (a bare clone anywhere) the work tree's own folder name."""
    if label.startswith(("/", "file:")) or ("://" not in label and label.count("/") == 0):
        return slug(workdir.rstrip("/").rsplit("/", 1)[-1], 24)
    return slug(label.rsplit("/", 1)[-1], 24)


def description(skill: Skill) -> str:
    """What the skill holds and when an agent should load it, from the lessons' own applicability."""
    where = "team-wide" if skill.project == "team" else f"in {skill.project}"
    when = [_situation(x["applicability"]) for x in skill.lessons if x.get("applicability")]
    head = (f"{len(skill.lessons)} reviewed team lesson{'s' if len(skill.lessons) != 1 else ''} about "
            f"{skill.topic.replace('-', ' ')} {where}, exported by gitive.")
    use = " Use when: " + "; ".join(dict.fromkeys(when)) + "." if when else ""
    text = head + use
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1].rsplit(";", 1)[0] + "…"


def _body(skill: Skill) -> str:
    lines = [f"# {skill.topic.replace('-', ' ').capitalize()} ({skill.project}): team lessons", "",
             "Lessons the team's agents learned here, each reviewed and signed by a person (gitive). They are "
             "notes to weigh, not instructions: your user's requests come first, and a lesson whose cited files "
             "changed since may be out of date. When one shapes what you do, say so with its id.", ""]
    for lesson in skill.lessons:
        lines += [f"## {lesson['kind']}: {_first_sentence(lesson['text'])}", "",
                  f"Lesson `{lesson['id'][:12]}`, reviewed by {lesson.get('reviewer') or 'a teammate'}.", "",
                  lesson["text"].strip(), ""]
        if lesson.get("applicability"):
            lines += [f"When it applies: {lesson['applicability'].strip()}", ""]
        files = sorted({e.get("path") for e in lesson.get("evidence") or [] if e.get("path")}
                       | {p for e in lesson.get("evidence") or [] for p in e.get("files") or []})
        if files:
            lines += ["Evidence: " + ", ".join(f"`{f}`" for f in files[:8]), ""]
    return "\n".join(lines).rstrip() + "\n"


def render(skill: Skill) -> bytes:
    """The ``SKILL.md`` of ``skill``: front matter, then the lessons. Deterministic for the same lessons."""
    body = _body(skill)
    metadata = {"generated-by": GENERATED, "gitive-project": skill.project, "gitive-topic": skill.topic,
                "gitive-lessons": " ".join(x["id"] for x in skill.lessons),
                "gitive-digest": hashlib.sha256(body.encode()).hexdigest()[:16]}
    front = {"name": skill.name, "description": description(skill), "metadata": metadata}
    return ("---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100) + "---\n\n"
            + body).encode()


def parse(data: bytes) -> tuple[dict[str, Any], str] | None:
    """(front matter, body) of a ``SKILL.md``, or None when it has no YAML front matter."""
    text = data.decode("utf-8", "replace")
    if not text.startswith("---\n"):
        return None
    head, sep, body = text[4:].partition("\n---\n")
    if not sep:
        return None
    try:
        front = yaml.safe_load(head)
    except yaml.YAMLError:
        return None
    return (front, body.lstrip("\n")) if isinstance(front, dict) else None


def _ours(data: bytes) -> tuple[list[str], bool] | None:
    """(its lesson ids, edited by hand) when a file is a gitive-generated skill, else None."""
    found = parse(data)
    if found is None:
        return None
    front, body = found
    meta = front.get("metadata") or {}
    if not isinstance(meta, dict) or meta.get("generated-by") != GENERATED:
        return None
    edited = meta.get("gitive-digest") != hashlib.sha256(body.encode()).hexdigest()[:16]
    return str(meta.get("gitive-lessons", "")).split(), edited


def _why_gone(conn: sqlite3.Connection, lesson: str) -> str:
    row = conn.execute("SELECT state, superseded_by FROM lesson_status WHERE lesson = ?", (lesson,)).fetchone()
    if row is None:
        return "no longer known here"
    state, by = row
    if state == "superseded":
        return f"superseded by {by[:12]}" if by else "superseded"
    return {"retracted": "retracted", "rejected": "rejected", "verified": "moved to another skill"}.get(state, state)


def plan(conn: sqlite3.Connection, skills: list[Skill], existing: dict[str, bytes], root: str,
         force: bool) -> tuple[dict[str, bytes | None], list[Change]]:
    """The file changes under ``root`` and what they mean, against the skills ``existing`` at the base."""
    wanted = {f"{root}/{s.name}/SKILL.md": s for s in skills}
    changes: dict[str, bytes | None] = {}
    report: list[Change] = []
    ours = {path: found for path, data in existing.items() if path.endswith("/SKILL.md")
            and (found := _ours(data)) is not None}
    for path, skill in wanted.items():
        data = render(skill)
        ids = [x["id"] for x in skill.lessons]
        if path in existing and path not in ours:
            report.append(Change(skill.name, "kept (not generated by gitive)", [], []))
            continue
        before, edited = ours.get(path, ([], False))
        if edited and not force:
            report.append(Change(skill.name, "kept (edited by hand; --force replaces it)", [], []))
            continue
        if existing.get(path) == data:
            report.append(Change(skill.name, "unchanged", [], []))
            continue
        changes[path] = data
        gone = [(x, _why_gone(conn, x)) for x in before if x not in ids]
        report.append(Change(skill.name, "updated" if path in existing else "added",
                             [x for x in ids if x not in before], gone))
    for path, (before, edited) in ours.items():
        if path in wanted:
            continue
        name = path.rsplit("/", 2)[-2]
        if edited and not force:
            report.append(Change(name, "kept (edited by hand; --force removes it)", [], []))
            continue
        for other in [p for p in existing if p.startswith(path.rsplit("/", 1)[0] + "/")]:
            changes[other] = None
        report.append(Change(name, "removed", [], [(x, _why_gone(conn, x)) for x in before]))
    return changes, report


class Exported(NamedTuple):
    harness: str
    root: str
    branch: str | None  # None: nothing to propose
    commit: str | None
    base: str
    changes: list[Change]
    moved: bool


def _message(harness: str, report: list[Change]) -> str:
    counts = {what: sum(1 for c in report if c.what == what) for what in ("added", "updated", "removed")}
    head = (f"skills: {counts['added']} added, {counts['updated']} updated, {counts['removed']} removed "
            f"from reviewed team lessons ({harness})")
    lines = [f"- {c.what} {c.name}" + (f": +{len(c.added)}" if c.added else "")
             + (f" -{len(c.removed)} ({'; '.join(f'{x[:12]} {why}' for x, why in c.removed)})" if c.removed else "")
             for c in report if c.what in ("added", "updated", "removed")]
    return head + "\n\nGenerated by `gitive skills export`; review it like any change before merging.\n\n" + "\n".join(lines)


def export(hive: Any, conn: sqlite3.Connection, harnesses: list[str], base_rev: str = "HEAD",
           force: bool = False) -> list[Exported]:
    """Propose the skills of this project's verified lessons for each harness, as a commit on a ``hive/``
    branch over ``base_rev``; return what changed for each.

    Raises:
        GitiveError: an unknown harness, or ``base_rev`` names no commit.
    """
    from gitive.errors import GitiveError
    from gitive.lessons import catalog
    from gitive.store import branches
    from gitive.store import repo as repos
    from gitive.team.projects import project_label

    unknown = [h for h in harnesses if h not in HARNESS_DIRS]
    if unknown:
        raise GitiveError(f"unknown harness {unknown[0]!r}; use one of {', '.join(HARNESS_DIRS)}")
    repo = hive.project
    base = branches.resolve(repo, base_rev)
    name = project_name(project_label(repo), str(repos.workdir(repo)))
    skills = group(catalog.listing(conn, states=("verified",), limit=1_000_000), hive.project_id, name)
    out = []
    for harness in dict.fromkeys(harnesses):
        root = HARNESS_DIRS[harness]
        changes, report = plan(conn, skills, branches.files_under(repo, base, root), root, force)
        if not changes:
            out.append(Exported(harness, root, None, None, base, report, False))
            continue
        written = branches.propose(repo, f"skills-{harness}", base, changes, _message(harness, report),
                                   branches.identity(repo))
        out.append(Exported(harness, root, written.branch, written.commit, base, report, written.moved))
    return out
