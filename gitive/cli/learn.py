"""``gitive learn``: the quiet pass over this machine's sessions, and the person's review of its drafts."""

from __future__ import annotations

from typing import Any

import typer

from gitive.cli.output import console, emit_json


def register(app: typer.Typer) -> None:
    app.command("learn")(learn)


def _thresholds(reuse_floor: int | None, min_score: int | None) -> Any:
    from gitive.learn import gate, store

    with store.connect() as conn:
        saved = gate.Thresholds(int(store.meta_get(conn, "reuse_floor", "50")),
                                int(store.meta_get(conn, "min_mean", "60")))
        chosen = saved._replace(**{k: v for k, v in (("reuse_floor", reuse_floor), ("min_mean", min_score))
                                   if v is not None})
        store.meta_set(conn, "reuse_floor", str(chosen.reuse_floor))
        store.meta_set(conn, "min_mean", str(chosen.min_mean))
    return chosen


def learn(
    review: bool = typer.Option(False, "--review", help="Go through the drafts: accept, edit, skip (a person "
                                                        "at a terminal only)."),
    listing: bool = typer.Option(False, "--list", help="List the drafts and their scores; nothing runs."),
    rebuild: bool = typer.Option(False, "--rebuild", help="Recompute which drafts are candidates from the stored "
                                                          "scores (no scoring runs)."),
    reuse_floor: int | None = typer.Option(None, "--reuse-floor", min=0, max=100,
                                           help="Reuse score a draft needs on its own (default 50; kept)."),
    min_score: int | None = typer.Option(None, "--min-score", min=0, max=100,
                                         help="Mean score a draft needs after that (default 60; kept)."),
    off: bool = typer.Option(False, "--off", help="Turn extraction off (the daemon's hourly pass stops)."),
    on: bool = typer.Option(False, "--on", help="Turn extraction back on."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Draft lessons from this machine's own sessions (failed -> fixed runs) and promises from your prompts.

    Drafts stay on this machine until you accept one in `gitive learn --review`, which proposes it as a lesson
    (a person still reviews it). Skips are counted; with a low accept rate, `gitive learn --off`.

    Example: gitive learn && gitive learn --review
    """
    from gitive.learn import drafting, store
    from gitive.learn import review as review_mod

    if off or on:
        with store.connect() as conn:
            store.meta_set(conn, drafting.DISABLED, "1" if off else "0")
        console.print("extraction is " + ("off: the daemon stops drafting; `gitive learn --on` restarts it"
                                          if off else "on"))
        return 0
    thresholds = _thresholds(reuse_floor, min_score)
    if review:
        return _review(thresholds)
    if listing or rebuild:
        return _list(thresholds, as_json, rebuild)
    done = drafting.run(thresholds=thresholds)
    with store.connect() as conn:
        rate = review_mod.rate(conn)
        disabled = store.meta_get(conn, drafting.DISABLED) == "1"
    if as_json:
        emit_json({**done._asdict(), "rate": rate._asdict(), "disabled": disabled})
        return 0
    if disabled:
        console.print("extraction is off (`gitive learn --on` turns it back on)")
        return 0
    console.print(f"read {done.events:,} events of {done.sessions:,} sessions: {_n(done.drafted, 'new draft')}, "
                  f"{_n(done.candidates, 'lesson draft')} waiting for you (`gitive learn --review`)")
    console.print(f"  {rate.said()}")
    for problem in done.problems:
        console.print(f"  note: {problem}")
    return 0


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _list(thresholds: Any, as_json: bool, rebuild: bool) -> int:
    from gitive.learn import gate, store

    with store.connect() as conn:
        drafts = store.listing(conn)
        stored = store.scores(conn, gate.RUBRIC_HASH)
        passing = set(gate.candidates(conn, thresholds))
    rows = [{"id": d["id"], "kind": d["kind"], "state": d["state"], "candidate": d["id"] in passing,
             "scores": stored.get(d["id"]), "text": d["text"], "writer": d["writer"], "files": d["files"],
             **_grounds(d)} for d in drafts]
    if as_json:
        emit_json({"rubric": gate.RUBRIC_HASH, "thresholds": thresholds._asdict(), "drafts": rows})
        return 0
    if rebuild:
        lessons = [r for r in rows if r["kind"] == "lesson" and r["state"] == "new"]
        console.print(f"{len(passing)} of {len(lessons)} undecided lesson drafts pass reuse >= "
                      f"{thresholds.reuse_floor} and mean >= {thresholds.min_mean} (from stored scores, rubric "
                      f"{gate.RUBRIC_HASH[:12]})")
    for r in rows:
        mark = "*" if r["candidate"] else " "
        scores = " ".join(f"{k}={v}" for k, v in (r["scores"] or {}).items())
        console.print(f"{mark} {r['id'][:12]} {r['kind']:10} {r['state']:8} {scores:40} {r['text'][:60]}")
    if not rows:
        console.print("no drafts yet: `gitive learn` drafts from this machine's sessions")
    return 0


def _grounds(draft: dict[str, Any]) -> dict[str, Any]:
    """What a draft rests on, for the listing: its evidence, the error line it quotes (or the person's words),
    the failing test and command, and the verified lesson that already says it."""
    detail = draft.get("detail") or {}
    return {"lesson_kind": draft.get("lesson_kind", ""), "evidence": draft["evidence"],
            "error_line": detail.get("error_line", ""), "failing_test": detail.get("test", ""),
            "command": detail.get("command", ""), "quote": detail.get("quote", ""),
            "already": detail.get("already") or {}}


def _show(draft: dict[str, Any], scores: dict[str, int] | None) -> None:
    console.rule(f"{draft['kind']} draft {draft['id'][:12]} ({draft['writer']})")
    console.print(draft["text"], markup=False)
    if draft["applicability"]:
        label = "when" if draft["kind"] == "lesson" else "waits for"
        console.print(f"  {label}: {draft['applicability']}", markup=False)
    if draft["symptoms"]:
        console.print("  symptoms: " + " | ".join(draft["symptoms"]), markup=False)
    if draft["files"]:
        console.print("  files: " + ", ".join(draft["files"]), markup=False)
    detail = draft.get("detail") or {}
    if detail.get("error_line"):
        test = f" in {detail['test']}" if detail.get("test") else ""
        console.print(f"  error{test}: {detail['error_line']}", markup=False)
    if detail.get("quote"):
        console.print(f"  the person said: \u201c{detail['quote']}\u201d", markup=False)
    console.print("  evidence: " + ", ".join(draft["evidence"]), markup=False)
    known = detail.get("already") or {}
    if known.get("lesson"):
        console.print(f"  already said by verified lesson {known['lesson'][:12]}: {known['text']}", markup=False)
    if scores:
        console.print("  scores: " + ", ".join(f"{k} {v}" for k, v in scores.items()))


def _decide_known(draft: dict[str, Any], known: str) -> str:
    """A draft a verified lesson already says: add this session's evidence to that lesson, or supersede it
    with the draft (either way a proposed new version a person reviews), never a second lesson."""
    from gitive.errors import GitiveError
    from gitive.learn import review

    choice = typer.prompt(f"[v] add this evidence to {known[:12]}, [u] supersede it with this draft, [s]kip, [q]uit",
                          default="q").strip().lower()
    if choice.startswith("q"):
        return "quit"
    if choice.startswith("s") or not choice.startswith(("v", "u")):
        review.decide(draft["id"], "skipped")
        console.print("skipped")
        return "skipped"
    if not typer.confirm("Propose the new version from this machine (it leaves the machine at the next sync, "
                         "still unreviewed)?", default=False):
        console.print("kept as a draft")
        return "kept"
    try:
        lesson = review.add_evidence(draft, known) if choice.startswith("v") else review.supersede(draft, known)
    except GitiveError as exc:
        console.print(f"not proposed: {exc}")
        return "failed"
    review.decide(draft["id"], "accepted", lesson)
    console.print(f"proposed lesson {lesson[:12]}, superseding {known[:12]} once a person approves it "
                  "(`gitive review`)")
    return "accepted"


def _review(thresholds: Any) -> int:
    from gitive.errors import GitiveError
    from gitive.learn import gate, review, store
    from gitive.lessons.gate import require_person

    require_person("reviewing drafts")
    with store.connect() as conn:
        passing = gate.candidates(conn, thresholds)
        stored = store.scores(conn, gate.RUBRIC_HASH)
        promises = [d["id"] for d in store.listing(conn, ("new",)) if d["kind"] == "obligation"]
    queue = passing + promises
    if not queue:
        console.print("no drafts waiting (`gitive learn` drafts from this machine's sessions)")
        return 0
    for n, draft_id in enumerate(queue, 1):
        with store.connect() as conn:
            draft = store.get(conn, draft_id)
        if draft is None or draft["state"] != "new":
            continue
        console.print(f"\n{n} of {len(queue)}")
        _show(draft, stored.get(draft_id))
        known = ((draft.get("detail") or {}).get("already") or {}).get("lesson")
        if known:
            if _decide_known(draft, known) == "quit":
                break
            continue
        choice = typer.prompt("[a]ccept, [e]dit, [s]kip, [q]uit", default="q").strip().lower()
        if choice.startswith("q"):
            break
        if choice.startswith("s"):
            review.decide(draft_id, "skipped")
            console.print("skipped")
            continue
        if choice.startswith("e"):
            review.edit(draft_id, typer.prompt("text", default=draft["text"]))
            with store.connect() as conn:
                draft = store.get(conn, draft_id) or draft
        if choice.startswith(("a", "e")):
            if not typer.confirm("Propose it as a lesson from this machine (it leaves the machine at the next "
                                 "sync, still unreviewed)?", default=False):
                console.print("kept as a draft")
                continue
            try:
                lesson = review.accept(draft)
            except GitiveError as exc:
                console.print(f"not proposed: {exc}")
                continue
            review.decide(draft_id, "accepted", lesson)
            console.print(f"proposed lesson {lesson[:12]}; a person reviews it with `gitive review`")
    with store.connect() as conn:
        console.print(review.rate(conn).said())
    return 0
