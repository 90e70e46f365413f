"""Recall benchmark: ranking quality on a labelled set, against Beacon-style substring recall, and latency.

    .venv/bin/python benchmarks/recall.py                  # 303 labelled lessons + synthetic up to 10,000
    .venv/bin/python benchmarks/recall.py --total 0        # quality only (no scale run)
    .venv/bin/python benchmarks/recall.py --misses         # also list the queries gitive ranks badly

What it does:

1. Labelled set (cached): a bare remote and a clone holding every file the lessons cite, a team founded with
   ``gitive init --person alice`` (in-process CLI), then every lesson of ``recall_data.lessons()`` written
   through the real ``gitive.lessons.propose.propose`` and approved through ``gitive.lessons.review.review``
   (older versions are superseded by proposing their successor with ``supersedes``; a few lessons stay
   proposed). Each lesson is stamped with a fixed age (``GITIVE_NOW_MS``) so recency differs.
2. Quality: the 64 queries of ``recall_data.QUERIES`` through ``gitive.lessons.recall.search`` (default:
   verified lessons only), with and without the query's file, and also with the two or three search terms an
   agent following Beacon's recall skill would type. The baseline is Beacon's ``matchesText``
   (hive-overview part 2 §7.7): split the query on white space, lower-case, keep the lessons whose
   ``id + title + body + kind`` contains every term (title = first sentence of the text), newest first.
   Figures: recall@5 (the relevant lesson is in the first five) and MRR over the first ten.
3. Scale (cached): a copy of the labelled hive grows to ``--total`` lessons with synthetic lessons written
   through the same real propose/review path (a tenth of them cite the labelled files, so file overlap is
   diluted as in a busy repository). Search latency is measured in-process on a warm connection (p50/p95
   over every query, with and without its file), quality is measured again at that size, and the wall time
   of ``gitive lessons search QUERY`` is timed as a command (if that command does not exist yet, a
   ``python -c`` that imports recall, opens the index and searches is timed instead, and the output says so).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import recall_data as data

FORMAT_VERSION = 1  # bump when the data set or how it is written changes, so old caches are not reused
DAY_MS = 86_400_000
TOP = 10


# --------------------------------------------------------------------------------------------- writing


@contextlib.contextmanager
def in_hive(work: Path, home: Path) -> Iterator[Any]:
    """:func:`in_dir`, yielding the opened hive."""
    from gitive.team.hive import open_hive

    with c.in_dir(work, home):
        yield open_hive(work)


def _age_days(key: str, span: int) -> int:
    """A fixed pseudo-random age for ``key`` (the same every run)."""
    import blake3

    return int.from_bytes(blake3.blake3(key.encode()).digest()[:4], "big") % span


def _stamps(lessons: list[data.Lesson], now: int, span: int) -> dict[str, int]:
    """When each lesson was proposed: superseded versions 30 days before their successor, proposed ones
    within the last two days."""
    at = {lesson.key: now - _age_days(lesson.key, span) * DAY_MS - 3_600_000 for lesson in lessons}
    for lesson in lessons:
        if lesson.state == "proposed":
            at[lesson.key] = now - _age_days(lesson.key, 2) * DAY_MS - 3_600_000
    for lesson in lessons:
        if lesson.replaced_by:
            at[lesson.key] = at[lesson.replaced_by] - 30 * DAY_MS
    return at


def commit_files(work: Path, paths: list[str], message: str) -> None:
    for path in paths:
        target = work / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"# {path}\n# part of the recall benchmark's imaginary application\n")
    c.git("add", "--", *paths, cwd=work)
    c.git("commit", "--quiet", "-m", message, cwd=work)


def write_lessons(hive: Any, lessons: list[data.Lesson], stamps: dict[str, int], ids: dict[str, str],
                  progress: str) -> None:
    """Propose each lesson and approve the verified ones, oldest first, through the real library calls."""
    from gitive.index.refresh import fresh_index
    from gitive.lessons.propose import propose
    from gitive.lessons.review import review

    signer = c.person_key(Path(os.environ["GITIVE_HOME"]))
    replaces = {lesson.replaced_by: lesson.key for lesson in lessons if lesson.replaced_by}  # new -> old
    order = sorted(lessons, key=lambda lesson: stamps[lesson.key])
    start = time.perf_counter()
    with fresh_index(hive) as (conn, _):
        for n, lesson in enumerate(order, 1):
            os.environ["GITIVE_NOW_MS"] = str(stamps[lesson.key])
            made = propose(hive, conn, kind=lesson.kind, text=lesson.text, applicability=lesson.applicability,
                           evidence=[f"file:{f}" for f in lesson.files], tags=list(lesson.tags),
                           scope=lesson.scope, supersedes=ids.get(replaces.get(lesson.key, "")))
            ids[lesson.key] = made.id
            if lesson.state != "proposed":
                os.environ["GITIVE_NOW_MS"] = str(stamps[lesson.key] + 60_000)
                review(hive, conn, made.id, approved=True, note="benchmark", signer=signer)
            if n % 500 == 0:
                print(f"\n    {progress}: {n:,} of {len(order):,} written, "
                      f"{(time.perf_counter() - start) / n * 1000:.0f} ms per lesson", end="", file=sys.stderr,
                      flush=True)
            if n % 2500 == 0:
                # Every bodies.put writes a new tree of all bodies; drop the unreachable ones as gc would.
                c.git("gc", "--quiet", "--prune=now", cwd=hive.project.workdir)
    os.environ.pop("GITIVE_NOW_MS", None)


def build_labelled(target: Path) -> dict[str, Any]:

    shutil.rmtree(target, ignore_errors=True)
    remote, work, home = target / "remote.git", target / "work", target / "home"
    c.git("init", "--quiet", "--bare", remote)
    c.git("clone", "--quiet", f"file://{remote}", work)
    commit_files(work, data.files(), "the files the labelled lessons cite")
    c.git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=work)
    lessons = data.lessons()
    now = int(time.time() * 1000)
    stamps = _stamps(lessons, now, 400)
    ids: dict[str, str] = {}
    with c.in_dir(work, home), contextlib.redirect_stdout(sys.stderr):
        if c.run_deciding(["init", "--person", "alice", "--machine", "bench-box"], home) != 0:
            raise RuntimeError("gitive init failed")
    with in_hive(work, home) as hive:
        start = time.perf_counter()
        write_lessons(hive, lessons, stamps, ids, "labelled")
        seconds = time.perf_counter() - start
    meta = {"format": FORMAT_VERSION, "ids": ids, "lessons": len(lessons), "write_seconds": round(seconds, 1)}
    (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def build_scale(labelled: Path, target: Path, total: int) -> dict[str, Any]:
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(labelled, target, symlinks=True)
    (target / "meta.json").unlink()
    work, home = target / "work", target / "home"
    base = json.loads((labelled / "meta.json").read_text())
    paths = data.synthetic_paths()
    commit_files(work, paths, "more files, for the synthetic lessons")
    extra = data.synthetic(total - base["lessons"], paths, data.files())
    now = int(time.time() * 1000)
    stamps = _stamps(extra, now, 730)
    ids = dict(base["ids"])
    with in_hive(work, home) as hive:
        start = time.perf_counter()
        write_lessons(hive, extra, stamps, ids, "synthetic")
        seconds = time.perf_counter() - start
    meta = {"format": FORMAT_VERSION, "ids": ids, "lessons": base["lessons"] + len(extra),
            "write_seconds": round(seconds, 1), "synthetic": len(extra)}
    (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return meta


def load_or_build(path: Path, build: Any, regenerate: bool) -> dict[str, Any]:
    meta_file = path / "meta.json"
    if not regenerate and meta_file.exists():
        meta = json.loads(meta_file.read_text())
        if meta.get("format") == FORMAT_VERSION:
            return meta
    return build()


# ------------------------------------------------------------------------------------------ measuring


def beacon_baseline(conn: Any, query: str) -> list[str]:
    """Beacon's ``ListMemories`` + ``matchesText``: every white-space term, lower-cased, a substring of
    ``id + title + body + kind``; newest first; at most 20 (``search_memory``'s cap)."""
    terms = query.lower().split()
    rows = conn.execute(
        "SELECT l.id, l.kind, b.text, l.at FROM visible_lessons l JOIN lesson_status s ON s.lesson = l.id "
        "JOIN lesson_bodies b ON b.body_hash = l.body_hash WHERE s.state = 'verified' ORDER BY l.at DESC, l.id"
    ).fetchall()
    found = []
    for lesson, kind, text, _ in rows:
        title = text.split(". ")[0]
        haystack = f"{lesson} {title} {text} {kind}".lower()
        if all(term in haystack for term in terms):
            found.append(lesson)
            if len(found) == 20:
                break
    return found


def rank(found: list[str], relevant: str) -> int | None:
    return found.index(relevant) + 1 if relevant in found[:TOP] else None


def summarize(ranks: list[int | None]) -> dict[str, float]:
    return {"recall@5": sum(1 for r in ranks if r is not None and r <= 5) / len(ranks),
            "recall@1": sum(1 for r in ranks if r == 1) / len(ranks),
            "mrr": sum(1 / r for r in ranks if r is not None) / len(ranks)}


def quality(conn: Any, ids: dict[str, str], project: str) -> tuple[dict[str, dict[str, float]], list[str]]:
    """Figures for every mode over all queries, and the queries gitive (question + file) ranks outside 5."""
    from gitive.lessons.recall import search

    hidden = {ids[lesson.key] for lesson in data.lessons() if lesson.state != "verified"}
    modes: dict[str, list[int | None]] = {m: [] for m in (
        "gitive: question + file", "gitive: question only", "gitive: terms + file", "gitive: terms only",
        "baseline: question", "baseline: terms")}
    misses = []
    for q in data.QUERIES:
        relevant = ids[q.relevant]
        for mode, text, files in (("question + file", q.text, [q.file]), ("question only", q.text, []),
                                  ("terms + file", q.terms, [q.file]), ("terms only", q.terms, [])):
            found = [r["id"] for r in search(conn, text, files=files, project=project, limit=TOP)]
            assert not hidden & set(found), f"a superseded or proposed lesson was returned for {text!r}"
            modes[f"gitive: {mode}"].append(rank(found, relevant))
            if mode == "question + file" and (rank(found, relevant) or 99) > 5:
                top = search(conn, text, files=files, project=project, limit=1)
                misses.append(f"{q.relevant}: rank {rank(found, relevant) or '>10'} for {text!r}; first: "
                              f"{top[0]['text'][:70]!r} {top[0]['reasons']}")
        modes["baseline: question"].append(rank(beacon_baseline(conn, q.text), relevant))
        modes["baseline: terms"].append(rank(beacon_baseline(conn, q.terms), relevant))
    return {mode: summarize(ranks) for mode, ranks in modes.items()}, misses


def latency(conn: Any, project: str, rounds: int) -> dict[str, list[tuple[float, float]]]:
    """(wall, CPU) seconds of every search, over every query with and without its file, ``rounds`` times.

    On a busy machine the wall time includes waiting for a core; the CPU time (this thread) is the work the
    search itself did.
    """
    from gitive.lessons.recall import search

    out: dict[str, list[tuple[float, float]]] = {"with file": [], "without file": []}
    for _ in range(rounds):
        for q in data.QUERIES:
            for mode, files in (("with file", [q.file]), ("without file", [])):
                start, start_cpu = time.perf_counter(), time.thread_time()
                search(conn, q.text, files=files, project=project, limit=TOP)
                out[mode].append((time.perf_counter() - start, time.thread_time() - start_cpu))
    return out


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))]


def print_latency(times: dict[str, list[tuple[float, float]]]) -> None:
    every = [t for found in times.values() for t in found]
    for label, found in (("all searches", every), *times.items()):
        wall, cpu = [t[0] for t in found], [t[1] for t in found]
        line = (f"    {label:13} ({len(found)}): wall p50 {_pct(wall, 0.5) * 1000:6.2f} ms, p95 "
                f"{_pct(wall, 0.95) * 1000:6.2f} ms;  CPU p50 {_pct(cpu, 0.5) * 1000:6.2f} ms, p95 "
                f"{_pct(cpu, 0.95) * 1000:6.2f} ms")
        if label == "all searches":
            line += (f"   [target p50 <= 10 ms: wall {c.target(_pct(wall, 0.5) <= 0.010)}, "
                     f"CPU {c.target(_pct(cpu, 0.5) <= 0.010)}]")
        print(line)


def calibration() -> float:
    """CPU seconds of ``sum(range(10**7))`` here (about 0.12 to 0.2 s on a current laptop), to scale the
    latency figures to another machine."""
    start = time.thread_time()
    sum(range(10**7))
    return time.thread_time() - start


def open_time(hive: Any, runs: int = 5) -> float:
    """Median seconds to open the index with ``fresh_index`` when nothing is new (what every command pays)."""
    from gitive.index.refresh import fresh_index

    times = []
    for _ in range(runs):
        start = time.perf_counter()
        with fresh_index(hive):
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def cli_wall(work: Path, home: Path, runs: int) -> tuple[str, float, float]:
    """Median wall time of the search command (or its stand-in) as a subprocess, start-up included, and of
    ``gitive --version`` for comparison."""
    env = {**os.environ, "GITIVE_HOME": str(home)}
    env.pop("GITIVE_NOW_MS", None)
    gitive = Path(sys.executable).with_name("gitive")
    query, path = data.QUERIES[0].text, data.QUERIES[0].file
    probe = subprocess.run([gitive, "lessons", "search", "--help"], cwd=work, env=env, capture_output=True)
    if probe.returncode == 0:
        cmd = [str(gitive), "lessons", "search", query, "--files", path, "--json"]
        label = f"`gitive lessons search {query!r} --files {path} --json`"
    else:
        code = ("from gitive.lessons.recall import search\n"
                "from gitive.team.hive import open_hive\nfrom gitive.team.projects import project_id\n"
                "from gitive.index.refresh import fresh_index\nimport json, sys\n"
                "hive = open_hive()\nwith fresh_index(hive) as (conn, _):\n"
                "    print(json.dumps(search(conn, sys.argv[1], files=[sys.argv[2]], "
                "project=project_id(hive.project), repo=hive.project)))\n")
        cmd = [sys.executable, "-c", code, query, path]
        label = ("`python -c` stand-in (`gitive lessons search` does not exist yet): import recall, open_hive, "
                 "fresh_index (no-op ingest), search with --files and repo (stale check), print JSON")
    c.run(cmd, cwd=work, env=env)  # warm the page cache once
    times = [c.time_command(cmd, work, env) for _ in range(runs)]
    startup = [c.time_command([gitive, "--version"], work, env) for _ in range(runs)]
    return label, statistics.median(times), statistics.median(startup)


# ---------------------------------------------------------------------------------------------- report


def print_quality(title: str, figures: dict[str, dict[str, float]]) -> None:
    print(f"\n{title}")
    for mode, f in figures.items():
        print(f"  {mode:26} recall@5 {f['recall@5']:.3f}   MRR@10 {f['mrr']:.3f}   recall@1 {f['recall@1']:.3f}")
    ours, base = figures["gitive: question + file"]["recall@5"], figures["baseline: question"]["recall@5"]
    ratio = f"{ours / base:.1f}x" if base else "the baseline's recall@5 is 0"
    print(f"  target recall@5 >= 0.85 with the file: {c.target(ours >= 0.85)}; "
          f"vs baseline (question): {ratio} [target >= 2x: {c.target(ours >= 2 * base)}]")


def measure(path: Path, meta: dict[str, Any], title: str, show_misses: bool, rounds: int,
            cli_runs: int) -> None:
    from gitive.index.refresh import fresh_index
    from gitive.team.projects import project_id

    work, home = path / "work", path / "home"
    with in_hive(work, home) as hive:
        project = project_id(hive.project)
        with fresh_index(hive) as (conn, _):
            count = conn.execute("SELECT state, count(*) FROM lesson_status GROUP BY state").fetchall()
            figures, misses = quality(conn, meta["ids"], project)
            print_quality(f"{title}: {meta['lessons']:,} lessons written ({', '.join(f'{n:,} {s}' for s, n in count)}"
                          f"), {len(data.QUERIES)} queries", figures)
            if show_misses and misses:
                print("  outside the first five (question + file):")
                for miss in misses:
                    print(f"    {miss}")
            if rounds:
                print(f"  search latency in-process on a warm connection ({len(data.QUERIES)} queries x "
                      f"{rounds} rounds, each with and without its file):")
                print_latency(latency(conn, project, rounds))
        print(f"  opening the index with fresh_index (no-op ingest), median of 5: {c.ms(open_time(hive))}")
    if cli_runs:
        label, seconds, startup = cli_wall(work, home, cli_runs)
        print(f"  command wall time, median of {cli_runs}: {c.ms(seconds)} for {label}; "
              f"`gitive --version` alone (interpreter and CLI start-up): {c.ms(startup)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--total", type=int, default=10_000, help="lessons in the scale run (0: skip it)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench",
                        help="where generated hives are cached (default: $TMPDIR/gitive-bench)")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the cached hives")
    parser.add_argument("--rounds", type=int, default=5, help="latency rounds over all queries")
    parser.add_argument("--cli-runs", type=int, default=7, help="command runs timed (median)")
    parser.add_argument("--misses", action="store_true", help="list the queries ranked outside the first five")
    args = parser.parse_args(argv)

    args.cache.mkdir(parents=True, exist_ok=True)
    c.hermetic_git(args.cache / "env")
    labelled = args.cache / f"recall-v{FORMAT_VERSION}-labelled"
    with c.step(f"labelled hive ({labelled})"):
        meta = load_or_build(labelled, lambda: build_labelled(labelled), args.regenerate)
    print(f"gitive recall benchmark; {c.load()}")
    print(f"labelled set: {meta['lessons']} lessons written through propose/review in {meta['write_seconds']} s")
    measure(labelled, meta, "quality at the labelled set", args.misses, args.rounds, 0)
    if args.total:
        scale = args.cache / f"recall-v{FORMAT_VERSION}-scale-{args.total}"
        with c.step(f"scale hive ({scale})"):
            big = load_or_build(scale, lambda: build_scale(labelled, scale, args.total), args.regenerate)
        print(f"\nscale set: {big['synthetic']:,} synthetic lessons added through propose/review in "
              f"{big['write_seconds']} s")
        measure(scale, big, f"at {args.total:,} lessons", args.misses, args.rounds, args.cli_runs)
    print(f"\nmachine: {c.load()} after the runs; sum(range(10**7)) took {calibration():.2f} s CPU here "
          f"(about 0.12 to 0.2 s on a current laptop)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
