"""Promises in the person's own prompts ("remove the grace period once auth-rotation merges"), as drafts.

The reference asks the quiet pass to propose commitment sentences as obligations (A-8), the content staying
local until the owner accepts. Only what the person typed is read (``prompt.submitted``), never what an agent
said or a tool printed. A promise is a first-person commitment or a request to be reminded, optionally with
the condition it waits for ("once", "when", "after", "before", "by"). Precision is unknown and the reference
says so; the accept/skip record of these drafts is the measure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
_PROMISE = re.compile(
    r"\b(?:i'?ll|i will|we'?ll|we will|i (?:need|have|promise) to|remind me to|don'?t let me forget to|"
    r"(?:let'?s )?remember to|todo:?|follow[- ]up:?)\s+(?P<action>.+)", re.IGNORECASE)
_CONDITION = re.compile(r"\b(?P<word>once|when|after|before|by|as soon as)\s+(?P<condition>.+)$", re.IGNORECASE)
_NOT_A_PROMISE = re.compile(r"^(?:look|check|see|try|run|read|explain|tell|show)\b", re.IGNORECASE)
MIN_ACTION = 12  # characters: "I'll do it" is not a promise anyone can hold anyone to


class Promise(NamedTuple):
    session: str
    event: str  # the prompt event's id
    sentence: str
    action: str
    condition: str  # "" when the promise waits for nothing in particular
    word: str  # once | when | after | before | by | as soon as


def in_prompt(text: str) -> list[tuple[str, str, str, str]]:
    """(sentence, action, condition, condition word) for each promise in one prompt."""
    found = []
    for raw in _SENTENCE.findall(text):
        sentence = " ".join(raw.split())
        match = _PROMISE.search(sentence)
        if not match:
            continue
        action = match.group("action").rstrip(".!? ")
        condition, word = "", ""
        if cond := _CONDITION.search(action):
            condition, word = cond.group("condition").rstrip(".!? "), cond.group("word").lower()
            action = action[: cond.start()].rstrip(", ")
        if len(action) < MIN_ACTION or _NOT_A_PROMISE.match(action):
            continue
        found.append((sentence[:500], action[:500], condition[:300], word))
    return found


def in_session(events: Sequence[dict[str, Any]]) -> list[Promise]:
    out = []
    for event in events:
        if (event.get("event") or {}).get("action") != "prompt.submitted":
            continue
        prompt = event.get("prompt") or {}
        text = prompt.get("text") if isinstance(prompt, dict) else None
        if not isinstance(text, str):
            continue
        session = str((event.get("session") or {}).get("id", ""))
        for sentence, action, condition, word in in_prompt(text):
            out.append(Promise(session, str(event["event"].get("id", "")), sentence, action, condition, word))
    return out
