"""Showing lessons to a person: one line in a list, or the whole record."""

from __future__ import annotations

from typing import Any

from gitive.cli.output import console


def _state(lesson: dict[str, Any]) -> str:
    colour = {"verified": "green", "proposed": "yellow", "held": "yellow", "rejected": "red",
              "superseded": "dim", "retracted": "red"}.get(lesson["state"], "white")
    return f"[{colour}]{lesson['state']}[/]"


def line(lesson: dict[str, Any]) -> None:
    text = (lesson.get("text") or "(body not here yet: run `gitive sync`)").splitlines()[0][:90]
    extra = f"  [dim]{lesson['label']}[/]" if lesson.get("label") else ""
    console.print(f"{lesson['id'][:12]}  {_state(lesson)}  {lesson['kind']:<10} {lesson['scope']:<8} "
                  f"{lesson['author']:<12} {text}{extra}")


def full(lesson: dict[str, Any], audience: str | None = None) -> None:
    console.print(f"[bold]{lesson['kind']}[/] {lesson['id']}  {_state(lesson)}")
    console.print(f"  scope: {lesson['scope']}" + (", sealed" if lesson.get("sealed") else "")
                  + (f" ({audience})" if audience else ""))
    console.print(f"  by {lesson['author']} ({lesson['machine_name']})"
                  + (f", session {lesson['session']}" if lesson.get("session") else "")
                  + f", {lesson['age_days']} days ago")
    if lesson.get("reviewer"):
        console.print(f"  reviewed by {lesson['reviewer']}")
    if lesson.get("hearsay"):
        console.print("  [yellow]hearsay[/]: the quote is not from the person it is about")
    console.print(f"\n  {lesson.get('text') or '(no body here: retracted, or not synced yet)'}")
    if lesson.get("applicability"):
        console.print(f"  [dim]applies when:[/] {lesson['applicability']}")
    for symptom in lesson.get("symptoms") or []:
        console.print(f"  [dim]symptom:[/] {symptom}")
    if lesson.get("quote"):
        q = lesson["quote"]
        console.print(f"  [dim]quote:[/] \"{q['words']}\" — {q['speaker']}")
    if lesson.get("edited") and lesson.get("original_text"):
        console.print(f"  [dim]original text:[/] {lesson['original_text']}")
    console.print("  evidence:")
    for item in lesson["evidence"]:
        where = item.get("path") or item["ref"][:40]
        console.print(f"    {item['kind']}: {where}" + (f" @ {item['ref'][:12]}" if item.get("path") else ""))
    if lesson.get("files"):
        shown = ", ".join(lesson["files"][:12]) + (f" and {len(lesson['files']) - 12} more"
                                                    if len(lesson["files"]) > 12 else "")
        console.print(f"  shown when a session touches: {shown}")
    for stale in lesson.get("stale") or []:
        console.print(f"  [yellow]stale evidence[/]: {stale} changed since it was cited")
    if lesson.get("tags"):
        console.print(f"  tags: {', '.join(lesson['tags'])}")
    if lesson.get("retraction"):
        console.print(f"  [red]retracted[/]: {lesson['retraction']['reason']}")
    if lesson.get("superseded_by"):
        console.print(f"  superseded by {lesson['superseded_by'][:12]}")
