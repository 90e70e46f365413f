"""Recall benchmark: ranking quality on a hard labelled set, against BM25 and substring baselines, and latency.

    .venv/bin/python benchmarks/recall.py                         # labelled set + 10,000 lessons
    .venv/bin/python benchmarks/recall.py --model DIR             # also the dense backend (a model2vec model)
    .venv/bin/python benchmarks/recall.py --total 0 --misses      # quality only, list the misses
    .venv/bin/python benchmarks/recall.py --dense-files 50000     # with-file latency where files are cited densely

What it does:

1. Labelled set (``data/recall_hard.yaml``, cached as a hive): a bare remote and a clone holding every cited
   file, one commit per lesson whose evidence is a commit, a team founded with ``gitive init``, then every
   lesson written through the real ``propose`` (in its own project: the clone's ``origin`` is pointed at each
   sibling project's URL in turn, so project ids differ) and approved through ``review``. Older versions are
   superseded, a few lessons stay proposed. Each lesson gets a fixed age.
2. Quality: every question through ``gitive.lessons.recall.search`` in its project, on the dev and the test
   split separately (weights were tuned on dev; quote test). Modes: the question alone; with its files; with
   its files and the rephrasings an agent would pass (the lexical path); the same with the dense backend
   when ``--model`` is given. Baselines in the same run: Beacon's substring recall (every term a substring,
   newest first), plain BM25 over text, applicability and tags (FTS5, porter), and BM25 plus file overlap.
   recall@5 and MRR over the first ten; recall@5 per question shape on test.
3. Scale (cached): the labelled hive grown to ``--total`` lessons with synthetic ones written as ``propose``
   writes them (signed log entries; their bodies in one body-store write, because the flat body store of
   this version rewrites every body on each put). Search latency in-process on a warm connection, quality
   again, the index size per lesson (and without the ``entries`` table of raw envelopes).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

DATA = Path(__file__).resolve().parent / "data" / "recall_hard.yaml"
FORMAT_VERSION = 4  # bump when the data set or how it is written changes, so old caches are not reused
DAY_MS = 86_400_000
TOP = 10
SHAPES = ("paraphrase", "task", "sibling", "crowded", "error")
BASELINE = "baseline: plain BM25"  # one FTS5 statement over an in-memory table of the same lessons


# ----------------------------------------------------------------------------------------------- the set


def load(path: Path) -> dict[str, Any]:
    """The set, with each question's ``paraphrase`` shape recomputed (never taken on trust from the file)."""
    data = yaml.safe_load(path.read_text())
    lessons = {lesson["key"]: lesson for lesson in data["lessons"]}
    for q in data["questions"]:
        if q["answer"] not in lessons:
            raise SystemExit(f"question {q['q']!r} answers unknown lesson {q['answer']}")
        shapes = [s for s in q.get("shape", []) if s != "paraphrase"]
        q["shape"] = shapes + (["paraphrase"] if len(_shared(q, lessons[q["answer"]])) <= 1 else [])
    data["digest"] = _digest(data["lessons"])
    return data


def _digest(lessons: list[dict[str, Any]]) -> str:
    import blake3

    return blake3.blake3(json.dumps(lessons, sort_keys=True).encode()).hexdigest()[:16]


def _age_days(key: str, span: int) -> int:
    import blake3

    return int.from_bytes(blake3.blake3(key.encode()).digest()[:4], "big") % span


def _stamps(lessons: list[dict[str, Any]], now: int, span: int) -> dict[str, int]:
    """When each lesson was proposed: superseded versions 30 days before their successor, proposed ones
    within the last two days."""
    at = {x["key"]: now - _age_days(x["key"], span) * DAY_MS - 3_600_000 for x in lessons}
    for x in lessons:
        if x.get("state") == "proposed":
            at[x["key"]] = now - _age_days(x["key"], 2) * DAY_MS - 3_600_000
    for x in lessons:
        if x.get("replaced_by"):
            at[x["key"]] = at[x["replaced_by"]] - 30 * DAY_MS
    return at


def _write_files(work: Path, paths: list[str]) -> None:
    for path in paths:
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# {path}\n# part of the recall benchmark's imaginary shop\n")


def _commit(work: Path, paths: list[str], message: str) -> str:
    _write_files(work, paths)
    for path in paths:  # change each file so the commit touches exactly these paths
        with open(work / path, "a") as fh:
            fh.write(f"# {message.splitlines()[0]}\n")
    c.git("add", "--", *paths, cwd=work)
    c.git("commit", "--quiet", "-m", message, cwd=work)
    return c.git("rev-parse", "HEAD", cwd=work).strip()


def _project_url(data: dict[str, Any], lesson: dict[str, Any]) -> str:
    return data["projects"][lesson.get("project", "storefront")]


def write_labelled(work: Path, data: dict[str, Any], stamps: dict[str, int]) -> dict[str, str]:
    """Propose every lesson in its project and approve the verified ones; return key -> lesson id."""
    from gitive.index.refresh import fresh_index
    from gitive.lessons.propose import make_quote, propose
    from gitive.lessons.review import review
    from gitive.team.hive import open_hive

    commits = {x["key"]: _commit(work, x["commit"]["files"], x["commit"]["message"])
               for x in data["lessons"] if x.get("commit")}
    replaces = {x["replaced_by"]: x["key"] for x in data["lessons"] if x.get("replaced_by")}
    ids: dict[str, str] = {}
    signer = c.person_key(Path(os.environ["GITIVE_HOME"]))
    order = sorted(data["lessons"], key=lambda x: stamps[x["key"]])
    for lesson in order:
        c.git("remote", "set-url", "origin", _project_url(data, lesson), cwd=work)
        hive = open_hive(work)
        evidence = [f"file:{f}" for f in lesson.get("files", [])]
        evidence += [f"commit:{commits[lesson['key']]}"] if lesson["key"] in commits else []
        quote = lesson.get("quote")
        os.environ["GITIVE_NOW_MS"] = str(stamps[lesson["key"]])
        with fresh_index(hive) as (conn, _):
            made = propose(hive, conn, kind=lesson.get("kind", "Gotcha"), text=lesson["text"],
                           applicability=lesson.get("applicability", ""), evidence=evidence,
                           tags=list(lesson.get("tags", [])), scope=lesson.get("scope", "project"),
                           quote=make_quote(quote["words"], quote["speaker"]) if quote else None,
                           symptoms=list(lesson.get("symptoms", [])),
                           supersedes=ids.get(replaces.get(lesson["key"], "")))
            ids[lesson["key"]] = made.id
            if lesson.get("state") != "proposed":
                os.environ["GITIVE_NOW_MS"] = str(stamps[lesson["key"]] + 60_000)
                review(hive, conn, made.id, approved=True, note="benchmark", signer=signer)
    os.environ.pop("GITIVE_NOW_MS", None)
    c.git("remote", "set-url", "origin", data["projects"]["storefront"], cwd=work)
    return ids


def _all_paths(data: dict[str, Any]) -> list[str]:
    found = {p for x in data["lessons"] for p in x.get("files", [])}
    found |= {p for q in data["questions"] for p in q.get("files", [])}
    return sorted(found)


def build_labelled(target: Path, data: dict[str, Any]) -> dict[str, Any]:

    shutil.rmtree(target, ignore_errors=True)
    remote, work, home = target / "remote.git", target / "work", target / "home"
    c.git("init", "--quiet", "--bare", remote)
    c.git("clone", "--quiet", f"file://{remote}", work)
    _write_files(work, _all_paths(data))
    c.git("add", "-A", cwd=work)
    c.git("commit", "--quiet", "-m", "the files the labelled lessons cite", cwd=work)
    c.git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=work)
    with c.in_dir(work, home), contextlib.redirect_stdout(sys.stderr):
        if c.run_deciding(["init", "--person", "alice", "--machine", "bench-box"], home) != 0:
            raise RuntimeError("gitive init failed")
    start = time.perf_counter()
    with c.in_dir(work, home):
        ids = write_labelled(work, data, _stamps(data["lessons"], int(time.time() * 1000), 400))
    meta = {"format": FORMAT_VERSION, "ids": ids, "lessons": len(ids),
            "write_seconds": round(time.perf_counter() - start, 1)}
    (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def load_or_build(path: Path, build: Any, regenerate: bool, digest: str) -> dict[str, Any]:
    """The cached hive's meta when it was built by this version from these lessons, else a new build."""
    meta_file = path / "meta.json"
    if not regenerate and meta_file.exists():
        meta = json.loads(meta_file.read_text())
        if meta.get("format") == FORMAT_VERSION and meta.get("data") == digest:
            return meta
    meta = build()
    meta["data"] = digest
    meta_file.write_text(json.dumps(meta, indent=1) + "\n")
    return meta


# ------------------------------------------------------------------------------------------- baselines


def beacon_baseline(conn: sqlite3.Connection, query: str) -> list[str]:
    """Beacon's ``ListMemories`` + ``matchesText``: every white-space term, lower-cased, a substring of
    ``id + title + body + kind``; newest first; at most 20 (``search_memory``'s cap)."""
    terms = query.lower().split()
    found = []
    for lesson, kind, text in conn.execute(
            "SELECT l.id, l.kind, b.text FROM visible_lessons l JOIN lesson_status s ON s.lesson = l.id "
            "JOIN lesson_text t ON t.lesson = l.id JOIN lesson_bodies b ON b.body_hash = t.body_hash "
            "WHERE s.state = 'verified' ORDER BY l.at DESC, l.id"):
        haystack = f"{lesson} {text.split('. ')[0]} {text} {kind}".lower()
        if all(term in haystack for term in terms):
            found.append(lesson)
            if len(found) == 20:
                break
    return found


class PlainBM25:
    """The baselines' index: FTS5 BM25 (porter) over text, applicability and tags of verified lessons, and
    the paths of their ``file:`` evidence, with none of gitive's query help."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        from gitive.index.words import STOP_WORDS

        self.stop = STOP_WORDS
        self.db = sqlite3.connect(":memory:")
        self.db.execute("CREATE VIRTUAL TABLE f USING fts5(lesson UNINDEXED, text, applicability, tags, "
                        "tokenize = 'porter unicode61')")
        self.files: dict[str, list[str]] = {}
        for lesson, text, applicability, tags, evidence in conn.execute(
                "SELECT l.id, b.text, b.applicability, l.tags, l.evidence FROM visible_lessons l "
                "JOIN lesson_status s ON s.lesson = l.id JOIN lesson_text t ON t.lesson = l.id "
                "JOIN lesson_bodies b ON b.body_hash = t.body_hash WHERE s.state = 'verified'"):
            self.db.execute("INSERT INTO f VALUES (?,?,?,?)", (lesson, text, applicability, " ".join(json.loads(tags))))
            self.files[lesson] = [e["path"] for e in json.loads(evidence) if e.get("kind") == "file"]

    def search(self, query: str, files: list[str], use_files: bool) -> list[str]:
        from gitive.lessons.recall_present import file_overlap

        words = [w for w in dict.fromkeys(re.findall(r"[^\W_]+", query.lower())) if w not in self.stop]
        scores: dict[str, float] = {}
        if words:
            expression = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
            rows = self.db.execute("SELECT lesson, bm25(f) AS b FROM f WHERE f MATCH ? ORDER BY b LIMIT 50",
                                   (expression,)).fetchall()
            best = rows[0][1] if rows else 0
            scores = {lesson: b / best for lesson, b in rows} if best else {}
        if use_files and files:
            for lesson, cited in self.files.items():
                overlap = file_overlap(cited, files)[0]
                if overlap:
                    scores[lesson] = scores.get(lesson, 0.0) + 0.8 * overlap
        return sorted(scores, key=lambda k: (-scores[k], k))[:TOP]


# -------------------------------------------------------------------------------------------- measuring


_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    from gitive.index.words import tokens

    return {_stem(w) for w in tokens(text, limit=1000)}


def _shared(q: dict[str, Any], lesson: dict[str, Any], symptoms: bool = False) -> set[str]:
    """Content words a question has in common with its lesson's text, applicability and tags (and symptoms)."""
    said = " ".join([lesson["text"], lesson.get("applicability", ""), *lesson.get("tags", []),
                     *(lesson.get("symptoms", []) if symptoms else [])])
    return content_words(q["q"]) & content_words(said)


def shared_words(data: dict[str, Any]) -> tuple[float, float]:
    """The share of questions that have at most one content word in common with the lesson they need: its
    text, applicability and tags; and the same counting its symptoms too."""
    lessons = {x["key"]: x for x in data["lessons"]}
    plain = sum(len(_shared(q, lessons[q["answer"]])) <= 1 for q in data["questions"])
    with_symptoms = sum(len(_shared(q, lessons[q["answer"]], True)) <= 1 for q in data["questions"])
    return plain / len(data["questions"]), with_symptoms / len(data["questions"])


def rank(found: list[str], relevant: str) -> int | None:
    return found.index(relevant) + 1 if relevant in found[:TOP] else None


def summarize(ranks: list[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    return {"recall@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
            "mrr": sum(1 / r for r in ranks if r is not None) / n, "n": len(ranks)}


def project_ids(data: dict[str, Any]) -> dict[str, str]:
    from gitive.core.ids import blake3_hex
    from gitive.team.projects import normalize_url

    return {name: blake3_hex(normalize_url(url).encode()) for name, url in data["projects"].items()}


def modes(backend: Any) -> list[tuple[str, dict[str, Any]]]:
    """(label, how) for every gitive mode measured; the last lexical one is the lexical path's headline."""
    out = [("gitive lexical: question", {"files": False, "re": False}),
           ("gitive lexical: + files", {"files": True, "re": False}),
           ("gitive lexical: + files + rephrasings", {"files": True, "re": True})]
    if backend is not None:
        out += [("gitive dense: + files", {"files": True, "re": False, "dense": True}),
                ("gitive dense: + files + rephrasings", {"files": True, "re": True, "dense": True})]
    return out


def quality(conn: sqlite3.Connection, data: dict[str, Any], ids: dict[str, str], backend: Any
            ) -> tuple[dict[str, dict[str, list[tuple[dict[str, Any], int | None]]]], list[str]]:
    """Ranks per mode and split, and the misses of the lexical headline mode."""
    from gitive.lessons.recall import search

    pids = project_ids(data)
    hidden = {ids[x["key"]] for x in data["lessons"] if x.get("state") in ("proposed", "superseded")}
    plain = PlainBM25(conn)
    out: dict[str, dict[str, list[tuple[dict[str, Any], int | None]]]] = {}
    misses = []

    def record(mode: str, q: dict[str, Any], found: list[str]) -> int | None:
        assert not hidden & set(found), f"a superseded or proposed lesson was returned for {q['q']!r}"
        r = rank(found, ids[q["answer"]])
        out.setdefault(mode, {}).setdefault(q["split"], []).append((q, r))
        return r

    for q in data["questions"]:
        files = list(q.get("files", []))
        record("substring (Beacon)", q, beacon_baseline(conn, q["q"]))
        # Beacon's recall skill tells the agent to search two or three words: its rephrasings, in turn
        found = list(dict.fromkeys(x for r in q.get("re", []) for x in beacon_baseline(conn, r)))
        record("substring (Beacon), rephrasings", q, found)
        record("BM25", q, plain.search(q["q"], files, use_files=False))
        record("BM25 + files", q, plain.search(q["q"], files, use_files=True))
        for label, how in modes(backend):
            found = [r["id"] for r in search(
                conn, q["q"], files=files if how["files"] else [], project=pids[q["in"]], limit=TOP,
                rephrasings=q.get("re", []) if how["re"] else (), semantic=backend if how.get("dense") else None)]
            r = record(label, q, found)
            if label == "gitive lexical: + files + rephrasings" and (r or 99) > 5:
                first = search(conn, q["q"], files=files, project=pids[q["in"]], limit=1, rephrasings=q.get("re", []))
                misses.append(f"[{q['split']}] {q['answer']}: rank {r or '>10'} for {q['q']!r}; first: "
                              + (f"{first[0]['text'][:60]!r}" if first else "nothing"))
    return out, misses


def print_quality(title: str, found: dict[str, dict[str, list[tuple[dict[str, Any], int | None]]]]) -> None:
    print(f"\n{title}")
    print(f"  {'mode':40} {'dev recall@5':>13} {'dev MRR':>8} {'test recall@5':>14} {'test MRR':>9}")
    for mode, splits in found.items():
        dev, test = summarize([r for _, r in splits.get("dev", [])]), summarize([r for _, r in splits.get("test", [])])
        print(f"  {mode:40} {dev['recall@5']:13.3f} {dev['mrr']:8.3f} {test['recall@5']:14.3f} {test['mrr']:9.3f}")
    base = {m: summarize([r for _, r in found[m]["test"]])["recall@5"] for m in ("BM25 + files", "substring (Beacon)")}
    lexical = summarize([r for _, r in found["gitive lexical: + files + rephrasings"]["test"]])["recall@5"]
    print(f"  lexical path on test: recall@5 {lexical:.3f} [target >= 0.85: {c.target(lexical >= 0.85)}]; "
          f"{lexical / base['BM25 + files']:.2f}x BM25 + files, "
          + (f"{lexical / base['substring (Beacon)']:.1f}x substring" if base["substring (Beacon)"] else
             "substring recall@5 is 0"))
    dense = found.get("gitive dense: + files + rephrasings")
    if dense:
        figure = summarize([r for _, r in dense["test"]])["recall@5"]
        print(f"  dense path on test: recall@5 {figure:.3f} [target >= 0.90: {c.target(figure >= 0.90)}]")
    print("  test recall@5 by question shape (a question can have several):")
    for mode in ("BM25 + files", "gitive lexical: + files + rephrasings", "gitive dense: + files + rephrasings"):
        if mode not in found:
            continue
        parts = []
        for shape in SHAPES:
            ranks = [r for q, r in found[mode]["test"] if shape in q["shape"]]
            parts.append(f"{shape} {summarize(ranks)['recall@5']:.2f} ({len(ranks)})")
        print(f"    {mode:40} " + ", ".join(parts))


def latency(conn: sqlite3.Connection, data: dict[str, Any], rounds: int, backend: Any
            ) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of every search over every question, ``rounds`` times, in three modes."""
    from gitive.lessons.recall import search

    pids = project_ids(data)
    plain = PlainBM25(conn)
    out: dict[str, list[tuple[float, float]]] = {BASELINE: [], "question only": [], "files + rephrasings": []}
    if backend is not None:
        out["dense, files + rephrasings"] = []
    for _ in range(rounds):
        for q in data["questions"]:
            start, start_cpu = time.perf_counter(), time.thread_time()
            plain.search(q["q"], [], use_files=False)
            out[BASELINE].append((time.perf_counter() - start, time.thread_time() - start_cpu))
            for mode in [m for m in out if m != BASELINE]:
                kwargs: dict[str, Any] = {"project": pids[q["in"]], "limit": TOP}
                if mode != "question only":
                    kwargs.update(files=q.get("files", []), rephrasings=q.get("re", []))
                if mode.startswith("dense"):
                    kwargs["semantic"] = backend
                start, start_cpu = time.perf_counter(), time.thread_time()
                search(conn, q["q"], **kwargs)
                out[mode].append((time.perf_counter() - start, time.thread_time() - start_cpu))
    return out


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def print_latency(times: dict[str, list[tuple[float, float]]], budget: float = 0.010) -> None:
    floor = _pct([t[0] for t in times[BASELINE]], 0.5)
    for label, found in times.items():
        wall, cpu = [t[0] for t in found], [t[1] for t in found]
        line = (f"    {label:28} ({len(found)}): wall p50 {_pct(wall, 0.5) * 1000:6.2f} ms, p95 "
                f"{_pct(wall, 0.95) * 1000:6.2f} ms;  CPU p50 {_pct(cpu, 0.5) * 1000:6.2f} ms")
        if label == BASELINE:
            print(line)
            continue
        print(f"{line}; {_pct(wall, 0.5) / floor:4.1f}x the baseline   [target p50 <= {budget * 1000:.0f} ms: "
              f"{c.target(_pct(cpu, 0.5) <= budget)} (CPU), {c.target(_pct(wall, 0.5) <= budget)} (wall)]")


def index_size(conn: sqlite3.Connection, path: Path, lessons: int) -> None:
    """The index per lesson at rest (WAL checkpointed), the pages in use (a migrated index keeps the pages
    an old format freed until it is vacuumed), and per table (``dbstat``), with and without the entries."""
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    total = path.stat().st_size + sum(p.stat().st_size for p in path.parent.glob(path.name + "-wal"))
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    used = (conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]) * page
    try:
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()
    except sqlite3.OperationalError:
        rows = []
    entries = sum(size for name, size in rows if name == "entries" or name.startswith("sqlite_autoindex_entries")
                  or name == "entries_kind")
    print(f"  index: {used / lessons:,.0f} B per lesson in use [target <= 2,048 B: {c.target(used / lessons <= 2048)}]"
          f" ({c.mib(used)}; the file is {c.mib(total)}); without the entries table: "
          f"{(used - entries) / lessons:,.0f} B per lesson")
    if rows:
        print("    largest: " + ", ".join(f"{name} {size / lessons:,.0f} B" for name, size in rows[:10]))


# -------------------------------------------------------------------------------------------------- scale


def synthetic(data: dict[str, Any], count: int, paths: list[str], busy: list[str], seed: int,
              files_per_lesson: int = 1) -> list[dict[str, Any]]:
    import random

    rnd = random.Random(seed)
    vocab = data["synthetic"]
    # Words of the labelled lessons themselves, so synthetic lessons also compete on the questions' vocabulary.
    spoken = sorted({w for x in data["lessons"] for w in re.findall(r"[a-z]{4,}", x["text"].lower())})
    out = []
    for n in range(count):
        cited = [busy[n % len(busy)]] if n % 10 == 0 else []
        cited += rnd.sample(paths, files_per_lesson)
        near = " ".join(rnd.sample(spoken, 3))
        out.append({
            "key": f"syn-{seed}-{n}", "kind": rnd.choice(["Gotcha", "Convention", "Correction"]),
            "text": f"{rnd.choice(vocab['components']).capitalize()} {rnd.choice(vocab['problems'])} "
                    f"near {near}: {rnd.choice(vocab['advice'])}.",
            "applicability": rnd.choice(vocab["when"]), "tags": [f"area{n % 40}"],
            "project": rnd.choice(list(data["projects"])), "files": sorted(set(cited))})
    return out


def bulk_write(work: Path, data: dict[str, Any], lessons: list[dict[str, Any]], now: int) -> None:
    """Write ``lessons`` as propose and review write them: the same signed header and review entries, the
    same bodies. Bodies go into the body store in one write: this version's flat body store rewrites the
    tree of every body on each put, which would make building a large hive take hours."""
    from gitive.core.ids import blake3_hex
    from gitive.lessons import model
    from gitive.store import bodies, logs, objects
    from gitive.team.hive import open_hive
    from gitive.team.projects import normalize_url

    hive = open_hive(work)
    blobs: dict[str, str] = {}
    written: dict[str, bytes | None] = {}
    for n, lesson in enumerate(lessons):
        scope = {"project": blake3_hex(normalize_url(_project_url(data, lesson)).encode())}
        items = []
        for path in lesson["files"]:
            if path not in blobs:
                blobs[path] = objects.file_at(hive.project, path).blob
            items.append({"kind": "file", "ref": f"HEAD:{path}", "path": path, "blob": blobs[path],
                          "digest": blake3_hex(path.encode())})
        lesson_id = model.lesson_id(hive.me, scope, lesson["kind"], lesson["text"], lesson["applicability"], None,
                                    items)
        body = model.body(lesson["text"], lesson["applicability"], None)
        digest = model.body_hash(lesson_id, body)
        written[digest] = model.body_bytes(body)
        at = now - _age_days(lesson["key"], 730) * DAY_MS - 3_600_000
        logs.append(hive.project, hive.key, hive.team_id, "project", scope,
                    {"type": "lesson", "id": lesson_id, "kind": lesson["kind"], "evidence": items,
                     "tags": lesson["tags"], "body_hash": digest, "hearsay": False}, at=at)
        logs.append(hive.project, hive.key, hive.team_id, "project", scope,
                    {"type": "review", "about": lesson_id, "approver": "alice", "approved": True,
                     "note": "benchmark", "scope": scope}, at=at + 60_000)
        if n % 5000 == 4999:
            print(f"\n    {n + 1:,} of {len(lessons):,} written", end="", file=sys.stderr, flush=True)
    bodies._rewrite(hive.project, hive.key, hive.team_id, written)  # one snapshot holding every new body


def build_scale(labelled: Path, target: Path, data: dict[str, Any], total: int, dense_files: bool
                ) -> dict[str, Any]:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(labelled, target, symlinks=True)
    (target / "meta.json").unlink()
    work, home = target / "work", target / "home"
    base = json.loads((labelled / "meta.json").read_text())
    paths = [f"svc/{n // 40:03d}/module_{n % 40:02d}.py" for n in range(1500 if dense_files else 800)]
    _write_files(work, paths)
    c.git("add", "-A", cwd=work)
    c.git("commit", "--quiet", "-m", "more files, for the synthetic lessons", cwd=work)
    busy = ["tests/conftest.py", "app/settings.py", "app/models/order.py", "src/server.ts", ".github/workflows/ci.yml"]
    extra = synthetic(data, total - base["lessons"], paths, busy, seed=11, files_per_lesson=3 if dense_files else 1)
    start = time.perf_counter()
    with c.in_dir(work, home):
        bulk_write(work, data, extra, int(time.time() * 1000))
        from gitive.index.refresh import fresh_index
        from gitive.team.hive import open_hive

        with fresh_index(open_hive(work)):
            pass
    meta = {"format": FORMAT_VERSION, "ids": base["ids"], "lessons": base["lessons"] + len(extra),
            "write_seconds": round(time.perf_counter() - start, 1), "synthetic": len(extra)}
    (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


# ---------------------------------------------------------------------------------------------- report


@contextlib.contextmanager
def opened(path: Path) -> Iterator[tuple[Any, sqlite3.Connection]]:
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    with c.in_dir(path / "work", path / "home"):
        hive = open_hive(path / "work")
        with fresh_index(hive) as (conn, _):
            yield hive, conn


def backend_for(model: str | None) -> Any:
    if not model:
        return None
    from gitive.lessons.semantic import Backend

    backend = Backend(model)
    if backend.model() is None:
        raise SystemExit(backend.problem)
    return backend


def measure(path: Path, meta: dict[str, Any], data: dict[str, Any], title: str, args: argparse.Namespace,
            backend: Any, quality_too: bool = True) -> None:
    if args.rebuild_index:
        for old in (path / "work" / ".git" / "gitive").glob("index.sqlite*"):
            old.unlink()
        start = time.perf_counter()
        with opened(path):
            pass
        print(f"  index rebuilt from git in {time.perf_counter() - start:.1f} s")
    with opened(path) as (hive, conn):
        counts = dict(conn.execute("SELECT state, count(*) FROM lesson_status GROUP BY state").fetchall())
        if backend is not None:
            start = time.perf_counter()
            done = backend.rankings(conn, ["warm up"], 1) and 0
            print(f"  dense vectors brought up to date in {time.perf_counter() - start:.1f} s{done or ''}")
        if quality_too:
            found, misses = quality(conn, data, meta["ids"], backend)
            print_quality(f"{title}: {meta['lessons']:,} lessons ({', '.join(f'{n:,} {s}' for s, n in counts.items())}), "
                          f"{len(data['questions'])} questions", found)
            if args.misses:
                print("  outside the first five (lexical: files + rephrasings):")
                for miss in misses:
                    print(f"    {miss}")
        if args.rounds:
            print(f"  search latency in-process on a warm connection ({len(data['questions'])} questions x "
                  f"{args.rounds} rounds):")
            print_latency(latency(conn, data, args.rounds, backend))
        index_size(conn, hive.index_path, meta["lessons"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA, help="the labelled set (YAML)")
    parser.add_argument("--total", type=int, default=10_000, help="lessons in the scale run (0: skip it)")
    parser.add_argument("--dense-files", type=int, default=0,
                        help="also a run at this many lessons citing three files each (issue 9: 50000)")
    parser.add_argument("--model", help="a model2vec model (directory or hub name) for the dense backend")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench",
                        help="where generated hives are cached (default: $TMPDIR/gitive-bench)")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the cached hives")
    parser.add_argument("--rounds", type=int, default=3, help="latency rounds over all questions")
    parser.add_argument("--misses", action="store_true", help="list the questions ranked outside the first five")
    parser.add_argument("--rebuild-index", action="store_true",
                        help="build each hive's index again from git before measuring (else a cached index is "
                             "migrated in place)")
    args = parser.parse_args(argv)

    data = load(args.data)
    args.cache.mkdir(parents=True, exist_ok=True)
    c.hermetic_git(args.cache / "env")
    backend = backend_for(args.model)
    labelled = args.cache / f"recall-v{FORMAT_VERSION}-labelled"
    with c.step(f"labelled hive ({labelled})"):
        meta = load_or_build(labelled, lambda: build_labelled(labelled, data), args.regenerate, data["digest"])
    plain, with_symptoms = shared_words(data)
    print(f"gitive recall benchmark; {c.load()}")
    print(f"labelled set {args.data.name}: {meta['lessons']} lessons written through propose/review in "
          f"{meta['write_seconds']} s; {len(data['questions'])} questions "
          f"({sum(q['split'] == 'dev' for q in data['questions'])} dev, "
          f"{sum(q['split'] == 'test' for q in data['questions'])} test)")
    print(f"questions sharing at most one content word with the lesson they need: {plain:.0%} of its text, "
          f"applicability and tags [target >= 50%: {c.target(plain >= 0.5)}]; {with_symptoms:.0%} counting "
          "its symptoms too")
    measure(labelled, meta, data, "quality at the labelled set", args, backend)
    for total, dense_files in ((args.total, False), (args.dense_files, True)):
        if not total:
            continue
        name = f"recall-v{FORMAT_VERSION}-{'dense-' if dense_files else ''}scale-{total}"
        with c.step(f"scale hive ({args.cache / name})"):
            big = load_or_build(args.cache / name,
                                lambda t=total, d=dense_files, n=name: build_scale(labelled, args.cache / n, data, t, d),
                                args.regenerate, data["digest"])
        what = "three cited files each, 1,500 files" if dense_files else "one cited file each, a tenth on busy files"
        print(f"\nscale set: {big['synthetic']:,} synthetic lessons ({what}) written in {big['write_seconds']} s")
        measure(args.cache / name, big, data, f"at {total:,} lessons", args, backend)
    print(f"\nmachine: {c.load()} after the runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
