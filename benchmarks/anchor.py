"""Anchor benchmark: the tick's cost with 50 machines, 1,000 open obligations and 10,000 events a day.

    .venv/bin/python benchmarks/anchor.py                # 50 machines, 1,000 obligations, 10,000 events
    .venv/bin/python benchmarks/anchor.py --quick        # 10 machines, 200 obligations, 1,000 events

What it builds (in a temp directory, a couple of minutes; nothing cached): a bare remote holding a real team,
founded with ``gitive.enrolment.ops.found``; the founder admits ``--machines`` member machines and one anchor
(signed ``member`` entries); every machine has ``team`` and ``mail`` logs and a signed presence snapshot;
``--obligations`` open obligations spread over the machines' team logs, written with
``gitive.anchor.obligations.records.check`` rules and ``gitive.store.logs.append`` (most wait for a branch to be
merged, the others for a message, a watcher or a session); one branch per machine on the remote. The anchor
is a clone configured as ``gitive join`` would configure it, and has run its first tick.

Figures (each against a baseline measured in the same run, with its target):

1. **idle tick** (nothing new): ``gitive.anchor.tick.tick`` in-process against a bare ``git fetch`` of the
   same refspecs as a subprocess (the fetch the tick makes), medians of interleaved runs; target ≤ 1.5×, and
   no CEL evaluated;
2. **per-event evaluation** of a day's worth of events (``--events``; merges, pushes, messages, sessions,
   watcher lines) against the open obligations, through the dispatch index with cached programs; target
   ≤ 0.2 ms per event per 100 obligations. Baseline: evaluating every condition on every event (no dispatch),
   on a sample;
3. **catch-up after 24 h of downtime**: ``--events`` real records and ref movements pushed while the anchor is
   stopped (messages signed by the machines, branches moved and merged), then one tick that fetches, ingests,
   evaluates and fires; events/s, against a plain ingest of the same entries (``fresh_index``) on a copy.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

TEAM_SCOPE: dict[str, Any] = {"team": True}
DAY_MS = 86_400_000


def key_for(index: int) -> Any:
    import blake3
    from nacl.signing import SigningKey

    return SigningKey(blake3.blake3(f"gitive-bench-anchor/{index}".encode()).digest())


def _condition(rnd: random.Random, i: int, machines: int) -> str:
    roll = rnd.random()
    if roll < 0.6:
        return f'e.event.action == "vcs.merged" && e.vcs.branch == "b{i % (machines * 4)}"'
    if roll < 0.8:
        return f'e.event.action == "message.sent" && e.message.to == "p{i % machines}/s{i % 7}"'
    if roll < 0.9:
        return f'e.event.action == "watch.ci.failed" && e.watch.data.job == "job-{i % 40}"'
    return f'e.event.action == "session.started" && e.session.person == "p{i % machines}"'


def build(base: Path, machines: int, obligations: int) -> dict[str, Any]:
    """The remote, the machines' keys, and the anchor's configured clone (see the module docstring)."""
    import pygit2

    from gitive.core import gesture
    from gitive.core.keys import machine_id
    from gitive.enrolment import ops
    from gitive.index import obligations as table
    from gitive.store import logs, snapshots

    remote = base / "remote.git"
    c.git("init", "--quiet", "--bare", remote)
    work = base / "work"
    c.git("clone", "--quiet", f"file://{remote}", work)
    (work / "README").write_text("bench\n")
    c.git("add", "README", cwd=work)
    c.git("commit", "--quiet", "-m", "first", cwd=work)
    c.git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=work)
    founder_home = base / "founder-home"
    signer = c.person_key(founder_home)  # the founder's person key: admissions are decisions (gestured)
    with c.in_dir(work, founder_home):
        done = ops.found(work, "founder", "laptop", "bench", signer=signer)
    repo = pygit2.Repository(str(work))
    from gitive.core.keys import load_key

    founder = load_key(founder_home / "machine.key")
    team_id = done.team_id
    keys = [key_for(i) for i in range(machines)]
    anchor_key = key_for(10_000)
    now = int(time.time() * 1000)
    for i, key in enumerate(keys):
        logs.append(repo, founder, team_id, "roster", TEAM_SCOPE, gesture.sign(
            signer, team_id, done.machine, ops.member_record(machine_id(key), f"p{i}", f"m{i}", [], None)))
    logs.append(repo, founder, team_id, "roster", TEAM_SCOPE, gesture.sign(
        signer, team_id, done.machine, ops.member_record(machine_id(anchor_key), "anchor", "anchor", [], None,
                                                         role="anchor")))
    rnd = random.Random(7)
    for i in range(obligations):
        owner = i % machines
        record = {"type": "obligation", "owner": f"p{owner}", "condition": _condition(rnd, i, machines),
                  "action": f"follow-up {i}", "expires": now + 30 * DAY_MS, "created": now - 3_600_000,
                  "source": {"kind": "owe"}, "vocabulary": 1, "actor": "agent"}
        record["id"] = table.obligation_id(machine_id(keys[owner]), record)
        logs.append(repo, keys[owner], team_id, "team", TEAM_SCOPE, record, at=now - 3_600_000)
    for i, key in enumerate(keys):
        logs.append(repo, key, team_id, "mail", TEAM_SCOPE, _message(i, 0, machines), at=now - 3_000_000)
        _presence(repo, key, team_id, i, snapshots)
    head = repo.revparse_single("HEAD")
    for b in range(machines * 4):
        tree = _tree_with(repo, head.tree, f"b{b}.txt", f"branch {b}\n")
        sig = pygit2.Signature("dev", "dev@example.com", int(time.time()) - 7200, 0)
        commit = repo.create_commit(None, sig, sig, f"work on b{b}", tree, [head.id])
        repo.references.create(f"refs/heads/b{b}", commit, force=True)
    c.git("push", "--quiet", "origin", "refs/hive/*:refs/hive/*", "refs/heads/*:refs/heads/*", cwd=work)
    anchor = _anchor_clone(base, remote, team_id, done.machine, anchor_key)
    return {"remote": remote, "work": work, "team_id": team_id, "keys": keys, "anchor": anchor,
            "founder": done.machine}


def _tree_with(repo: Any, tree: Any, name: str, text: str) -> Any:
    import pygit2

    builder = repo.TreeBuilder(tree)
    builder.insert(name, repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB)
    return builder.write()


def _message(i: int, n: int, machines: int) -> dict[str, Any]:
    from gitive.daemon.ulid import new_ulid

    return {"type": "message", "id": new_ulid(), "from": f"p{i}/s{n % 7}", "to": f"p{(i + 1) % machines}/s{n % 7}",
            "recipients": [], "body": f"note {n}", "from_person": False}


def _presence(repo: Any, key: Any, team_id: str, i: int, snapshots: Any) -> None:
    import pygit2

    from gitive.core import canonical
    from gitive.core.keys import machine_id
    from gitive.store import refs

    me = machine_id(key)
    snap = {"machine": me, "person": f"p{i}", "machine_name": f"m{i}",
            "sessions": [{"name": f"s{i}", "harness": "claude", "last_seen": int(time.time() * 1000),
                          "started": int(time.time() * 1000) - 60_000, "turn": "busy", "files": []}]}
    builder = repo.TreeBuilder()
    builder.insert("presence.json", repo.create_blob(canonical.dumps(snap)), pygit2.enums.FileMode.BLOB)
    commit = snapshots.write(repo, key, team_id, "presence", builder.write(), "presence", 1)  # a first version
    refs.force_set(repo, refs.presence_ref(me), commit, "bench")


def _anchor_clone(base: Path, remote: Path, team_id: str, founder: str, key: Any) -> dict[str, Path]:
    clone = base / "anchor"
    home = base / "anchor-home"
    home.mkdir()
    c.git("clone", "--quiet", f"file://{remote}", clone)
    for args in (("hive.team", team_id), ("hive.founder", founder), ("--add", "hive.remote", "origin"),
                 ("--add", "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*")):
        c.git("config", *args, cwd=clone)
    (home / "machine.key").write_text(key.encode().hex() + "\n")
    os.chmod(home / "machine.key", 0o600)
    return {"clone": clone, "home": home}


def _ticker(anchor: dict[str, Path]) -> Any:
    from gitive.anchor.base.configuration import Config
    from gitive.anchor.tick import Anchor
    from gitive.core.clock import now_ms
    from gitive.team.hive import open_hive

    with c.in_dir(anchor["clone"], anchor["home"]):
        return Anchor(open_hive(anchor["clone"]), Config(), now_ms())


def _tick(anchor: dict[str, Path], state: Any) -> Any:
    from gitive.anchor.tick import tick

    with c.in_dir(anchor["clone"], anchor["home"]):
        return tick(state)


def idle(anchor: dict[str, Path], state: Any, runs: int) -> dict[str, float]:
    from gitive.store import watch

    fetch = ["git", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--prune", "origin",
             *watch.refspecs("origin")]
    ticks, fetches, tick_cpu, fetch_cpu, evaluations = [], [], [], [], 0
    for _ in range(runs):
        cpu = _cpu()
        fetches.append(c.time_command(fetch, anchor["clone"]))
        fetch_cpu.append(_cpu() - cpu)
        cpu = _cpu()
        seconds, report = c.timed(lambda: _tick(anchor, state))
        tick_cpu.append(_cpu() - cpu)
        ticks.append(seconds)
        evaluations += report.evaluations
        assert report.idle, report.as_dict()
    return {"tick": c.median(ticks), "fetch": c.median(fetches), "tick_cpu": c.median(tick_cpu),
            "fetch_cpu": c.median(fetch_cpu), "evaluations": evaluations}


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (the tick's git fetch is one), to the
    microsecond (``os.times`` counts in clock ticks of 10 ms, the size of an idle tick)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def day_of_events(n: int, machines: int, rnd: random.Random) -> list[dict[str, Any]]:
    """A day's mix: a third ref movements (some merges of watched branches), messages, sessions, CI lines."""
    from gitive.anchor.obligations import events

    found = []
    start = int(time.time() * 1000)
    for i in range(n):
        ts = start + i
        roll = rnd.random()
        if roll < 0.1:
            found.append(events.make("vcs.merged", ts, "ref", "origin", f"m{i}",
                                     vcs={"branch": f"b{rnd.randrange(machines * 40)}", "into": "main",
                                          "commit": "c" * 40}))
        elif roll < 0.35:
            found.append(events.make("vcs.branch_moved", ts, "ref", "origin", f"v{i}",
                                     vcs={"branch": f"b{rnd.randrange(machines * 4)}", "commit": "c" * 40}))
        elif roll < 0.8:
            found.append(events.make("message.sent", ts, "log", "mail", f"g{i}", trusted=True,
                                     message={"id": f"{i}", "from": f"p{rnd.randrange(machines)}/s1",
                                              "to": f"p{rnd.randrange(machines)}/s{rnd.randrange(20)}"}))
        elif roll < 0.9:
            found.append(events.make("session.started", ts, "presence", "p", f"s{i}",
                                     session={"person": f"p{rnd.randrange(machines * 3)}", "id": "s"}))
        else:
            found.append(events.from_watcher("ci", "failed" if roll < 0.95 else "passed",
                                             {"action": "failed", "job": f"job-{rnd.randrange(400)}"}, ts, i))
    return found


def evaluation(anchor: dict[str, Path], n: int, machines: int) -> dict[str, float]:
    from celpy.adapter import json_to_cel

    from gitive.anchor.obligations import conditions
    from gitive.anchor.obligations.evaluation import Evaluator
    from gitive.index import obligations as table
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    with c.in_dir(anchor["clone"], anchor["home"]), fresh_index(open_hive(anchor["clone"])) as (conn, _):
        obs = table.open_obligations(conn)
    evaluator = Evaluator(obs, {"ci"})
    batch = day_of_events(n, machines, random.Random(11))
    for event in batch:
        event["ts"] = max(event["ts"], max(o["created"] for o in obs))
    seconds, results = c.timed(lambda: evaluator.run(batch, set()))
    sample = batch[: max(20, n // 500)]
    compiled = [conditions.compile_condition(o["condition"]) for o in obs]

    def naive() -> int:
        hits = 0
        for event in sample:
            cel = json_to_cel(event)
            for prog in compiled:
                hits += conditions.evaluate(prog, cel, 0).matched
        return hits

    naive_s, _ = c.timed(naive)
    return {"seconds": seconds, "events": len(batch), "obligations": len(obs), "evaluations": results.evaluations,
            "satisfied": len(results.satisfied), "naive_per_event": naive_s / len(sample)}


def downtime(setup: dict[str, Any], n: int, machines: int) -> int:
    """``n`` events while the anchor is down: messages from every machine, branches moved and merged."""
    import pygit2

    from gitive.store import logs

    repo = pygit2.Repository(str(setup["work"]))
    c.git("fetch", "--quiet", "origin", "+refs/hive/*:refs/hive/*", cwd=setup["work"])
    moves = max(1, min(n // 20, machines * 2))  # merge the first half of the branches, move the rest
    messages = n - 2 * moves
    now = int(time.time() * 1000)
    for j in range(messages):
        i = j % machines
        logs.append(repo, setup["keys"][i], setup["team_id"], "mail", TEAM_SCOPE, _message(i, j + 1, machines),
                    at=now - (messages - j))
    head = repo.revparse_single("refs/heads/main")
    sig = pygit2.Signature("dev", "dev@example.com", int(time.time()), 0)
    main = head.id
    for b in range(moves):  # merge b0, b1, ... into main: each is a branch movement and a merge
        branch = repo.references[f"refs/heads/b{b}"].target
        tree = _tree_with(repo, repo[main].tree, f"b{b}.txt", f"branch {b}\n")
        main = repo.create_commit(None, sig, sig, f"Merge b{b}", tree, [main, branch])
    repo.references.create("refs/heads/main", main, force=True)
    for b in range(moves, 2 * moves):
        ref = repo.references[f"refs/heads/b{b}"]
        tree = _tree_with(repo, repo[ref.target].tree, "more.txt", "more\n")
        ref.set_target(repo.create_commit(None, sig, sig, "more", tree, [ref.target]))
    c.git("push", "--quiet", "--force", "origin", "refs/hive/*:refs/hive/*", "refs/heads/*:refs/heads/*",
          cwd=setup["work"])
    return messages + 2 * moves + 1  # + main moved


def catch_up(setup: dict[str, Any], base: Path, n: int, machines: int) -> dict[str, float]:
    from gitive.index.refresh import fresh_index
    from gitive.store import watch
    from gitive.team.hive import open_hive

    written = downtime(setup, n, machines)
    anchor = setup["anchor"]
    copy = {"clone": base / "anchor-copy", "home": base / "anchor-copy-home"}
    shutil.copytree(anchor["clone"], copy["clone"], symlinks=True)
    shutil.copytree(anchor["home"], copy["home"], symlinks=True)
    with c.in_dir(copy["clone"], copy["home"]):
        import pygit2

        watch.fetch_all(pygit2.Repository(str(copy["clone"])), "origin")  # the same fetch, outside the timing

        def ingest_only() -> int:
            with fresh_index(open_hive(copy["clone"])) as (_, report):
                return report.received
        cpu = _cpu()
        plain_s, received = c.timed(ingest_only)
        plain_cpu = _cpu() - cpu
    state = _ticker(anchor)
    cpu = _cpu()
    tick_s, report = c.timed(lambda: _tick(anchor, state))
    tick_cpu = _cpu() - cpu
    seen = sum(report.events.values())
    return {"tick": tick_s, "plain": plain_s, "tick_cpu": tick_cpu, "plain_cpu": plain_cpu, "received": received,
            "events": seen, "written": written,
            "fired": len(report.fired), "late": sum(1 for f in report.fired if f["late"]), "evaluations":
            report.evaluations}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--machines", type=int, default=50)
    parser.add_argument("--obligations", type=int, default=1000)
    parser.add_argument("--events", type=int, default=10_000, help="events in a day")
    parser.add_argument("--runs", type=int, default=11, help="idle ticks (and bare fetches) timed")
    parser.add_argument("--quick", action="store_true", help="10 machines, 200 obligations, 1,000 events")
    parser.add_argument("--keep", action="store_true", help="keep the temp directory")
    args = parser.parse_args(argv)
    if args.quick:
        args.machines, args.obligations, args.events, args.runs = 10, 200, 1000, 5
    base = Path(tempfile.mkdtemp(prefix="gitive-bench-anchor-"))
    c.hermetic_git(base / "git")
    try:
        print(f"anchor benchmark: {args.machines} machines, {args.obligations} open obligations, "
              f"{args.events} events a day ({c.load()})", file=sys.stderr)
        with c.step("build the team, obligations and branches"):
            setup = build(base, args.machines, args.obligations)
        state = _ticker(setup["anchor"])
        with c.step("the anchor's first ticks (baseline cursors; its own verdicts read back)"):
            _tick(setup["anchor"], state)
            _tick(setup["anchor"], state)
        with c.step("idle ticks against bare fetches"):
            found = idle(setup["anchor"], state, args.runs)
        with c.step("a day of events through the evaluator"):
            ev = evaluation(setup["anchor"], args.events, args.machines)
        with c.step("24 h of downtime, then one catch-up tick"):
            up = catch_up(setup, base, args.events, args.machines)
        _print(found, ev, up, args)
    finally:
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


def _print(found: dict[str, float], ev: dict[str, float], up: dict[str, float], args: argparse.Namespace) -> None:
    ratio, cpu_ratio = found["tick"] / found["fetch"], found["tick_cpu"] / found["fetch_cpu"]
    print(f"idle tick: {c.ms(found['tick'])} vs bare git fetch of the same refs {c.ms(found['fetch'])}: "
          f"{ratio:.2f}x wall (target <= 1.5x: {c.target(ratio <= 1.5)}); CPU (the tick's process and its git "
          f"fetch) {found['tick_cpu'] * 1000:.1f} ms vs the fetch's {found['fetch_cpu'] * 1000:.1f} ms: "
          f"{cpu_ratio:.2f}x ({c.target(cpu_ratio <= 1.5)}); CEL evaluations in idle ticks: "
          f"{found['evaluations']} (target 0: {c.target(found['evaluations'] == 0)}; {c.load()})")
    per_event = ev["seconds"] / ev["events"]
    per_100 = per_event / (ev["obligations"] / 100) * 1000
    print(f"evaluation: {ev['events']} events x {ev['obligations']} obligations in {ev['seconds']:.2f} s "
          f"({ev['evaluations']} CEL evaluations, {ev['satisfied']} satisfied): {per_100:.4f} ms per event per 100 "
          f"obligations (target <= 0.2 ms: {c.target(per_100 <= 0.2)}); every condition on every event would "
          f"cost {ev['naive_per_event'] * 1000:.1f} ms per event, {ev['naive_per_event'] / per_event:.0f}x more")
    rate, cpu_rate = up["events"] / up["tick"], up["events"] / up["tick_cpu"]
    ratio, cpu_ratio = up["tick"] / up["plain"], up["tick_cpu"] / up["plain_cpu"]
    print(f"catch-up after 24 h down: {up['events']} events ({up['received']} entries ingested) in one tick of "
          f"{up['tick']:.2f} s wall = {rate:,.0f} events/s, {up['tick_cpu']:.2f} s CPU = {cpu_rate:,.0f} events/s; "
          f"{up['fired']} fired, {up['late']} marked late; the same ingest alone took {up['plain']:.2f} s wall, "
          f"{up['plain_cpu']:.2f} s CPU ({ratio:.2f}x wall, {cpu_ratio:.2f}x CPU; target >= 5,000 events/s or <= 3x "
          f"the ingest alone: {c.target(rate >= 5000 or ratio <= 3)} wall, "
          f"{c.target(cpu_rate >= 5000 or cpu_ratio <= 3)} CPU; {c.load()})")


if __name__ == "__main__":
    sys.exit(main())
