"""Prompt-time recall benchmark: how often the lesson gitive injects at a prompt is the right one.

    .venv/bin/python benchmarks/prompt.py            # the labelled set of benchmarks/recall.py (cached hive)
    .venv/bin/python benchmarks/prompt.py --misses   # also list each wrong or missing injection

At UserPromptSubmit (and each harness's equivalent) gitive ranks lessons against the prompt's words and the
file names in it with the recall ``gitive lessons search`` uses, and injects the best one or two not yet
shown, only on a real match (``gitive/lessons/prompt_recall.py``; the daemon runs it when a hook tells it a
prompt arrived, a hook without a daemon runs it itself). This runs that same function over every question of
``benchmarks/data/recall_hard.yaml`` as the prompt, in the question's own project, in a new session (nothing
shown yet), on the hive ``benchmarks/recall.py`` builds (cached), and counts, per split (dev: weights were
tuned there; quote test):

- injected: the share of prompts where something was injected at all;
- top-1 precision: of those, the share whose first injected lesson is the labelled answer;
- answer injected: the share of all prompts where the answer is among the (one or two) injected;
- ``lessons search`` top-1: the share where search's own first result is the answer (the same ranking, with
  no injection threshold: the ceiling top-1 precision can reach);

each with the prompt alone, and with the question's files named in it (a user who says which file). Then
prompts that call for no lesson ("say hi", "run the tests", ...): how many got an injection anyway.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import recall as rb

CHATTER = ["say hi", "thanks!", "run the tests", "commit this", "what does this repository do?", "continue",
           "looks good, ship it", "explain the last change", "can you summarise what you did", "yes please",
           "fix the typo in the README", "how are you?", "undo that", "let's take a break", "open a pull request"]


def _prompt(q: dict[str, Any], with_files: bool) -> str:
    files = q.get("files") or []
    return f"{q['q']} (in {', '.join(files)})" if with_files and files else q["q"]


def evaluate(conn: Any, data: dict[str, Any], ids: dict[str, str], with_files: bool
             ) -> dict[str, dict[str, Any]]:
    from gitive.lessons import prompt_recall
    from gitive.lessons.recall import search

    pids = rb.project_ids(data)
    out: dict[str, dict[str, Any]] = {}
    for q in data["questions"]:
        row = out.setdefault(q["split"], {"n": 0, "injected": 0, "top1": 0, "answered": 0, "search_top1": 0,
                                           "misses": []})
        prompt, answer, project = _prompt(q, with_files), ids[q["answer"]], pids[q["in"]]
        picks = prompt_recall.best(conn, prompt, project, set())
        first = search(conn, prompt, files=prompt_recall.files_in(prompt), project=project, limit=1)
        row["n"] += 1
        row["injected"] += bool(picks)
        row["top1"] += bool(picks) and picks[0]["id"] == answer
        row["answered"] += answer in [p["id"] for p in picks]
        row["search_top1"] += bool(first) and first[0]["id"] == answer
        if not picks or picks[0]["id"] != answer:
            row["misses"].append((prompt, "nothing" if not picks else "another lesson first"))
    return out


def report(title: str, found: dict[str, dict[str, Any]], misses: bool) -> None:
    print(f"{title}")
    for split in ("dev", "test"):
        r = found.get(split)
        if not r:
            continue
        n, inj = r["n"], max(1, r["injected"])
        print(f"  {split:<5} {n:3d} prompts  injected {r['injected'] / n:6.1%}  top-1 precision "
              f"{r['top1'] / inj:6.1%} ({r['top1']}/{r['injected']})  answer injected {r['answered'] / n:6.1%}  "
              f"`lessons search` top-1 {r['search_top1'] / n:6.1%}")
        if misses:
            for prompt, why in r["misses"]:
                print(f"          {why:<22} {prompt[:110]}")


def chatter(conn: Any, data: dict[str, Any]) -> None:
    from gitive.lessons import prompt_recall

    pids = rb.project_ids(data)
    hit = [(p, name) for p in CHATTER for name, pid in pids.items() if prompt_recall.best(conn, p, pid, set())]
    print(f"chatter   {len(CHATTER)} prompts that call for no lesson, in each of {len(pids)} projects: "
          f"{len(hit)} of {len(CHATTER) * len(pids)} got an injection"
          + (f" ({', '.join(sorted({p for p, _ in hit}))})" if hit else ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=rb.DATA, help="the labelled set (YAML)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench")
    parser.add_argument("--regenerate", action="store_true", help="Rebuild the cached hive.")
    parser.add_argument("--misses", action="store_true", help="List the wrong and missing injections.")
    args = parser.parse_args(argv)
    c.hermetic_git(args.cache / "git-env")
    data = rb.load(args.data)
    path = args.cache / f"recall-v{rb.FORMAT_VERSION}-labelled"
    with c.step("the labelled hive (built once, cached)"):
        meta = rb.load_or_build(path, lambda: rb.build_labelled(path, data), args.regenerate, data["digest"])
    with rb.opened(path) as (_, conn):
        for with_files in (False, True):
            title = "prompt alone" if not with_files else "prompt naming the question's files"
            report(f"{title}: {len(data['questions'])} questions, {meta['lessons']} lessons",
                   evaluate(conn, data, meta["ids"], with_files), args.misses)
        chatter(conn, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
