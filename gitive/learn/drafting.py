"""The quiet pass: read this machine's own event log, draft lessons and promises, score them, store them locally.

Runs on demand (``gitive learn``) and hourly in the daemon. It writes only ``$GITIVE_HOME/learn.sqlite``: no
ref, no log entry, no body, nothing a sync could push. A draft becomes a proposed lesson only when the person
accepts it (``gitive learn --review``). The pass reads events from a little before where the last one stopped
(a failure and its fix may straddle two passes); a draft's id is derived from its evidence, so a pair drafted
twice is one draft.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from gitive.core.clock import now_ms
from gitive.learn import already, corrections, gate, pairs, promises, store, writer

LOOKBACK_MS = pairs.MAX_BETWEEN_MS
DISABLED = "disabled"


class Report(NamedTuple):
    events: int
    sessions: int
    drafted: int  # new drafts stored this pass
    candidates: int  # undecided lesson drafts that pass the gate now
    problems: list[str]  # writer failures, said once each


def draft_id(kind: str, *parts: str) -> str:
    """Derived from the evidence only (never from scores or text), so drafting the same pair again is a no-op."""
    return hashlib.blake2b(json.dumps([kind, *parts]).encode(), digest_size=16).hexdigest()


def _commits_after(pair: pairs.Pair, events: Sequence[dict[str, Any]]) -> list[str]:
    """Commits the git hook linked to this session after the pass, touching a file the fix changed."""
    found = []
    for event in events:
        if (event.get("event") or {}).get("action") != "vcs.commit" or event.get("ts", 0) < pair.passed.get("ts", 0):
            continue
        sessions = {s.get("id") if isinstance(s, dict) else s for s in event.get("sessions") or []}
        vcs = event.get("vcs") or {}
        if pair.session in sessions and set(vcs.get("files") or []) & set(pair.files) and vcs.get("revision"):
            found.append(str(vcs["revision"]))
    return found[:3]


def _lesson_draft(pair: pairs.Pair, session: Sequence[dict[str, Any]], commits: list[str]) -> tuple[dict[str, Any], writer.Written]:
    written = writer.write(pair, session)
    ids = [pair.failed["event"]["id"], *[e["event"]["id"] for e in pair.edits][:8], pair.passed["event"]["id"]]
    evidence = [f"event:{i}" for i in ids] + [f"commit:{c}" for c in commits]
    draft = {"id": draft_id("lesson", pair.signature, ids[0], ids[-1]), "kind": "lesson", "session": pair.session,
             "harness": pair.harness, "repo": pair.repo, "signature": pair.signature, "evidence": evidence,
             "files": pair.files, "lesson_kind": written.kind, "text": written.text,
             "applicability": written.applicability, "symptoms": written.symptoms, "writer": written.writer,
             "detail": {"command": pair.command, "test": pair.test, "error_class": pair.error_class,
                        "error_line": pair.error_line, "failed_at": pair.failed.get("ts"),
                        "passed_at": pair.passed.get("ts")}}
    return draft, written


def _correction_draft(found: corrections.Correction, harness: str, repo: str) -> dict[str, Any]:
    """A person's correction as a draft: their words quoted as typed, what the agent did before them."""
    text = (f"Corrected by a person after the agent {found.did}: \u201c{found.sentence}\u201d "
            "(Skeleton drafted from this machine's session: say what to do instead and when it applies before "
            "accepting.)")
    evidence = [f"event:{found.event}"] + ([f"event:{found.before}"] if found.before else [])
    return {"id": draft_id("correction", found.event, found.sentence), "kind": "lesson", "session": found.session,
            "harness": harness, "repo": repo, "signature": "", "evidence": evidence, "files": found.files,
            "lesson_kind": "Correction", "text": text, "applicability": "", "symptoms": [found.sentence[:300]],
            "writer": "extracted", "detail": {"sentence": found.sentence, "did": found.did, "quote": found.sentence}}


def _correction_scores(found: corrections.Correction, session: Sequence[dict[str, Any]]) -> dict[str, int]:
    """The rubric read from the record for a correction: the agent went on working after it (task success),
    the draft cites the prompt and the action it corrects (evidence), a general rule reads as reusable."""
    ids = [(e.get("event") or {}).get("id") for e in session]
    after = session[ids.index(found.event) + 1:] if found.event in ids else []
    went_on = any(corrections.action(e) is not None for e in after)
    rule = bool(corrections.RULE_WORDS.search(found.sentence))
    return {"task_success": 100 if went_on else 0, "evidence": 100 if found.before else 50, "reuse": 70 if rule else 45}


def _offer(draft: dict[str, Any]) -> dict[str, Any]:
    """The draft with ``detail.already`` filled in: the verified lesson that already says it, if any."""
    return {**draft, "detail": {**draft["detail"], "already": already.check(draft)}}


def _promise_draft(promise: promises.Promise, harness: str, repo: str) -> dict[str, Any]:
    return {"id": draft_id("obligation", promise.event, promise.sentence), "kind": "obligation",
            "session": promise.session, "harness": harness, "repo": repo, "signature": "",
            "evidence": [f"event:{promise.event}"], "files": [], "lesson_kind": "", "text": promise.action,
            "applicability": promise.condition, "symptoms": [], "writer": "extracted",
            "detail": {"sentence": promise.sentence, "condition_word": promise.word}}


def _where(events: Sequence[dict[str, Any]]) -> tuple[str, str]:
    """(harness, repository) of one session's events."""
    harness = str((events[0].get("harness") or {}).get("name", ""))
    repo = next((str((e.get("vcs") or {}).get("repository")) for e in events if (e.get("vcs") or {}).get("repository")), "")
    return harness, repo


def _corrections(sessions: dict[str, list[dict[str, Any]]]) -> int:
    """Draft every new correction of these sessions (checked against verified lessons first); how many."""
    drafted = 0
    for evs in sessions.values():
        harness, repo = _where(evs)
        for found in corrections.in_session(evs):
            draft = _correction_draft(found, harness, repo)
            with store.connect() as conn:
                if store.get(conn, draft["id"]):
                    continue
            draft = _offer(draft)
            with store.connect() as conn:
                drafted += store.add(conn, draft)
                store.save_scores(conn, draft["id"], gate.RUBRIC_HASH, gate.HEURISTIC, _correction_scores(found, evs))
    return drafted


def run(events: Iterable[dict[str, Any]] | None = None, thresholds: gate.Thresholds = gate.Thresholds(),
        force: bool = False) -> Report:
    """One pass over this machine's event log (or ``events``); returns what it found.

    Does nothing while extraction is turned off (``gitive learn --off``) unless ``force``.
    """
    from gitive.capture import events as event_log

    with store.connect() as conn:
        if store.meta_get(conn, DISABLED) == "1" and not force:
            return Report(0, 0, 0, len(gate.candidates(conn, thresholds)), [])
        since = int(store.meta_get(conn, "cursor", "0") or 0)
        started = now_ms()
    listed = list(events if events is not None else event_log.read(since_ms=max(0, since - LOOKBACK_MS)))
    sessions = pairs.by_session(listed)
    found = [(s, pair) for s, evs in sessions.items() for pair in pairs.in_session(evs)]
    recurrences = Counter(pair.signature for _, pair in found)
    commits = [e for e in listed if (e.get("event") or {}).get("action") == "vcs.commit"]
    drafted, problems = 0, []
    for session_id, pair in found:
        session = sessions[session_id]
        with store.connect() as conn:
            if store.get(conn, draft_id("lesson", pair.signature, pair.failed["event"]["id"],
                                        pair.passed["event"]["id"])):
                continue
        draft, written = _lesson_draft(pair, session, _commits_after(pair, commits))  # the writer runs unlocked
        if written.problem and written.problem not in problems:
            problems.append(written.problem)
        later = session[[e.get("event", {}).get("id") for e in session].index(pair.passed["event"]["id"]) + 1:]
        draft = _offer(draft)
        with store.connect() as conn:
            drafted += store.add(conn, draft)
            scores = gate.computed(pair, later)
            store.save_scores(conn, draft["id"], gate.RUBRIC_HASH, gate.HEURISTIC,
                              {**scores, "reuse": gate.heuristic_reuse(pair, recurrences[pair.signature])})
            if written.reuse is not None:
                store.save_scores(conn, draft["id"], gate.RUBRIC_HASH, "writer", {**scores, "reuse": written.reuse})
    drafted += _corrections(sessions)
    with store.connect() as conn:
        for evs in sessions.values():
            harness, repo = _where(evs)
            for promise in promises.in_session(evs):
                drafted += store.add(conn, _promise_draft(promise, harness, repo))
        store.meta_set(conn, "cursor", str(max([since, started, *[e.get("ts", 0) for e in listed]])))
        store.meta_set(conn, "last_run", str(started))
        return Report(len(listed), len(sessions), drafted, len(gate.candidates(conn, thresholds)), problems)
