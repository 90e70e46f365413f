"""Memory: lessons by state, search with recall's own ranking, citations and outcome rate, stale evidence, and
the review queue with the exact command to run (reviewing needs a person at a terminal, never this page).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.index import activity
from gitive.lessons import catalog, evidence, recall, summary
from gitive.team.hive import Hive
from gitive.ui import charts
from gitive.ui.html import ago, badge, command, empty, h, iso, short, stat, table

QUEUE = 50
LISTED = 50
RESULTS = 20
CITED_DAYS = 30


def approve_command(lesson: str) -> str:
    return f"gitive review approve {short(lesson)}"


def _with_stale(hive: Hive, lessons: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for lesson in lessons:
        lesson["stale"] = evidence.stale(hive.project, lesson["evidence"])
    return lessons


def collect(hive: Hive, conn: sqlite3.Connection, now: int, *, query: str = "", files: list[str] | None = None,
            proposed: bool = False, page: int = 1) -> dict[str, Any]:
    files = [f for f in (files or []) if f]
    results = None
    if query.strip() or files:
        results = recall.search(conn, query, files=files, project=hive.project_id,
                                include_proposed=proposed, limit=RESULTS, repo=hive.project)
    queue = _with_stale(hive, catalog.listing(conn, states=("proposed", "held"), limit=QUEUE))
    for lesson in queue:
        lesson["command"] = approve_command(lesson["id"])
    counts = summary.counts(conn, now)
    pages = max(1, -(-counts["verified"] // LISTED))
    page = min(max(1, page), pages)
    verified = _with_stale(hive, catalog.listing(conn, states=("verified",), limit=LISTED,
                                                 offset=(page - 1) * LISTED))
    day = activity.DAY_MS
    cited = activity.per_day(conn, "citation", (now // day - CITED_DAYS + 1) * day, now + 1)
    return {"view": "memory", "counts": counts, "search": {
        "query": query, "files": files, "proposed": proposed, "results": results},
        "review_queue": queue, "verified": verified, "page": {"number": page, "of": pages, "size": LISTED},
        "cited_per_day": cited, "now": now}


def _lesson_cell(lesson: dict[str, Any]) -> str:
    tags = " ".join(badge(t, "tag") for t in lesson.get("tags") or [])
    label = f' <span class="label">{h(lesson["label"])}</span>' if lesson.get("label") else ""
    stale = (f'<p class="stale">stale evidence: {h(", ".join(lesson["stale"]))} changed since cited</p>'
             if lesson.get("stale") else "")
    text = h(lesson.get("text")) if lesson.get("text") is not None else '<span class="muted">(body not here yet)</span>'
    return (f'<a class="lesson" href="/lessons/{h(lesson["id"])}">{h(lesson["kind"])} '
            f'<code>{h(short(lesson["id"], 8))}</code></a>{label}<p>{text}</p>{tags}{stale}')


def _outcome(lesson: dict[str, Any]) -> str:
    if not lesson["citations"]:
        return '<span class="muted">not cited yet</span>'
    return (f'{h(lesson["citations"])} cited · <span title="(successes + 1) / (citations + 2)">'
            f'{lesson["outcome_rate"]:.0%} helped</span>')


def _search(s: dict[str, Any], now: int) -> str:
    checked = " checked" if s["proposed"] else ""
    form = (f'<form class="search" method="get" action="/memory" role="search">'
            f'<label for="q">Search lessons</label> <input id="q" name="q" type="search" value="{h(s["query"])}" '
            f'placeholder="what are you looking for?" autocomplete="off"> '
            f'<label for="files">files</label> <input id="files" name="files" value="{h(" ".join(s["files"]))}" '
            f'placeholder="src/a.py tests/b.py"> <label><input type="checkbox" name="proposed" value="1"{checked}> '
            f'include proposed</label> <button type="submit">Search</button></form>')
    if s["results"] is None:
        return form
    if not s["results"]:
        hint = "" if s["proposed"] else " (verified only; tick “include proposed” for more)"
        return form + f'<p class="muted" id="results">No matching lessons{h(hint)}.</p>'
    rows = [[_lesson_cell(r), h(r["origin"]), h(f'{r["score"]:.2f}'), h("; ".join(r["reasons"])), _outcome(r)]
            for r in s["results"]]
    return form + table(f"Results for “{s['query']}”, best first (same ranking as `gitive lessons search`)",
                        ("lesson", "by", "score", "why", "outcome"), rows, cls="rows results")


def render(data: dict[str, Any]) -> str:
    now, counts = data["now"], data["counts"]
    out = ["<h1>Memory</h1>", '<div class="stats">'] + [
        stat(state, counts[state], state) for state in ("verified", "proposed", "held", "rejected", "superseded",
                                                        "retracted")] + ["</div>"]
    out.append('<section id="search"><h2>Search</h2>' + _search(data["search"], now) + "</section>")
    out.append('<section id="review-queue"><h2>Review queue</h2>')
    queue = data["review_queue"]
    if queue:
        out.append("<p>Reviewing needs you at a terminal. Run the command shown, in the repository.</p>")
        rows = [[_lesson_cell(q), h(q["author"]), badge(q["state"]), ago(q["at"], now), command(q["command"])]
                for q in queue]
        out.append(table("Lessons waiting for a person's review, newest first",
                         ("lesson", "proposed by", "state", "proposed", "to review"), rows, cls="rows queue",
                         row_attrs=[f'tabindex="0" data-lesson="{h(q["id"])}"' for q in queue]))
    else:
        out.append(empty("Nothing waits for review", [
            "Agents propose lessons (MCP <code>propose_lesson</code>) or you do at the terminal; they show up "
            "here until a person approves or rejects them."],
            ['gitive lessons propose --kind Gotcha --text "…" --evidence file:PATH']))
    out.append("</section>")
    cited = data["cited_per_day"]
    if any(d["count"] for d in cited):
        out.append(charts.bars("lessons-cited", "Lessons cited per day, last 30 days", "citations", [
            charts.Bar(iso(d["day"])[5:10], d["count"], f"{d['successes']} helped") for d in cited]))
    out.append('<section id="verified"><h2>Verified lessons</h2>')
    verified = data["verified"]
    if verified:
        rows = [[_lesson_cell(v), h(v["author"]), h(v["reviewer"] or ""), _outcome(v), ago(v["at"], now)]
                for v in verified]
        first = (data["page"]["number"] - 1) * data["page"]["size"] + 1
        out.append(table(f"Verified lessons, newest first: {first:,}–{first + len(verified) - 1:,} of "
                         f"{data['counts']['verified']:,}", ("lesson", "by", "reviewed by", "outcome", "written"),
                         rows, cls="rows verified",
                         row_attrs=[f'tabindex="0" data-lesson="{h(v["id"])}"' for v in verified]))
        out.append(_pager(data["page"]))
    else:
        out.append(empty("No verified lessons yet", [
            "A lesson becomes verified when a person with review authority approves it. Agents recall only "
            "verified lessons unless asked for proposed ones."], ["gitive review"]))
    out.append("</section>")
    return "".join(out)


def _pager(page: dict[str, Any]) -> str:
    """Newer / older links for the verified list (plain links: they work without JavaScript)."""
    n, last = page["number"], page["of"]
    if last == 1:
        return ""
    links = []
    if n > 1:
        links.append(f'<a href="/memory?page={n - 1}#verified" rel="prev">← newer</a>')
    links.append(f'<span class="muted">page {n} of {last:,}</span>')
    if n < last:
        links.append(f'<a href="/memory?page={n + 1}#verified" rel="next">older →</a>')
    return '<nav class="pager" aria-label="Verified lessons pages">' + " ".join(links) + "</nav>"


def collect_lesson(hive: Hive, conn: sqlite3.Connection, lesson: str, now: int) -> dict[str, Any]:
    found = catalog.get(conn, catalog.resolve_id(conn, lesson))
    found["stale"] = evidence.stale(hive.project, found["evidence"])
    if found["state"] in ("proposed", "held"):
        found["command"] = approve_command(found["id"])
    return {"view": "memory", "lesson": found, "now": now}


def render_lesson(data: dict[str, Any]) -> str:
    lesson, now = data["lesson"], data["now"]
    out = [f'<p><a href="/memory">← Memory</a></p><h1>{h(lesson["kind"])} <code>{h(short(lesson["id"]))}</code> '
           f'{badge(lesson["state"])}</h1>', f'<blockquote class="text">{h(lesson["text"] or "")}</blockquote>']
    facts = [("applies when", h(lesson["applicability"] or "")),
             ("symptoms", "<br>".join(h(s) for s in lesson.get("symptoms") or [])),
             ("shown for files", " ".join(f"<code>{h(f)}</code>" for f in lesson.get("files") or [])),
             ("scope", h(lesson["scope"])),
             ("proposed by", f'{h(lesson["author"])} <span class="muted">({h(lesson["machine_name"])})</span>'),
             ("written", ago(lesson["at"], now)), ("reviewed by", h(lesson["reviewer"] or "")),
             ("outcome", _outcome(lesson)), ("tags", " ".join(badge(t, "tag") for t in lesson["tags"]))]
    if lesson.get("quote"):
        q = lesson["quote"]
        facts.append(("quote", f'“{h(q.get("words"))}” — {h(q.get("speaker"))}'
                      + (" (hearsay)" if lesson["hearsay"] else "")))
    out.append("<dl>" + "".join(f"<dt>{h(k)}</dt><dd>{v}</dd>" for k, v in facts if v) + "</dl>")
    if lesson.get("command"):
        out.append(f'<p>To review, at a terminal in the repository: {command(lesson["command"])}</p>')
    ev = [[h(e.get("kind")), h(e.get("path") or e.get("ref")),
           badge("stale", "stale") if e.get("path") in lesson["stale"] else ""] for e in lesson["evidence"]]
    out.append(table("Evidence", ("kind", "what", ""), ev, cls="evidence"))
    if lesson["reviews"]:
        rows = [[h(r["approver"]), badge("approved" if r["approved"] else "rejected"), h(r["note"]),
                 ago(r["at"], now)] for r in lesson["reviews"]]
        out.append(table("Reviews", ("by", "decision", "note", "when"), rows))
    if lesson.get("retraction"):
        out.append(f'<p class="callout warn">Retracted: {h(lesson["retraction"]["reason"])}</p>')
    return "".join(out)
