"""A person correcting the agent in a later prompt of the same session ("no, use the sandbox key"), as drafts.

A failed → fixed pair is the record's evidence of a lesson; a person's correction is the other strong kind:
someone who knows said the agent was doing it wrong and how to do it. Only what the person typed is read
(``prompt.submitted``, never an agent's words or a tool's output), and only prompts after the session's
first one: the first prompt states the task, a later one can correct what the agent did with it. The
sentence is quoted as it was typed (the quote-grounding rule the error line follows too: the draft's quote is
a verbatim part of the prompt event it cites), with what the agent did just before it: the command it ran or
the files it changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")
# How a correction opens: a refusal or redirection addressed to the agent ...
_OPENS = re.compile(
    r"^(?:no\b|nope\b|wrong\b|not like that\b|not that\b|that'?s (?:wrong|not (?:right|it|how))\b|"
    r"(?:please )?(?:don'?t|do not|never|stop)\b|actually\b|instead\b|you (?:should(?:n'?t)?|must(?:n'?t)?|need to|"
    r"can'?t)\b|wait\b|undo\b|revert\b)", re.IGNORECASE)
# ... and what makes it a rule worth keeping rather than a bare "no": an instruction.
_INSTRUCTS = re.compile(
    r"\b(?:use|using|don'?t|do not|never|always|instead|should|must|need to|has to|have to|only|not)\b",
    re.IGNORECASE)
MIN_WORDS = 4  # "no, stop" tells nothing a later agent could use
RULE_WORDS = re.compile(r"\b(?:always|never|don'?t|do not|instead|only|must|use)\b", re.IGNORECASE)


class Correction(NamedTuple):
    session: str
    event: str  # the prompt event's id
    sentence: str  # the person's words, verbatim from the prompt
    before: str  # the event id of what the agent did just before ("" when nothing)
    did: str  # that action said plainly: the command it ran or the files it changed
    files: list[str]


def in_prompt(text: str) -> list[str]:
    """The correcting sentences of one prompt, verbatim (only white space at their ends trimmed)."""
    found = []
    for raw in _SENTENCE.findall(text):
        sentence = raw.strip()
        if len(sentence.split()) < MIN_WORDS or not _OPENS.match(sentence) or not _INSTRUCTS.search(sentence):
            continue
        if sentence.endswith("?") and not re.search(r"\b(?:use|instead|don'?t|never)\b", sentence, re.I):
            continue  # "no, why did that fail?" asks, it does not correct
        found.append(sentence[:500])
    return found


def _prompt_text(event: dict[str, Any]) -> str | None:
    if (event.get("event") or {}).get("action") != "prompt.submitted":
        return None
    prompt = event.get("prompt") or {}
    text = prompt.get("text") if isinstance(prompt, dict) else None
    return text if isinstance(text, str) else None


def action(event: dict[str, Any]) -> tuple[str, list[str]] | None:
    """What a tool event did, said plainly, and the files it changed; None for anything else."""
    command = event.get("command")
    if isinstance(command, dict) and isinstance(command.get("command"), str) and command["command"].strip():
        return f"ran `{' '.join(command['command'].split())[:200]}`", []
    found = event.get("file")
    if isinstance(found, dict) and found.get("op") == "modify" and isinstance(found.get("paths"), list):
        paths = [p for p in found["paths"] if isinstance(p, str) and p]
        if paths:
            return "changed " + ", ".join(paths[:6]), paths
    return None


def in_session(events: Sequence[dict[str, Any]]) -> list[Correction]:
    """The corrections in one session's events, in order: each correcting sentence of a prompt after the
    first, with the agent's last action before that prompt."""
    out: list[Correction] = []
    prompts = 0
    last: tuple[str, str, list[str]] = ("", "", [])
    for event in events:
        text = _prompt_text(event)
        if text is None:
            acted = action(event)
            if acted is not None:
                last = (str((event.get("event") or {}).get("id", "")), *acted)
            continue
        prompts += 1
        if prompts == 1 or not last[0]:
            continue
        session = str((event.get("session") or {}).get("id", ""))
        for sentence in in_prompt(text):
            out.append(Correction(session, str(event["event"].get("id", "")), sentence, *last))
    return out
