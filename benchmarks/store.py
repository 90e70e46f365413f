"""The body store at scale: propose latency and `.git` size at 1k / 10k / 50k lessons, sync bytes for 1,000
new lessons, and the no-op sync after 10,000 writes (issue 9 items 5 and 7).

One machine founds a team in a clone of a bare remote and its store grows to each size in turn:

- up to 10,000 lessons, one lesson at a time through the write path of ``lessons.propose`` (``bodies.put`` of
  the body, then ``logs.append`` of the signed header), with upkeep on the schedule ``gitive sync`` keeps
  (checked every 50 lessons, as a syncing daemon would);
- past 10,000, bodies in batches of 1,000 through ``bodies.put_many`` (the same snapshot rewrite) and
  headers through ``logs.append``: one at a time would take about 20 minutes here;
- then one ingest, as the next command would do.

At each size the figures are measured on that store: ``lessons.propose`` itself (rules, evidence, catch-up
of the index, body, header), 30 times, against ``logs.append`` of one signed record measured in the same
store at the same moment (the floor every write pays); and the size of ``.git`` without ``git gc`` (objects
and refs; the index, which another target covers, is shown apart). Lesson bodies are realistic: 150-600
characters of text built from the vocabulary of code review notes, an applicability line, no two alike.

    .venv/bin/python benchmarks/store.py                   # 1,000 / 10,000 / 50,000 (about 10 minutes)
    .venv/bin/python benchmarks/store.py --sizes 500 2000  # quick
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

KIB = 1024
PROPOSALS = 30
TARGET_P50_MS = 20.0
TARGET_FLAT = 1.3
TARGET_BYTES_PER_LESSON = 2 * KIB

_SUBJECTS = ["the retry loop in the payment client", "the nightly export job", "the auth middleware",
             "the GraphQL resolver for invoices", "the migration runner", "the S3 upload helper",
             "the feature-flag cache", "the rate limiter", "the webhook dispatcher", "the search indexer",
             "the session store", "the PDF renderer", "the CSV importer", "the billing cron",
             "the gRPC gateway", "the audit log writer"]
_FACTS = ["swallows timeouts and retries forever unless max_attempts is set",
          "must run after the schema lock is released, or it deadlocks on Postgres 14",
          "reads the config once at start-up, so a changed flag needs a restart",
          "treats an empty list as 'all tenants'; pass None to mean none",
          "keeps a connection per worker; raise the pool size with the worker count",
          "drops events larger than 256 KiB without logging anything",
          "needs the UTC offset in every timestamp; naive datetimes shift by the server's zone",
          "is not idempotent: a replayed request charges twice unless the idempotency key is sent",
          "caches negative lookups for ten minutes, which hides a freshly created record",
          "sorts by insertion order in tests but by id in production"]
_ADVICE = ["Check the call site before changing the default.", "The fix is in the caller, not the helper.",
           "Add a regression test with the exact payload from the incident.",
           "Prefer the wrapper in common/, which handles this case.",
           "Ask the owning team before touching the retry budget.", "Log the request id when this happens."]


def lesson_text(i: int, rnd: random.Random) -> tuple[str, str]:
    """A realistic lesson body (150-600 characters) and applicability, unique by its number."""
    parts = [f"{rnd.choice(_SUBJECTS).capitalize()} {rnd.choice(_FACTS)}."]
    while len(" ".join(parts)) < rnd.randint(150, 520):
        parts.append(rnd.choice([*_ADVICE, f"{rnd.choice(_SUBJECTS).capitalize()} {rnd.choice(_FACTS)}."]))
    text = " ".join(parts)[:560] + f" (case {i})"
    return text, f"When editing {rnd.choice(_SUBJECTS)} or its callers."


class Store:
    """One machine's clone of a bare remote, a team founded in it, and a file to cite."""

    def __init__(self, base: Path) -> None:
        from gitive.enrolment import ops

        self.base, self.remote, self.work, self.home = base, base / "remote.git", base / "work", base / "home"
        c.git("init", "--quiet", "--bare", self.remote)
        c.git("clone", "--quiet", f"file://{self.remote}", self.work)
        (self.work / "api.proto").write_text('syntax = "proto3";\nservice Billing {}\n')
        c.git("add", "api.proto", cwd=self.work)
        c.git("commit", "--quiet", "-m", "add the api schema", cwd=self.work)
        c.git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=self.work)
        os.environ["GITIVE_HOME"] = str(self.home)
        ops.found(self.work, "alice", "laptop", "bench-team", signer=c.person_key(self.home))
        c.git("config", "--add", "hive.remote", "origin", cwd=self.work)
        c.git("config", "--add", "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*", cwd=self.work)
        self.rnd = random.Random(7)
        self.count = 0
        self.git_dir = self.work / ".git"

    def hive(self) -> Any:
        from gitive.team.hive import open_hive

        return open_hive(self.work)

    def _header_parts(self, hive: Any, conn: Any) -> tuple[Any, list[dict[str, Any]]]:
        from gitive.lessons import evidence
        from gitive.lessons.placement import place

        return place(hive, conn, "project"), [evidence.resolve(hive.project, "file:api.proto").item]

    def grow(self, to: int, batch: int) -> None:
        """Write lessons until the store holds ``to``: one at a time, or ``batch`` bodies per snapshot."""
        from gitive.index.refresh import fresh_index
        from gitive.lessons import model
        from gitive.store import bodies, logs, maintenance

        hive = self.hive()
        with fresh_index(hive) as (conn, _):
            where, items = self._header_parts(hive, conn)
        while self.count < to:
            n = min(batch, to - self.count)
            made = []
            for _ in range(n):
                self.count += 1
                text, applicability = lesson_text(self.count, self.rnd)
                lesson = model.lesson_id(hive.me, where.scope, "Gotcha", text, applicability, None, items)
                body = model.body(text, applicability, None)
                made.append((lesson, model.body_hash(lesson, body), model.body_bytes(body)))
            if batch == 1:
                bodies.put(where.repo, hive.key, hive.team_id, made[0][1], made[0][2])
            else:
                bodies.put_many(where.repo, hive.key, hive.team_id, {h: data for _, h, data in made})
            for lesson, digest, _ in made:
                logs.append(where.repo, hive.key, hive.team_id, where.log, where.scope,
                            {"type": "lesson", "id": lesson, "kind": "Gotcha", "evidence": items, "tags": [],
                             "body_hash": digest, "hearsay": False})
            if self.count % 50 == 0 or batch > 1:
                maintenance.upkeep(where.repo)  # what the next sync would do, on its schedule
        with fresh_index(hive):
            pass  # the next command's ingest

    def propose_times(self, k: int) -> tuple[list[float], list[float]]:
        """``k`` proposals through ``lessons.propose`` and ``k`` bare ``logs.append`` writes, interleaved."""
        from gitive.index.refresh import fresh_index
        from gitive.lessons.propose import propose
        from gitive.store import logs

        hive = self.hive()
        proposes, appends = [], []
        with fresh_index(hive) as (conn, _):
            where, _ = self._header_parts(hive, conn)
            for _ in range(k):
                self.count += 1
                text, applicability = lesson_text(self.count, self.rnd)
                start = time.perf_counter()
                propose(hive, conn, kind="Gotcha", text=text, applicability=applicability,
                        evidence=["file:api.proto"], scope="project")
                proposes.append(time.perf_counter() - start)
                start = time.perf_counter()
                logs.append(where.repo, hive.key, hive.team_id, "team", {"team": True},
                            {"type": "team", "name": f"note {self.count}", "founder": hive.me})
                appends.append(time.perf_counter() - start)
        return proposes, appends

    def git_bytes(self) -> tuple[int, int, int]:
        """(apparent bytes of .git without the index, disk usage of the same, index bytes)."""
        index = self.git_dir / "gitive"
        apparent = disk = 0
        for f in self.git_dir.rglob("*"):
            if f.is_file() and index not in f.parents:
                st = f.stat()
                apparent += st.st_size
                disk += st.st_blocks * 512
        return apparent, disk, c.dir_size(index)


def _p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


def sync_bytes(store: Store, n: int) -> None:
    """Bytes a sync pushes for ``n`` new lessons, and a peer fetches, against their payload."""
    from gitive.index import sync

    peer = store.base / "peer.git"
    c.git("init", "--quiet", "--bare", peer)
    c.git("remote", "add", "origin", f"file://{store.remote}", cwd=peer)
    fetch = ["fetch", "--quiet", "origin", "+refs/hive/*:refs/hive-remotes/origin/*"]
    sync.run(store.hive())
    c.git(*fetch, cwd=peer)
    remote_before, peer_before = c.dir_size(store.remote / "objects"), c.dir_size(peer / "objects")
    hive = store.hive()
    payload_before = _payload(hive)
    store.grow(store.count + n, 1)
    payload = _payload(hive) - payload_before
    sync.run(store.hive())
    c.git(*fetch, cwd=peer)
    pushed = c.dir_size(store.remote / "objects") - remote_before
    fetched = c.dir_size(peer / "objects") - peer_before
    print(f"sync bytes for {n:,} new lessons: pushed {pushed / KIB:.0f} KiB, a peer fetched {fetched / KIB:.0f} KiB "
          f"({fetched / n:.0f} B per lesson); baseline: their bodies and signed headers are {payload / KIB:.0f} KiB "
          f"-> {fetched / payload:.2f}x the payload (no target set; packs compress and share trees)")


def _payload(hive: Any) -> int:
    """Bytes of every body and lesson header entry this machine wrote so far (what must travel)."""
    from gitive.store import bodies, logs, refs

    repo = hive.project
    total = sum(len(repo[blob].data) for _, blob in bodies.entries(repo, *bodies.own(repo, hive.me)))
    return total + sum(len(e.raw) for e in logs.entries(repo, refs.log_ref(hive.me, "project")))


def noop_sync(store: Store) -> None:
    """After the writes so far: one sync does any upkeep due, then no-op syncs must not repack again."""
    from gitive.store import maintenance

    env = {**os.environ, "GITIVE_HOME": str(store.home)}
    gitive = Path(sys.executable).with_name("gitive")
    c.run([gitive, "sync"], cwd=store.work, env=env)
    state = maintenance.last_upkeep(store.git_dir)
    times = [c.time_command([gitive, "sync"], store.work, env) for _ in range(5)]
    after = maintenance.last_upkeep(store.git_dir)
    raw = [c.time_command(["git", "fetch", "--quiet", "origin", "+refs/hive/*:refs/hive-remotes/origin/*"],
                          store.work) + c.time_command(["git", "push", "--quiet", "--porcelain", "origin",
                                                         "refs/hive/logs/*:refs/hive/logs/*"], store.work)
           for _ in range(5)]
    python = [c.time_command([sys.executable, "-c", "pass"], store.work) for _ in range(5)]
    fast = c.run([sys.executable, "-c", "import sys; from gitive.cli import fastsync; "
                  "sys.stdout.write(str(fastsync.try_noop(['sync'])))"], cwd=store.work, env=env).strip()
    repacked = after != state
    print(f"no-op sync after {store.count:,} writes: upkeep ran again: {'yes' if repacked else 'no'} -> "
          f"{c.target(not repacked)} (must not repack); the fast path answered: {fast.endswith('0')}; "
          f"p50 {c.median(times) * 1000:.0f} ms against git fetch + git push {c.median(raw) * 1000:.0f} ms "
          f"({c.median(times) / c.median(raw):.2f}x) and python -c pass {c.median(python) * 1000:.0f} ms")


def git_size(store: Store) -> None:
    """``.git`` right after the burst of writes, and after the next upkeep once they are past its grace.

    Upkeep keeps gitive's garbage for five minutes (a concurrent writer may be about to use it), and this
    benchmark writes a store's worth of lessons in less than that, where a team takes weeks. So the second
    figure ages the loose objects by the grace period, as five quiet minutes would, and runs the scheduled
    upkeep (``maintenance.upkeep``, what sync runs; not ``git gc`` or ``gitive gc``).
    """
    from gitive.store import maintenance

    burst, _, index = store.git_bytes()
    past = time.time() - 301
    for folder in (store.git_dir / "objects").iterdir():
        if len(folder.name) == 2:
            for obj in folder.iterdir():
                os.utime(obj, (past, past))
    done = maintenance.upkeep(store.hive().project, force=True)
    apparent, disk, _ = store.git_bytes()
    per = apparent / store.count
    print(f"{store.count:,} lessons: .git {per:.0f} B per lesson after upkeep ({apparent / 1024 / 1024:.1f} MiB, "
          f"{disk / 1024 / 1024:.1f} MiB on disk; it pruned {done.pruned:,} objects) -> "
          f"{c.target(per <= TARGET_BYTES_PER_LESSON)} (< {TARGET_BYTES_PER_LESSON // KIB} KiB, no git gc); "
          f"baseline: right after the burst {burst / store.count:.0f} B per lesson; "
          f"index apart: {index / store.count:.0f} B per lesson")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 50_000])
    parser.add_argument("--sync-lessons", type=int, default=1_000)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gitive-bench-store-"))
    c.hermetic_git(base / "git")
    with c.step("bare remote, clone, team (ops.found)"):
        store = Store(base / "store")
    print(f"body store benchmark in {base}; {c.load()}", file=sys.stderr)
    results: dict[int, float] = {}
    sync_done = noop_done = False
    for size in sorted(args.sizes):
        one_by_one = min(size, 10_000)
        if store.count < one_by_one:
            with c.step(f"grow to {one_by_one:,} lessons, one at a time"):
                store.grow(one_by_one, 1)
        if store.count < size:
            with c.step(f"grow to {size:,} lessons, 1,000 bodies per snapshot"):
                store.grow(size, 1_000)
        if not sync_done:
            with c.step(f"{args.sync_lessons:,} more lessons and two syncs"):
                sync_bytes(store, args.sync_lessons)
            sync_done = True
        with c.step(f"{PROPOSALS} proposals"):
            proposes, appends = store.propose_times(PROPOSALS)
        p50, floor = _p50(proposes), _p50(appends)
        results[store.count - PROPOSALS] = p50  # the size it was measured at
        print(f"{store.count:,} lessons: propose p50 {p50:.1f} ms -> {c.target(p50 <= TARGET_P50_MS)} "
              f"(<= {TARGET_P50_MS:.0f} ms); baseline logs.append p50 {floor:.1f} ms ({p50 / floor:.2f}x)")
        git_size(store)
        if store.count >= 10_000 and not noop_done:
            noop_sync(store)
            noop_done = True
    if len(results) > 1:
        small, large = min(results), max(results)
        ratio = results[large] / results[small]
        print(f"propose flatness: p50 at {large:,} / p50 at {small:,} = {ratio:.2f}x -> "
              f"{c.target(ratio <= TARGET_FLAT)} (<= {TARGET_FLAT}x)")
    print(c.load(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
