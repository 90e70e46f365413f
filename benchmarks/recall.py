"""Recall benchmark: ranking quality on two labelled sets, against BM25 and BM25 + files baselines, and latency.

    .venv/bin/python benchmarks/recall.py                         # all three sets + 10,000 lessons, the default backend
    .venv/bin/python benchmarks/recall.py --model off             # lexical only
    .venv/bin/python benchmarks/recall.py --model DIR             # another dense model (a model2vec directory)
    .venv/bin/python benchmarks/recall.py --set blind --total 0 --misses   # one set, quality only, the misses
    .venv/bin/python benchmarks/recall.py --rebuild-index         # also time the lexical index build from git

What it does:

1. Labelled sets: ``data/recall_hard.yaml`` (lessons and questions by one author, with rephrasings), the
   blind set (``data/recall_blind_lessons.yaml``, with questions in ``data/recall_blind_questions.yaml`` by a
   writer who saw only a one-line summary of each lesson; split dev/test at random with ``SPLIT_SEED``) and
   blind3 (the same lessons, questions in ``data/recall_blind3_questions.yaml`` by another writer from the
   summaries alone, written after every choice of the ranking: all of it test, used for no choice). Each
   lesson set is cached as a hive: a bare remote and a clone holding every cited file, one commit per lesson whose
   evidence is a commit, a team founded with ``gitive init``, then every lesson written through the real
   ``propose`` (in its own project: the clone's ``origin`` is pointed at each project's URL in turn) and
   approved through ``review``. Older versions are superseded, a few lessons stay proposed.
2. Quality: every question through ``gitive.lessons.recall.search`` in its project, dev and test apart (the
   weights were tuned on dev; quote test). Modes: the question alone; with its files and its session context
   (branch, changed files, commit subjects: the blind set's task-start questions); with the rephrasings too
   (the hard set has them); the same with the dense backend. Baselines in the same run: plain BM25 over text,
   applicability and tags (FTS5, porter), and BM25 plus file overlap. recall@5, MRR and hit@1 over the first
   ten, per category (paraphrase, low word overlap, task start, applicability, superseded, error paste,
   sibling project, busy files, at most one shared word), and the sets side by side.
3. Dense build: every shown lesson embedded afresh, timed against the lexical index build from git when
   ``--rebuild-index`` times it in the same run.
4. Scale (cached): the hard hive grown to ``--total`` lessons with synthetic ones written as ``propose``
   writes them. Search latency in-process on a warm connection (wall and CPU), quality again, the index size
   per lesson.
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

HERE = Path(__file__).resolve().parent / "data"
# Each labelled set: its lessons (and questions, when in the same file), and its questions' file when apart.
SETS = {"hard": (HERE / "recall_hard.yaml", None),
        "blind": (HERE / "recall_blind_lessons.yaml", HERE / "recall_blind_questions.yaml"),
        "blind3": (HERE / "recall_blind_lessons.yaml", HERE / "recall_blind3_questions.yaml")}
HIVES = {"hard": "hard", "blind": "blind", "blind3": "blind"}  # the cached hive of each set's lessons
HOLD_OUT = {"blind3"}  # every question a test question: written after the ranking's last choice, used for none
SPLIT_SEED = 20  # the blind set's dev/test split: drawn once with this seed, before any result was looked at
FORMAT_VERSION = 6  # bump when the data set or how it is written changes, so old caches are not reused
DAY_MS = 86_400_000
FOUNDED_DAYS = 800  # the team's age: older than every lesson
TOP = 10
# Question categories, the same names for both sets. The hard set's shapes map onto them (task ->
# task_start, error -> error_paste, its recounted paraphrase -> low_overlap); "superseded" is also given to a
# hard-set question whose answer replaced an older lesson; "few_shared" is recounted for every question.
CATEGORIES = ("paraphrase", "low_overlap", "task_start", "applicability", "superseded", "error_paste", "sibling",
              "crowded", "few_shared")
_HARD_SHAPES = {"task": "task_start", "error": "error_paste", "paraphrase": "low_overlap", "sibling": "sibling",
                "crowded": "crowded"}
BASELINE = "baseline: plain BM25"  # one FTS5 statement over an in-memory table of the same lessons


# ----------------------------------------------------------------------------------------------- the set


def load(path: Path, questions: Path | None = None, hold_out: bool = False) -> dict[str, Any]:
    """A set, with every question's categories (``cats``) and split; the shared-word count is recounted,
    never taken on trust from the file. A set whose questions come apart (the blind set) is split dev/test at
    random with ``SPLIT_SEED``, half each; a hold-out is test only."""
    data = yaml.safe_load(path.read_text())
    if questions is not None:
        data["questions"] = yaml.safe_load(questions.read_text())["questions"]
        _split(data["questions"], hold_out)
    lessons = {lesson["key"]: lesson for lesson in data["lessons"]}
    replaced = {x["replaced_by"] for x in data["lessons"] if x.get("replaced_by")}
    for q in data["questions"]:
        for key in [q["answer"], *q.get("also", [])]:
            if key not in lessons:
                raise SystemExit(f"question {q['q']!r} answers unknown lesson {key}")
        q["cats"] = _categories(q, lessons[q["answer"]], replaced)
        q.setdefault("shape", q["cats"])
    data["digest"] = _digest(data["lessons"])
    return data


def _split(questions: list[dict[str, Any]], hold_out: bool) -> None:
    import random

    if hold_out:
        for q in questions:
            q["split"] = "test"
        return
    order = list(range(len(questions)))
    random.Random(SPLIT_SEED).shuffle(order)
    for rank, n in enumerate(order):
        questions[n]["split"] = "dev" if rank < len(order) // 2 else "test"


def _categories(q: dict[str, Any], lesson: dict[str, Any], replaced: set[str]) -> list[str]:
    given = q.get("category", [])
    cats = [given] if isinstance(given, str) else list(given)
    cats += [_HARD_SHAPES[s] for s in q.get("shape", []) if s in _HARD_SHAPES and s != "paraphrase"]
    if "category" not in q and len(_shared(q, lesson)) <= 1:
        cats.append("low_overlap")
    if "category" not in q and q["answer"] in replaced:
        cats.append("superseded")
    if len(_shared(q, lesson)) <= 1:
        cats.append("few_shared")
    return [c for c in CATEGORIES if c in cats]


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
    return data["projects"][lesson.get("project", next(iter(data["projects"])))]


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
    c.git("remote", "set-url", "origin", next(iter(data["projects"].values())), cwd=work)
    return ids


def _all_paths(data: dict[str, Any]) -> list[str]:
    found = {p for x in data["lessons"] for p in x.get("files", [])}
    found |= {p for q in data["questions"] for p in q.get("files", [])}
    return sorted(found)


def own_projects(work: Path, data: dict[str, Any]) -> None:
    """alice confirms herself owner of every project, as ``gitive project confirm --owner alice`` would."""
    from gitive.index.membership import confirm
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    signer = c.person_key(Path(os.environ["GITIVE_HOME"]))
    for url in data["projects"].values():
        c.git("remote", "set-url", "origin", url, cwd=work)
        hive = open_hive(work)
        with fresh_index(hive) as (conn, _):
            confirm(hive, conn, "alice", owner=True, signer=signer)
    c.git("remote", "set-url", "origin", next(iter(data["projects"].values())), cwd=work)


def build_labelled(target: Path, data: dict[str, Any]) -> dict[str, Any]:

    shutil.rmtree(target, ignore_errors=True)
    remote, work, home = target / "remote.git", target / "work", target / "home"
    c.git("init", "--quiet", "--bare", remote)
    c.git("clone", "--quiet", f"file://{remote}", work)
    _write_files(work, _all_paths(data))
    c.git("add", "-A", cwd=work)
    c.git("commit", "--quiet", "-m", "the files the labelled lessons cite", cwd=work)
    c.git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=work)
    now = int(time.time() * 1000)
    # Founded before the oldest lesson (the scale set's are up to 730 days old), and alice (the admin) owns every
    # project from then on: a project without an owner counts no review, nor one dated before the grant.
    os.environ["GITIVE_NOW_MS"] = str(now - FOUNDED_DAYS * DAY_MS)
    try:
        with c.in_dir(work, home), contextlib.redirect_stdout(sys.stderr):
            if c.run_deciding(["init", "--person", "alice", "--machine", "bench-box"], home) != 0:
                raise RuntimeError("gitive init failed")
            own_projects(work, data)
    finally:
        os.environ.pop("GITIVE_NOW_MS", None)
    start = time.perf_counter()
    with c.in_dir(work, home):
        ids = write_labelled(work, data, _stamps(data["lessons"], now, 400))
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


def rank(found: list[str], relevant: set[str]) -> int | None:
    return next((n for n, lesson in enumerate(found[:TOP], 1) if lesson in relevant), None)


def summarize(ranks: list[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    return {"recall@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
            "mrr": sum(1 / r for r in ranks if r is not None) / n,
            "hit@1": sum(1 for r in ranks if r == 1) / n, "n": len(ranks)}


def project_ids(data: dict[str, Any]) -> dict[str, str]:
    from gitive.core.ids import blake3_hex
    from gitive.team.projects import normalize_url

    return {name: blake3_hex(normalize_url(url).encode()) for name, url in data["projects"].items()}


LEXICAL = "gitive lexical: + files + context + rephrasings"  # the lexical path's headline
DENSE = "gitive dense: + files + context + rephrasings"
BM25_FILES = "BM25 + files"


def modes(backend: Any) -> list[tuple[str, dict[str, Any]]]:
    """(label, how) for every gitive mode measured. "context" is the session's own (branch, changed files,
    commit subjects) where a question gives one: the blind set's task-start questions."""
    out = [("gitive lexical: question", {"files": False, "re": False, "ctx": False}),
           ("gitive lexical: + files + context", {"files": True, "re": False, "ctx": True}),
           (LEXICAL, {"files": True, "re": True, "ctx": True})]
    if backend is not None:
        out += [("gitive dense: + files + context", {"files": True, "re": False, "ctx": True, "dense": True}),
                (DENSE, {"files": True, "re": True, "ctx": True, "dense": True})]
    return out


def session_context(q: dict[str, Any]) -> Any:
    from gitive.lessons.recall_context import SessionContext

    given = q.get("context") or {}
    return SessionContext(branch=given.get("branch", ""), changed=tuple(given.get("changed", [])),
                          commits=tuple(given.get("commits", []))) if given else None


Ranks = dict[str, dict[str, list[tuple[dict[str, Any], int | None]]]]


def quality(conn: sqlite3.Connection, data: dict[str, Any], ids: dict[str, str], backend: Any
            ) -> tuple[Ranks, list[str]]:
    """Ranks per mode and split, and the misses of the headline modes."""
    from gitive.lessons.recall import search

    pids = project_ids(data)
    hidden = {ids[x["key"]] for x in data["lessons"] if x.get("state") in ("proposed", "superseded")}
    plain = PlainBM25(conn)
    out: Ranks = {}
    misses = []

    def record(mode: str, q: dict[str, Any], found: list[str]) -> int | None:
        assert not hidden & set(found), f"a superseded or proposed lesson was returned for {q['q']!r}"
        r = rank(found, {ids[k] for k in [q["answer"], *q.get("also", [])]})
        out.setdefault(mode, {}).setdefault(q["split"], []).append((q, r))
        return r

    for q in data["questions"]:
        files = list(q.get("files", []))
        record("BM25", q, plain.search(q["q"], files, use_files=False))
        record(BM25_FILES, q, plain.search(q["q"], files, use_files=True))
        for label, how in modes(backend):
            kwargs = {"files": files if how["files"] else [], "project": pids[q["in"]], "limit": TOP,
                      "rephrasings": q.get("re", []) if how["re"] else (),
                      "semantic": backend if how.get("dense") else None,
                      "context": session_context(q) if how["ctx"] else None}
            found = search(conn, q["q"], **kwargs)
            r = record(label, q, [x["id"] for x in found])
            if label in (LEXICAL, DENSE) and (r or 99) > 1:
                first = found[0]["text"][:60] if found else "nothing"
                misses.append(f"[{q['split']}] {label.split(':')[0]} {q['answer']}: rank {r or '>10'} for "
                              f"{q['q']!r}; first: {first!r}")
    return out, misses


def print_quality(title: str, found: Ranks) -> dict[str, dict[str, dict[str, float]]]:
    """The table of every mode on dev and test, the targets, and test per category; returns test figures
    per mode and category (``"all"`` for every question) for the side-by-side table."""
    print(f"\n{title}")
    print(f"  {'mode':47} {'dev r@5':>8} {'MRR':>6} {'hit@1':>6}   {'test r@5':>8} {'MRR':>6} {'hit@1':>6}")
    for mode, splits in found.items():
        dev, test = (summarize([r for _, r in splits.get(s, [])]) for s in ("dev", "test"))
        shown = (f"{dev['recall@5']:8.3f} {dev['mrr']:6.3f} {dev['hit@1']:6.3f}" if dev["n"]
                 else f"{'-':>8} {'-':>6} {'-':>6}")  # a hold-out has no dev split
        print(f"  {mode:47} {shown}   {test['recall@5']:8.3f} {test['mrr']:6.3f} {test['hit@1']:6.3f}")
    test_of = {m: summarize([r for _, r in found[m]["test"]]) for m in found}
    lexical = test_of[LEXICAL]["recall@5"]
    print(f"  lexical path on test: recall@5 {lexical:.3f} [target >= 0.85: {c.target(lexical >= 0.85)}]; "
          f"{lexical / max(test_of[BM25_FILES]['recall@5'], 1e-9):.2f}x BM25 + files")
    if DENSE in test_of:
        figure = test_of[DENSE]["recall@5"]
        print(f"  dense path on test: recall@5 {figure:.3f} [target >= 0.90: {c.target(figure >= 0.90)}]")
    table: dict[str, dict[str, dict[str, float]]] = {}
    print("  test by category (recall@5 / hit@1 (questions)); a question can be in several:")
    for mode in (BM25_FILES, LEXICAL, DENSE):
        if mode not in found:
            continue
        table[mode] = {"all": test_of[mode]}
        parts = []
        for cat in CATEGORIES:
            ranks = [r for q, r in found[mode]["test"] if cat in q["cats"]]
            if ranks:
                table[mode][cat] = summarize(ranks)
                parts.append(f"{cat} {table[mode][cat]['recall@5']:.2f}/{table[mode][cat]['hit@1']:.2f} ({len(ranks)})")
        print(f"    {mode:47} " + ", ".join(parts))
    if DENSE in table:
        worse = [cat for cat, fig in table[DENSE].items() if fig["hit@1"] < table[LEXICAL][cat]["hit@1"] - 1e-9]
        print(f"  dense hit@1 no worse than lexical in every category [target: "
              f"{c.target(not worse)}]" + (f": worse in {', '.join(worse)}" if worse else ""))
    task = table[LEXICAL].get("task_start")
    if task:
        best = max(task["recall@5"], table.get(DENSE, {}).get("task_start", task)["recall@5"])
        print(f"  task-start recall@5 on test {best:.3f} [target >= 0.75: {c.target(best >= 0.75)}]")
    return table


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
                kwargs: dict[str, Any] = {"project": pids[q["in"]], "limit": TOP, "semantic": None}
                if mode != "question only":
                    kwargs.update(files=q.get("files", []), rephrasings=q.get("re", []), context=session_context(q))
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
    from gitive.core import decisions, gesture
    from gitive.core.ids import blake3_hex
    from gitive.lessons import model
    from gitive.store import bodies, logs, objects
    from gitive.team.hive import open_hive
    from gitive.team.projects import normalize_url

    hive = open_hive(work)
    signer = c.person_key(Path(os.environ["GITIVE_HOME"]))  # a review counts only with its person's gesture
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
        review = decisions.stamp({"type": "review", "about": lesson_id, "approver": "alice", "approved": True,
                                  "note": "benchmark", "scope": scope}, at + 60_000, 1)  # her first on it
        logs.append(hive.project, hive.key, hive.team_id, "project", scope,
                    gesture.sign(signer, hive.team_id, hive.me, review), at=at + 60_000)
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
    """The dense backend to measure: ``model`` by name, or (None) the one gitive would use unconfigured."""
    from gitive.lessons import semantic

    if model is None:
        model = semantic.configured(None)
    if not model or model.lower() in semantic.OFF:
        return None
    backend = semantic.Backend(model)
    if backend.model() is None:
        raise SystemExit(backend.problem)
    return backend


def measure(path: Path, meta: dict[str, Any], data: dict[str, Any], title: str, args: argparse.Namespace,
            backend: Any, quality_too: bool = True) -> dict[str, Any]:
    lexical_build = None
    if args.rebuild_index:
        for old in (path / "work" / ".git" / "gitive").glob("index.sqlite*"):
            old.unlink()
        start = time.perf_counter()
        with opened(path):
            pass
        lexical_build = time.perf_counter() - start
        print(f"  lexical index rebuilt from git in {lexical_build:.1f} s")
    table: dict[str, Any] = {}
    with opened(path) as (hive, conn):
        counts = dict(conn.execute("SELECT state, count(*) FROM lesson_status GROUP BY state").fetchall())
        if backend is not None:
            dense_build(conn, backend, lexical_build)
        if quality_too:
            found, misses = quality(conn, data, meta["ids"], backend)
            table = print_quality(f"{title}: {meta['lessons']:,} lessons "
                                  f"({', '.join(f'{n:,} {s}' for s, n in counts.items())}), "
                                  f"{len(data['questions'])} questions", found)
            if args.misses:
                print("  not first (headline modes):")
                for miss in misses:
                    print(f"    {miss}")
        if args.rounds:
            print(f"  search latency in-process on a warm connection ({len(data['questions'])} questions x "
                  f"{args.rounds} rounds):")
            print_latency(latency(conn, data, args.rounds, backend))
        index_size(conn, hive.index_path, meta["lessons"])
    return table


def dense_build(conn: sqlite3.Connection, backend: Any, lexical_build: float | None) -> None:
    """Embed every shown lesson afresh (the stored vectors of this model dropped first) and say how long it
    took, against the lexical index build from git when that was timed in the same run."""
    from gitive.lessons import semantic

    key = backend.key
    conn.execute("DELETE FROM lesson_vectors WHERE model = ?", (key,))
    conn.execute("DELETE FROM meta WHERE key = ?", (f"vectors:{key}",))
    start = time.perf_counter()
    made = semantic.update(conn, backend, key)
    took = time.perf_counter() - start
    line = f"  dense vectors for {made:,} lessons built in {took:.2f} s ({backend.name})"
    if lexical_build:
        line += (f"; {took / lexical_build:.2f}x the lexical build, lexical + dense "
                 f"{(lexical_build + took) / lexical_build:.2f}x [target <= 2x: "
                 f"{c.target((lexical_build + took) / lexical_build <= 2)}]")
    print(line)


def side_by_side(tables: dict[str, dict[str, Any]]) -> None:
    """Test figures of every set in one table: recall@5, MRR and hit@1 per category, for BM25 + files, the
    lexical path and the dense path."""
    print("\nthe sets side by side (test split; blind3 all of it): recall@5 / MRR / hit@1 (questions)")
    columns = [(name, mode) for name in tables for mode in (BM25_FILES, LEXICAL, DENSE) if mode in tables[name]]
    short = {BM25_FILES: "BM25+files", LEXICAL: "lexical", DENSE: "dense"}
    print(f"  {'category':14}" + "".join(f" {name + ' ' + short[mode]:>26}" for name, mode in columns))
    for cat in ("all", *CATEGORIES):
        cells = []
        for name, mode in columns:
            fig = tables[name][mode].get(cat)
            cells.append(f"{fig['recall@5']:.2f} / {fig['mrr']:.2f} / {fig['hit@1']:.2f} ({fig['n']:>3})"
                         if fig else "-")
        if any(cell != "-" for cell in cells):
            print(f"  {cat:14}" + "".join(f" {cell:>26}" for cell in cells))


def labelled_hive(args: argparse.Namespace, name: str, data: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    path = args.cache / f"recall-v{FORMAT_VERSION}-{HIVES[name]}-labelled"
    with c.step(f"{name} labelled hive ({path})"):
        meta = load_or_build(path, lambda: build_labelled(path, data), args.regenerate, data["digest"])
    plain, with_symptoms = shared_words(data)
    print(f"\nlabelled set {name}: {meta['lessons']} lessons written through propose/review in "
          f"{meta['write_seconds']} s; {len(data['questions'])} questions "
          f"({sum(q['split'] == 'dev' for q in data['questions'])} dev, "
          f"{sum(q['split'] == 'test' for q in data['questions'])} test); "
          f"{plain:.0%} share at most one content word with the lesson they need ({with_symptoms:.0%} counting "
          "its symptoms)")
    return path, meta


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--set", choices=[*SETS, "all"], default="all", help="which labelled set(s)")
    parser.add_argument("--total", type=int, default=10_000, help="lessons in the scale run (0: skip it)")
    parser.add_argument("--dense-files", type=int, default=0,
                        help="also a run at this many lessons citing three files each (issue 9: 50000)")
    parser.add_argument("--model", default=None,
                        help="the dense backend: 'wordllama' (the packaged model), a model2vec directory, or "
                             "'off'; default: what gitive uses when nothing is configured")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench",
                        help="where generated hives are cached (default: $TMPDIR/gitive-bench)")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the cached hives")
    parser.add_argument("--rounds", type=int, default=3, help="latency rounds over all questions")
    parser.add_argument("--misses", action="store_true", help="list the questions the headline modes miss")
    parser.add_argument("--rebuild-index", action="store_true",
                        help="build each hive's index again from git before measuring (timed; else a cached "
                             "index is migrated in place)")
    args = parser.parse_args(argv)

    names = list(SETS) if args.set == "all" else [args.set]
    sets = {name: load(*SETS[name], name in HOLD_OUT) for name in names
            if SETS[name][1] is None or SETS[name][1].exists()}
    args.cache.mkdir(parents=True, exist_ok=True)
    c.hermetic_git(args.cache / "env")
    backend = backend_for(args.model)
    print(f"gitive recall benchmark; {c.load()}; dense backend: {backend.name if backend else 'none'}")
    tables = {}
    for name, data in sets.items():
        path, meta = labelled_hive(args, name, data)
        tables[name] = measure(path, meta, data, f"quality at the {name} set", args, backend)
    if len(tables) > 1:
        side_by_side(tables)
    data = sets.get("hard") or load(*SETS["hard"])
    labelled = args.cache / f"recall-v{FORMAT_VERSION}-hard-labelled"
    if args.total or args.dense_files:
        load_or_build(labelled, lambda: build_labelled(labelled, data), args.regenerate, data["digest"])
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
        measure(args.cache / name, big, data, f"hard set at {total:,} lessons", args, backend)
    print(f"\nmachine: {c.load()} after the runs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
