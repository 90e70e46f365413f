"""What an agent receives: bounded, defanged lesson records, each with a ready-to-paste frame.

Every free-text field that comes from the store (lesson text, applicability, tags, notes, quotes, names) is
cut to a fixed size and passed through :func:`gitive.capture.framing.defang`, so nothing a teammate wrote can
open or close a frame wherever the agent pastes it. Lists are capped too: a tool result never grows with the
size of the team's memory.
"""

from __future__ import annotations

from typing import Any

from gitive.capture.framing import defang, lesson_frame

MAX_PAGE = 20  # results per page, whatever the caller asks for
MAX_TEXT = 1_200  # lesson text, as the write-time rule allows
MAX_APPLICABILITY = 400
MAX_NOTE = 300  # review notes, quotes, retraction reasons
MAX_NAME = 80  # people, machines, tags, harness names, paths in lists
MAX_LIST = 10  # tags, files, evidence items, reviews per lesson
MAX_QUERY = 2_000  # characters of a query or task kept
MAX_FILES = 32  # file paths taken from a caller


LABEL_PROPOSED = "proposed — not reviewed"
LABEL_HELD = "held — not reviewed, no answer in 24 h"
LABEL_HYPOTHESIS = "hypothesis — learned in another project"


def cut(text: str | None, limit: int) -> str:
    """``text`` defanged and at most ``limit`` characters (an ellipsis marks a cut)."""
    if not text:
        return ""
    clean = defang(text)  # NFC-normalized; text with nothing bracket-like comes back at once
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def names(values: Any, limit: int = MAX_LIST) -> list[str]:
    """A short list of short, defanged strings (tags, paths, people)."""
    if not isinstance(values, list | tuple):
        return []
    return [cut(str(v), MAX_NAME) for v in values[:limit]]


def page_size(limit: int) -> int:
    return max(1, min(int(limit), MAX_PAGE))


def clean_files(files: list[str] | None) -> list[str]:
    """Caller-given paths: stripped, relative spelling kept, duplicates and empties dropped, capped."""
    found = (f.replace("\\", "/").strip().removeprefix("./") for f in files or [])
    return list(dict.fromkeys(f for f in found if f))[:MAX_FILES]


def label(lesson: dict[str, Any], project: str | None) -> str | None:
    """The caution shown with a lesson that is not plain verified memory of this project."""
    if lesson.get("label") is not None or "hypothesis" in lesson:
        return lesson.get("label")
    labels = {"proposed": [LABEL_PROPOSED], "held": [LABEL_HELD]}.get(lesson["state"], [])
    if lesson["scope"] == "project" and project and lesson.get("project") not in (None, project):
        labels.append(LABEL_HYPOTHESIS)
    return "; ".join(labels) or None


def frame(lesson: dict[str, Any]) -> str:
    """The ``<team-memory>`` frame of a shaped lesson; stale cited files are named after the closing tag, so
    the lesson's own text cannot imitate that line."""
    body = lesson["text"]
    if lesson["applicability"]:
        body += f"\n(Applies when: {lesson['applicability']})"
    extra = {"kind": lesson["kind"], "by": lesson["author"], "age-days": f"{lesson['age_days']:g}"}
    if lesson["label"]:
        extra["label"] = lesson["label"]
    text = lesson_frame(lesson["id"], lesson["scope"], lesson["reviewer"], lesson["verified"], body, extra)
    if lesson["stale"]:
        text += ("\nCited files changed since this lesson was written: "
                 f"{', '.join(lesson['stale'])}. Check before relying on it.")
    return text


def lesson(found: dict[str, Any], project: str | None = None) -> dict[str, Any]:
    """A lesson as a tool returns it: state and provenance, bounded defanged texts, and its frame.

    ``found`` is a record from :func:`gitive.lessons.recall.search` (author under ``origin``) or
    :func:`gitive.lessons.catalog.get` (under ``author``).
    """
    state = found["state"]
    out: dict[str, Any] = {
        "id": found["id"],
        "kind": found["kind"],
        "state": state,
        "verified": state == "verified",
        "scope": found["scope"],
        "author": cut(found.get("origin") or found.get("author"), MAX_NAME),
        "reviewer": cut(found.get("reviewer"), MAX_NAME) or None,
        "age_days": found["age_days"],
        "label": label(found, project),
        "text": cut(found.get("text"), MAX_TEXT),
        "applicability": cut(found.get("applicability"), MAX_APPLICABILITY),
        "tags": names(found.get("tags")),
        "files": names(found.get("files") or _evidence_files(found.get("evidence"))),
        "stale": names(found.get("stale")),
    }
    if "reasons" in found:
        out["score"] = found.get("score")
        out["reasons"] = names(found["reasons"], 5)
    out["frame"] = frame(out) if out["text"] else None
    return out


def summary(shaped: dict[str, Any], width: int = 140) -> str:
    """One line about a shaped lesson: id prefix, kind, provenance, first line of the text."""
    first = shaped["text"].strip().splitlines()[0] if shaped["text"].strip() else "(no text here)"
    if len(first) > width:
        first = first[: width - 1] + "…"
    who = f"by {shaped['author']}" + (f", reviewed by {shaped['reviewer']}" if shaped["reviewer"] else "")
    caution = f" [{shaped['label']}]" if shaped["label"] else ""
    return f"{shaped['id'][:12]} {shaped['kind']} ({who}){caution}: {first}"


def _evidence_files(evidence: Any) -> list[str]:
    if not isinstance(evidence, list):
        return []
    return sorted({e["path"] for e in evidence
                   if isinstance(e, dict) and e.get("kind") == "file" and e.get("path")})


def evidence(items: Any) -> list[dict[str, Any]]:
    """Evidence items, bounded: kind, what they point at, and the path of cited files."""
    out = []
    for item in (items if isinstance(items, list) else [])[:MAX_LIST]:
        entry = {"kind": cut(str(item.get("kind", "")), MAX_NAME),
                 "ref": cut(str(item.get("ref", "")), MAX_NAME)}
        if item.get("path"):
            entry["path"] = cut(str(item["path"]), MAX_NAME)
        out.append(entry)
    return out
