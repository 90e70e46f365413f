"""What sealing costs (issue 9 item 3, docs/scopes.md): proposing a sealed lesson, and indexing sealed ones.

Two stores, each a clone of its own bare remote with a team founded in it (``ops.found``), grow to the same
number of lessons: one with plain project lessons (``bodies.put``, ``logs.append``), one with sealed project
lessons (``index.scopes.write``: encrypt, put the sealed body, append the sealed header). Then:

- a fresh index built from each store's refs (``ingest.ingest`` with this machine's key: for the sealed store,
  every record and body is opened), the plain store's in the same run as the baseline;
- in the sealed store, ``lessons.propose`` 30 times each (rules, evidence, catch-up of the index, body, header),
  plain, sealed and personal interleaved, the plain proposals as the baseline.

Targets (set here): a sealed or personal proposal p50 at most 1.5x a plain one (sealing adds a few
microseconds of cryptography and one indexed epoch lookup; near 1.5x means a scan crept in); a fresh index of
sealed lessons at most 1.5x the time of the same number of plain ones.

    .venv/bin/python benchmarks/sealed.py                # 2,000 lessons per store
    .venv/bin/python benchmarks/sealed.py --lessons 300  # quick
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import _common as c

PROPOSALS = 30
TARGET_PROPOSE = 1.5
TARGET_INGEST = 1.5


class Store:
    def __init__(self, base: Path, sealed: bool) -> None:
        from gitive.enrolment import ops

        self.base, self.sealed = base, sealed
        self.remote, self.work, self.home = base / "remote.git", base / "work", base / "home"
        c.git("init", "--quiet", "--bare", self.remote)
        c.git("clone", "--quiet", f"file://{self.remote}", self.work)
        (self.work / "api.proto").write_text('syntax = "proto3";\nservice Billing {}\n')
        c.git("add", "api.proto", cwd=self.work)
        c.git("commit", "--quiet", "-m", "add the api schema", cwd=self.work)
        c.git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=self.work)
        os.environ["GITIVE_HOME"] = str(self.home)
        ops.found(self.work, "alice", "laptop", "bench-team", signer=c.person_key(self.home))
        self.rnd = random.Random(11)
        self.count = 0

    def hive(self) -> Any:
        from gitive.team.hive import open_hive

        os.environ["GITIVE_HOME"] = str(self.home)
        return open_hive(self.work)

    def text(self) -> str:
        self.count += 1
        words = ["retry", "budget", "schema", "lock", "cache", "flag", "export", "webhook", "token", "quota"]
        return " ".join(self.rnd.choice(words) for _ in range(self.rnd.randint(25, 80))) + f" (case {self.count})"

    def grow(self, n: int) -> None:
        from gitive.index import scopes
        from gitive.index.refresh import fresh_index
        from gitive.lessons import evidence, model
        from gitive.lessons.placement import place
        from gitive.store import bodies, logs, maintenance

        hive = self.hive()
        with fresh_index(hive) as (conn, _):
            where = place(hive, conn, "project", self.sealed)
            items = [evidence.resolve(hive.project, "file:api.proto").item]
            for i in range(n):
                text = self.text()
                lesson = model.lesson_id(hive.me, where.scope, "Gotcha", text, "", None, items)
                body = model.body(text, "", None)
                digest = model.body_hash(lesson, body)
                header = {"type": "lesson", "id": lesson, "kind": "Gotcha", "evidence": items, "tags": [],
                          "body_hash": digest, "hearsay": False}
                if self.sealed:
                    scopes.write(hive, conn, where.repo, where.log, where.scope, header, {digest: model.body_bytes(body)})
                else:
                    bodies.put(where.repo, hive.key, hive.team_id, digest, model.body_bytes(body))
                    logs.append(where.repo, hive.key, hive.team_id, where.log, where.scope, header)
                if i % 200 == 199:
                    maintenance.upkeep(where.repo)

    def fresh_ingest(self, runs: int = 3) -> float:
        """Median seconds of a fresh index built from this store's refs with this machine's key."""
        from gitive.index import db, ingest

        hive = self.hive()
        times = []
        for run in range(runs):
            path = self.base / f"bench-{run}.sqlite"
            for suffix in ("", "-wal", "-shm"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)
            with db.connect(path) as conn:
                start = time.perf_counter()
                ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, hive.me, key=hive.machine_key)
                times.append(time.perf_counter() - start)
                lessons = conn.execute("SELECT COUNT(*) FROM lesson_bodies").fetchone()[0]
            assert lessons == self.count, f"{lessons} bodies opened of {self.count}"
        return statistics.median(times)


def propose_times(store: Store) -> dict[str, list[float]]:
    """Plain, sealed and personal proposals, interleaved, in ``store``."""
    from gitive.index.refresh import fresh_index
    from gitive.lessons.propose import propose

    hive = store.hive()
    out: dict[str, list[float]] = {"plain": [], "sealed": [], "personal": []}
    with fresh_index(hive) as (conn, _):
        for _ in range(PROPOSALS):
            for kind, scope, sealed in (("plain", "project", False), ("sealed", "project", True),
                                        ("personal", "personal", None)):
                text = store.text()
                start = time.perf_counter()
                propose(hive, conn, kind="Gotcha", text=text, evidence=["file:api.proto"], scope=scope,
                        sealed=sealed)
                out[kind].append(time.perf_counter() - start)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lessons", type=int, default=2_000)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gitive-bench-sealed-"))
    c.hermetic_git(base / "git")
    print(f"sealed-scope benchmark in {base}; {c.load()}", file=sys.stderr)
    stores = {}
    for name, sealed in (("plain", False), ("sealed", True)):
        with c.step(f"{name} store: team, {args.lessons:,} {name} project lessons"):
            stores[name] = Store(base / name, sealed)
            stores[name].grow(args.lessons)
    with c.step("fresh indexes of both stores, 3 runs each"):
        seconds = {name: store.fresh_ingest() for name, store in stores.items()}
    ratio = seconds["sealed"] / seconds["plain"]
    n = args.lessons
    print(f"fresh index of {n:,} lessons: baseline plain {seconds['plain'] * 1000:.0f} ms "
          f"({n / seconds['plain']:,.0f} lessons/s); sealed, every record and body opened, "
          f"{seconds['sealed'] * 1000:.0f} ms = {ratio:.2f}x -> {c.target(ratio <= TARGET_INGEST)} "
          f"(<= {TARGET_INGEST}x)")
    with c.step(f"{PROPOSALS} proposals of each kind, interleaved"):
        times = propose_times(stores["sealed"])
    plain = statistics.median(times["plain"]) * 1000
    print(f"propose p50 at {n:,} lessons: baseline plain project {plain:.1f} ms")
    for kind in ("sealed", "personal"):
        p50 = statistics.median(times[kind]) * 1000
        ratio = p50 / plain
        print(f"  {kind}: {p50:.1f} ms = {ratio:.2f}x plain -> {c.target(ratio <= TARGET_PROPOSE)} "
              f"(<= {TARGET_PROPOSE}x)")
    print(c.load(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
