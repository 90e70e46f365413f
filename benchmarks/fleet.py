"""A team of a thousand machines, simulated: what one machine pays for the size of the team.

    .venv/bin/python benchmarks/fleet.py                  # 1,000 machines, 5 logs each, ~1,000,000 entries
    .venv/bin/python benchmarks/fleet.py --quick          # 100 machines, 20,000 entries: a minute
    .venv/bin/python benchmarks/fleet.py --machines 300 --entries 400 --live 100 --runs 3

The data (cached under ``$TMPDIR/gitive-bench/fleet-…``, ``--regenerate`` rebuilds it) is a real gitive team on
a bare remote: founded with ``gitive.enrolment.ops.found``, every machine admitted by a founder-gestured
``member`` entry (``logs.append``), and for every machine five logs of signed v2 entries (hash-linked, in
gitive's exact canonical commit form, written with ``git fast-import`` as benchmarks/ingest.py does):

- ``team``: team-scope lesson headers and citations;
- ``mail``: messages to teammates and acks of messages received;
- three ``project-<16 hex>`` logs, one for each of the three repositories (of ``--projects``) the machine works in:
  project-scope lesson headers and citations.

Entries are spread over ``--years`` of history (timestamps in order per log). ``--live`` machines also hold a
presence ref (a signed snapshot, written with ``gitive.store.presence.publish``) with one live session each.

What is measured, each against a baseline from the same run:

1. ``refs``: the refs the remote advertises, and a ``git ls-remote`` of ``refs/hive/`` against one of
   ``refs/heads/`` (protocol v2 sends only the refs asked for: the cost of a probe grows with the refs it
   names, not with the repository);
2. ``first sync``: a newcomer's first ``gitive sync`` (the real CLI: fetch, verify, index) into a fresh clone,
   against a bare ``git fetch`` of the same refs: time, bytes received, index size;
3. ``no-op sync``: the real ``gitive sync`` with nothing new, against ``git fetch`` + ``git push`` of the same
   refspecs (median of ``--runs`` interleaved runs);
4. ``3 of 200``: how much of what a machine fetched and indexed concerns it (its team's team and mail logs, and
   the project logs of its three projects);
5. ``presence``: every live machine rewrites its presence (as its daemon does when a session changes); then one
   ``gitive sync`` of an observer, against a no-op sync, and the bytes it fetched.

Progress goes to stderr, figures to stdout. Where a figure grows with the team rather than with the machine's
own work, docs/store.md ("Where the design stops scaling") says so, with these figures.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

FORMAT_VERSION = 2  # bump when the generated data changes shape, so old caches are not reused
DAY_MS = 86_400_000
TEAM_SCOPE: dict[str, Any] = {"team": True}
PROJECTS_PER_MACHINE = 3
# The share of each log's entries by kind: a lesson header for every few citations; mail is half messages.
LESSON_EVERY = 4


def key_of(index: int) -> Any:
    return c.seeded_key(b"gitive-fleet-machine", index)


def machine_of(index: int) -> str:
    return c.seeded_machine(b"gitive-fleet-machine", index)


def project_of(number: int) -> str:
    import blake3

    return blake3.blake3(b"gitive-fleet-project/%d" % number).hexdigest()


def projects_of(index: int, projects: int) -> list[int]:
    """The repositories machine ``index`` works in: three of ``projects``, spread evenly over the fleet."""
    first = (index * 7) % projects
    step = projects // PROJECTS_PER_MACHINE  # at least 1 (parse refuses fewer projects): the three are distinct
    return [(first + k * step) % projects for k in range(PROJECTS_PER_MACHINE)]


def _lesson(seed: bytes, n: int) -> dict[str, Any]:
    return {"type": "lesson", "id": c.hex_of(b"lesson/" + seed), "kind": ("Gotcha", "Convention", "Correction")[n % 3],
            "evidence": [{"kind": "Commit", "ref": c.hex_of(b"commit/" + seed)[:40], "digest": c.hex_of(b"d/" + seed)}],
            "tags": ["fleet", f"t{n % 17}"], "body_hash": c.hex_of(b"body/" + seed), "hearsay": False}


def _citation(seed: bytes, lesson: str, n: int) -> dict[str, Any]:
    return {"type": "citation", "lesson": lesson, "session": f"s-{c.hex_of(seed)[:12]}", "success": n % 5 != 0,
            "tests_passed": n % 7 != 0, "reverted": False}


def _mail(index: int, seq: int, at: int, seed: bytes, machines: int) -> dict[str, Any]:
    peer = (index + 1 + seq % 13) % machines
    if seq % 2:
        return {"type": "message", "id": c.ulid_of(at, seed), "from": f"dev{index}/api-claude", "to": f"dev{peer}",
                "recipients": [{"machine": machine_of(peer), "session": None}],
                "body": f"heads-up {seq}: the retry budget in net/retry.py changed; rebase before you touch it",
                "from_person": False}
    return {"type": "ack", "message": c.ulid_of(at - 1000, b"m/" + seed), "state": "read", "session": "api-claude"}


def _records(index: int, log: str, entries: int, machines: int, base_at: int, span: int
             ) -> list[tuple[int, dict[str, Any], dict[str, Any]]]:
    """(at, scope, record) of one log, in time order."""
    from gitive.core.records import project_log

    scope: dict[str, Any] = TEAM_SCOPE
    if log.startswith("project:"):
        project = log.split(":", 1)[1]
        scope, log = {"project": project}, project_log(project)
    out, lesson = [], None
    for seq in range(1, entries + 1):
        at = base_at + span * seq // (entries + 1) + index
        seed = f"{index}/{log}/{seq}".encode()
        if log == "mail":
            record = _mail(index, seq, at, seed, machines)
        elif lesson is None or seq % LESSON_EVERY == 1:
            record = _lesson(seed, seq)
            lesson = record["id"]
        else:
            record = _citation(seed, lesson, seq)
        out.append((at, scope, record))
    return out


def _machine_stream(job: tuple[int, str, int, int, int, int, int]) -> bytes:
    """``git fast-import`` commands for one machine's five logs (see ``benchmarks/ingest.py``)."""
    from gitive.core.records import project_log

    index, team_id, per_log, machines, projects, base_at, span = job
    key = key_of(index)
    me = machine_of(index)
    out = io.BytesIO()
    names = ["team", "mail"] + [f"project:{project_of(p)}" for p in projects_of(index, projects)]
    for name in names:
        log = project_log(name.split(":", 1)[1]) if name.startswith("project:") else name
        c.log_stream(out, key, team_id, me, log, _records(index, name, per_log, machines, base_at, span))
    return out.getvalue()


def generate(data_dir: Path, a: argparse.Namespace) -> dict[str, Any]:
    """Build the cached data set under ``data_dir`` (removed first) and return its description."""
    from gitive.core.clock import now_ms

    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    per_log = max(1, a.entries // 5)
    print(f"generating {a.machines} machines x 5 logs x {per_log} entries in {data_dir}", file=sys.stderr)
    start = time.perf_counter()
    with c.step("bare remote, founder's clone, gitive team (ops.found)"):
        team = c.found_team(data_dir, team="fleet-team")
    with c.step(f"founder admits {a.machines} machines (logs.append of gestured member records)"):
        c.admit(team, [(machine_of(i), f"dev{i}", f"box{i}") for i in range(a.machines)])
        c.git("push", "--quiet", "origin", "refs/hive/*:refs/hive/*", cwd=team.work)
    span = a.years * 365 * DAY_MS
    base_at = now_ms() - span - DAY_MS
    with c.step(f"sign {a.machines * 5 * per_log:,} entries and git fast-import them into the remote"):
        jobs = [(i, team.team_id, per_log, a.machines, a.projects, base_at, span) for i in range(a.machines)]
        c.fast_import(team.remote, _machine_stream, jobs, chunksize=4)
    with c.step("git gc on the remote (as a host would have packed it)"):
        c.git("gc", "--quiet", cwd=team.remote)
    with c.step("validate samples (every log of three machines verifies as a whole chain)"):
        _validate(team.remote, team.team_id, a.machines, a.projects, per_log)
    meta = {"format": FORMAT_VERSION, "machines": a.machines, "per_log": per_log, "projects": a.projects,
            "years": a.years, "team_id": team.team_id, "founder": team.founder, "entries": a.machines * 5 * per_log,
            "objects_bytes": c.dir_size(team.remote / "objects"),
            "generate_seconds": round(time.perf_counter() - start, 1)}
    (data_dir / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def _validate(remote: Path, team_id: str, machines: int, projects: int, per_log: int) -> None:
    import pygit2

    from gitive.core.records import project_log
    from gitive.store import refs, verify

    repo = pygit2.Repository(str(remote))
    for i in sorted({0, machines // 2, machines - 1}):
        me = machine_of(i)
        for log in ["team", "mail"] + [project_log(project_of(p)) for p in projects_of(i, projects)]:
            ref = refs.log_ref(me, log)
            tip = refs.tip(repo, ref)
            assert tip, f"{ref} is missing"
            result, _ = verify.verify_chain(repo, team_id, ref, me, log, tip, lambda _oid: None)
            assert result.problem is None, f"{ref}: {result.problem}"
            assert len(result.entries) == per_log, f"{ref}: {len(result.entries)} entries, expected {per_log}"


def load_or_generate(cache: Path, a: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    data_dir = cache / f"fleet-v{FORMAT_VERSION}-m{a.machines}-e{a.entries}-p{a.projects}-y{a.years}"
    meta_file = data_dir / "meta.json"
    if not a.regenerate and meta_file.exists():
        return data_dir, json.loads(meta_file.read_text())
    return data_dir, generate(data_dir, a)


# ------------------------------------------------------------------------------------------- phases


def _home(run_dir: Path, name: str, index: int) -> Path:
    """A ``GITIVE_HOME`` holding fleet machine ``index``'s key."""
    home = run_dir / name
    home.mkdir(mode=0o700)
    (home / "machine.key").write_text(key_of(index).encode().hex() + "\n")
    (home / "machine.key").chmod(0o600)
    return home


def _clone(remote: Path, dest: Path, meta: dict[str, Any]) -> Path:
    """A clone of the project configured as ``gitive join`` would, with no hive refs fetched yet."""
    c.git("clone", "--quiet", f"file://{remote}", dest)
    c.git("config", "hive.team", meta["team_id"], cwd=dest)
    c.git("config", "hive.founder", meta["founder"], cwd=dest)
    c.git("config", "--add", "hive.remote", "origin", cwd=dest)
    c.git("config", "--add", "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*", cwd=dest)
    return dest


def _pack_bytes(clone: Path) -> int:
    return c.dir_size(clone / ".git" / "objects")


def _index_bytes(clone: Path) -> int:
    return sum(f.stat().st_size for f in (clone / ".git").rglob("index.sqlite*") if f.is_file())


def _sync_json(clone: Path, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    seconds, out = c.timed(lambda: c.run([c_gitive(), "sync", "--json"], cwd=clone, env=env))
    return seconds, json.loads(out)


def c_gitive() -> str:
    here = Path(sys.executable).parent / "gitive"
    found = str(here) if here.exists() else shutil.which("gitive")
    if not found:
        raise SystemExit("no `gitive` command found: run with the project's venv (.venv/bin/python)")
    return found


FETCH = ["git", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin",
         "+refs/hive/*:refs/hive-remotes/origin/*"]  # what gitive.store.sync.fetch runs


def refs_figures(remote: Path, probe_dir: Path, runs: int) -> dict[str, Any]:
    """What the remote advertises, and the cost of asking for the hive's refs against the branches'."""
    every = c.git("ls-remote", f"file://{remote}", cwd=probe_dir)
    hive = [line for line in every.splitlines() if "\trefs/hive/" in line]
    timings: dict[str, list[float]] = {"hive": [], "heads": []}
    for _ in range(runs):
        timings["hive"].append(c.time_command(["git", "-c", "protocol.version=2", "ls-remote", f"file://{remote}",
                                               "refs/hive/"], probe_dir))
        timings["heads"].append(c.time_command(["git", "-c", "protocol.version=2", "ls-remote", f"file://{remote}",
                                                "refs/heads/"], probe_dir))
    return {"refs": len(every.splitlines()), "hive_refs": len(hive), "advert_bytes": len(every.encode()),
            "ls_hive": c.median(timings["hive"]), "ls_heads": c.median(timings["heads"])}


def first_sync(data_dir: Path, run_dir: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """A newcomer's first ``gitive sync`` against a bare ``git fetch`` of the same refs into another clone."""
    remote = data_dir / "remote.git"
    bare = _clone(remote, run_dir / "fetch-only", meta)
    before = _pack_bytes(bare)
    fetch_s, _ = c.timed(lambda: c.run(FETCH, cwd=bare))
    fetched = _pack_bytes(bare) - before
    clone = _clone(remote, run_dir / "newcomer", meta)
    env = {**os.environ, "GITIVE_HOME": str(_home(run_dir, "newcomer-home", 0))}
    before = _pack_bytes(clone)
    sync_s, report = _sync_json(clone, env)
    return {"clone": clone, "env": env, "fetch_s": fetch_s, "fetch_bytes": fetched, "sync_s": sync_s,
            "sync_bytes": _pack_bytes(clone) - before, "received": report.get("received", 0), "ok": report["ok"],
            "index_bytes": _index_bytes(clone)}


def noop_sync(clone: Path, env: dict[str, str], runs: int) -> dict[str, float]:
    """Median no-op ``gitive sync`` against ``git fetch`` + ``git push`` of this machine's refs."""
    me = machine_of(0)
    push = ["git", "push", "--quiet", "--porcelain", "origin", f"refs/hive/logs/{me}/*:refs/hive/logs/{me}/*"]
    _, check = _sync_json(clone, env)  # settles anything the first sync left (pins, own refs)
    _, check = _sync_json(clone, env)
    assert check["received"] == 0 and check["ok"], check
    times: dict[str, list[float]] = {"sync": [], "fetch": [], "push": [], "python": []}
    for _ in range(runs):
        times["sync"].append(c.time_command([c_gitive(), "sync"], clone, env))
        times["fetch"].append(c.time_command(FETCH, clone))
        times["push"].append(c.time_command(push, clone))
        times["python"].append(c.time_command([sys.executable, "-c", "pass"], clone))
    return {k: c.median(v) for k, v in times.items()}


def concern(clone: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Of what the newcomer (machine 0) fetched and indexed, how much concerns it."""
    import sqlite3

    from gitive.core.records import project_log

    mine = {project_log(project_of(p)) for p in projects_of(0, meta["projects"])}
    index = next((clone / ".git").rglob("index.sqlite"))
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT log, COUNT(*) FROM entries GROUP BY log").fetchall()
        logs = conn.execute("SELECT log, COUNT(*) FROM logs GROUP BY log").fetchall()
    finally:
        conn.close()
    project_rows = [(log, n) for log, n in rows if log.startswith("project-")]
    own = sum(n for log, n in project_rows if log in mine)
    other = sum(n for log, n in project_rows if log not in mine)
    shared = sum(n for log, n in rows if not log.startswith("project-"))
    project_logs = sum(n for log, n in logs if log.startswith("project-"))
    own_logs = sum(n for log, n in logs if log in mine)
    return {"entries": sum(n for _, n in rows), "team_and_mail": shared, "own_projects": own,
            "other_projects": other, "project_logs": project_logs, "own_project_logs": own_logs}


def presence_round(data_dir: Path, run_dir: Path, meta: dict[str, Any], live: int, round_no: int) -> float:
    """``live`` machines each rewrite their presence (one live session) and push it, as their daemons would;
    returns the seconds that took (setup, not a figure)."""
    import pygit2

    from gitive.core import canonical
    from gitive.core.clock import now_ms
    from gitive.store import presence

    work = run_dir / "presence-writer"
    if not work.exists():
        # A mirror (hard links, every ref): the presence refs earlier runs left are this writer's own, so each
        # snapshot it signs is a version above them, as a daemon's would be.
        c.git("clone", "--quiet", "--mirror", str(data_dir / "remote.git"), work)
    repo = pygit2.Repository(str(work))
    start = time.perf_counter()
    now = now_ms()
    for i in range(live):
        me = machine_of(i)
        session = {"name": "api-claude", "harness": "claude", "address": f"dev{i}/api-claude",
                   "project": project_of(projects_of(i, meta["projects"])[0]), "repo_label": "api",
                   "branch": f"feature/{i}", "head": None, "files": [f"src/mod{i % 50}.py"], "modified": [],
                   "turn": "busy" if round_no % 2 else "idle", "doing": None, "started": now - 3_600_000,
                   "last_seen": now, "claims": []}
        snap = {"machine": me, "person": f"dev{i}", "machine_name": f"box{i}", "sessions": [session]}
        presence.publish(repo, key_of(i), meta["team_id"], canonical.dumps(snap))
    c.git("push", "--quiet", "--force", f"file://{data_dir / 'remote.git'}", "refs/hive/presence/*:refs/hive/presence/*",
          cwd=work)
    return time.perf_counter() - start


def presence_figures(data_dir: Path, run_dir: Path, meta: dict[str, Any], clone: Path, env: dict[str, str],
                     live: int, runs: int) -> dict[str, Any]:
    """An observer's sync after every live machine moved its presence, against a no-op sync."""
    moved, noop, fetched = [], [], []
    for r in range(runs):
        presence_round(data_dir, run_dir, meta, live, r + 1)
        before = _pack_bytes(clone)
        seconds, report = _sync_json(clone, env)
        assert report["ok"], report
        moved.append(seconds)
        fetched.append(_pack_bytes(clone) - before)
        noop.append(_sync_json(clone, env)[0])
    return {"moved": c.median(moved), "noop": c.median(noop), "bytes": int(c.median(fetched))}


# ------------------------------------------------------------------------------------------- report


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


def report(meta: dict[str, Any], figures: dict[str, Any], a: argparse.Namespace) -> None:
    r, first, noop, mine, pres = (figures[k] for k in ("refs", "first", "noop", "concern", "presence"))
    print(f"data      {meta['machines']:,} machines, {meta['entries']:,} entries in {meta['machines'] * 5:,} logs "
          f"over {meta['years']} years, {meta['projects']} projects (3 a machine), {c.mib(meta['objects_bytes'])} "
          f"packed on the remote (generated in {meta['generate_seconds']} s)")
    print(f"refs      the remote advertises {r['refs']:,} refs ({r['hive_refs']:,} under refs/hive/), "
          f"{r['advert_bytes'] / 1024:.0f} KiB; ls-remote refs/hive/ {c.ms(r['ls_hive'])} against refs/heads/ "
          f"{c.ms(r['ls_heads'])} ({_ratio(r['ls_hive'], r['ls_heads'])})")
    rate = first["received"] / first["sync_s"] if first["sync_s"] else 0
    print(f"first     a newcomer's gitive sync {first['sync_s']:.1f} s for {first['received']:,} entries "
          f"({rate:,.0f}/s), {c.mib(first['sync_bytes'])} received, index {c.mib(first['index_bytes'])} "
          f"({first['index_bytes'] / max(1, first['received']):.0f} B/entry); bare git fetch of the same refs "
          f"{first['fetch_s']:.1f} s, {c.mib(first['fetch_bytes'])} ({_ratio(first['sync_s'], first['fetch_s'])})")
    git_rt = noop["fetch"] + noop["push"]
    own = noop["sync"] - noop["python"]
    print(f"no-op     gitive sync {c.ms(noop['sync'])} against git fetch + push {c.ms(git_rt)} "
          f"({_ratio(noop['sync'], git_rt)}); gitive's own cost above python -c pass ({c.ms(noop['python'])}): "
          f"{c.ms(own)}, {_ratio(own, git_rt)} of git's round trip "
          f"(target <= 1x: {c.target(own <= git_rt)})")
    share = (mine["team_and_mail"] + mine["own_projects"]) / max(1, mine["entries"])
    print(f"3 of {meta['projects']}  the newcomer indexed {mine['entries']:,} entries: team and mail "
          f"{mine['team_and_mail']:,}, its 3 projects {mine['own_projects']:,} ({mine['own_project_logs']} logs), "
          f"other projects {mine['other_projects']:,} ({mine['project_logs'] - mine['own_project_logs']:,} logs); "
          f"{share:.0%} of what it fetched concerns it")
    print(f"presence  {a.live} live machines moved their presence: the next sync {c.ms(pres['moved'])}, "
          f"{pres['bytes'] / 1024:.0f} KiB fetched, against a no-op sync {c.ms(pres['noop'])} "
          f"({_ratio(pres['moved'], pres['noop'])})")
    print(f"machine   {c.load()}")


def parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--machines", type=int, default=1000)
    p.add_argument("--entries", type=int, default=1000, help="entries per machine, over its five logs")
    p.add_argument("--projects", type=int, default=200)
    p.add_argument("--years", type=int, default=5)
    p.add_argument("--live", type=int, default=300, help="machines with a live session whose presence moves")
    p.add_argument("--runs", type=int, default=5, help="interleaved runs of each timed command")
    p.add_argument("--quick", action="store_true", help="100 machines x 200 entries, 30 live, 3 runs")
    p.add_argument("--regenerate", action="store_true")
    p.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench")
    a = p.parse_args(argv)
    if a.quick:
        a.machines, a.entries, a.live, a.runs, a.projects = 100, 200, 30, 3, 20
    if a.machines < 3 or a.projects < PROJECTS_PER_MACHINE or not 0 <= a.live <= a.machines:
        p.error("--machines must be at least 3, --projects at least 3, --live between 0 and --machines")
    return a


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    c.hermetic_git(a.cache)
    data_dir, meta = load_or_generate(a.cache, a)
    run_dir = data_dir / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir()
    figures: dict[str, Any] = {}
    with c.step("refs advertised, ls-remote"):
        figures["refs"] = refs_figures(data_dir / "remote.git", run_dir, a.runs)
    with c.step("a newcomer's first sync, and a bare fetch of the same refs"):
        first = figures["first"] = first_sync(data_dir, run_dir, meta)
    assert first["ok"], "the newcomer's first sync reported problems"
    with c.step("no-op syncs"):
        figures["noop"] = noop_sync(first["clone"], first["env"], a.runs)
    figures["concern"] = concern(first["clone"], meta)
    with c.step(f"{a.live} presence refs moving"):
        figures["presence"] = presence_figures(data_dir, run_dir, meta, first["clone"], first["env"], a.live,
                                               a.runs)
    report(meta, figures, a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
