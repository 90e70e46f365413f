"""Gate benchmark: 10,000 candidate items for 20 people from 200 sources, through a day of the anchor's gate.

    .venv/bin/python benchmarks/gate.py                 # 20 people, 200 sources, 10,000 items
    .venv/bin/python benchmarks/gate.py --quick         # 5 people, 20 sources, 1,000 items

What it builds (in a temp directory; nothing cached): a bare remote holding a real v2 team founded with
``gitive.enrolment.ops.found``; the founder admits ``--people`` member machines (one person each) and one anchor,
gestured with the founder's person key; every person registers a person key, takes their gate live and (half of
them) sets quiet hours 22:00-07:00 UTC, each a record gestured with that key. Each person owns 5 open
obligations owed to someone else (what makes an item citing one urgent). The anchor is a clone configured as
``gitive join`` would configure it.

Then a day in 24 hourly ticks: each hour, the sessions (``--sources`` of them, spread over the people) propose
that hour's share of ``--items`` ``item`` records in their machines' team logs (``logs.append_many``, the
records ``propose_item`` writes): 45% cite an obligation someone waits on (attention), 35% cite a branch
(info: digest), 10% repeat an earlier item's subject (duplicate), 10% cite an obligation past its deadline that
someone waits on (alarm; alarms are off, so held or digested). The anchor fetches, ingests
(``fresh_index``), and its gate (``gitive.anchor.gate.gating.Gate.run``) decides everything due, writing the ledger
in format 2: one signed entry per tick holding that tick's decisions. Only ``Gate.run`` is
timed.

Figures (each against a baseline measured in the same run, with its target):

1. **decisions/s**: the gate's decisions (the intake of the hour's proposals, the reference order, held items
   re-entering, digests, the ledger written with one batch per tick) over its time, wall clock and CPU time
   (this process and git fast-import, which is what a loaded machine does not inflate); target >= 5,000/s.
   Baseline: signing and writing the same ledger records alone (``logs.append_many`` into an empty repository),
   as decisions/s; target: the gate >= 0.9x of it (issue 21);
2. **ledger bytes per decision**: the ledger log's objects packed by ``git pack-objects``, per entry, against
   the proposals' own records packed the same way (an entry that copied its item would cost that); no target
   (the ledger is metadata only: ids, branch, rule, the records urgency came from);
3. **delivered per person per day**: attention deliveries per person against their budget (6, default), and
   everything delivered (floors, alarms and digest notes too); target: no person over budget. Baseline: the
   candidates per person, which a plain queue would have delivered.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

TEAM_SCOPE: dict[str, Any] = {"team": True}
HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
BUDGET = 6  # the default of gitive.anchor.gate.prefs
OBLIGATIONS_EACH = 5


def _seed_key(label: str) -> Any:
    import blake3
    from nacl.signing import SigningKey

    return SigningKey(blake3.blake3(f"gitive-bench-gate/{label}".encode()).digest())


def _signer(label: str) -> Any:
    from gitive.core.personkey import LocalSigner

    return LocalSigner(_seed_key(f"person/{label}"))


def build(base: Path, people: int, start: int) -> dict[str, Any]:
    """The remote, every person's machine key and person key, their obligations, and the anchor's clone."""
    import pygit2

    from gitive.core import gesture
    from gitive.core.keys import machine_id
    from gitive.enrolment import ops
    from gitive.index import obligations as table
    from gitive.store import logs

    team = c.found_team(base, "p0", "m0", "bench")
    remote, work, team_id, founder = team.remote, team.work, team.team_id, team.founder
    founder_key, founder_signer = team.key, team.signer
    repo = pygit2.Repository(str(work))
    keys = [founder_key] + [_seed_key(f"machine/{i}") for i in range(1, people)]
    signers = [founder_signer] + [_signer(str(i)) for i in range(1, people)]
    anchor_key = _seed_key("anchor")
    c.admit(team, [(machine_id(keys[i]), f"p{i}", f"m{i}") for i in range(1, people)])
    c.admit(team, [(machine_id(anchor_key), "anchor", "anchor")], role="anchor")
    obligations: list[list[dict[str, Any]]] = []
    for i in range(people):
        me = machine_id(keys[i])
        if i:
            logs.append(repo, keys[i], team_id, "roster", TEAM_SCOPE,
                        ops.person_key_record(team_id, me, f"p{i}", signers[i]))
        decisions = [{"type": "gate-live", "person": f"p{i}", "live": True, "ts": start - HOUR_MS,
                      "actor": "person"}]
        if i % 2 == 0:
            from gitive.anchor.gate.prefs import Prefs

            decisions.append(Prefs(f"p{i}", quiet=("22:00", "07:00")).record(start - HOUR_MS))
        mine = []
        for n in range(OBLIGATIONS_EACH):
            ob = {"type": "obligation", "owner": f"p{i}", "to": f"p{(i + 1 + n) % people}",
                  "condition": f'e.event.action == "vcs.merged" && e.vcs.branch == "b{i}-{n}"',
                  "action": f"follow-up {i}/{n}", "expires": start + 30 * DAY_MS, "created": start - 2 * HOUR_MS,
                  "source": {"kind": "owe"}, "vocabulary": 1, "actor": "agent"}
            if n == 0:
                ob["deadline"] = start - HOUR_MS + 1  # past due by the first tick: an item citing it is an alarm
            ob["id"] = table.obligation_id(me, ob)
            mine.append(ob)
        obligations.append(mine)
        logs.append_many(repo, keys[i], team_id, "team", TEAM_SCOPE,
                         mine + [gesture.sign(signers[i], team_id, me, d) for d in decisions], at=start - HOUR_MS)
    c.git("push", "--quiet", "origin", "refs/hive/*:refs/hive/*", cwd=work)
    clone, anchor_home = base / "anchor", base / "anchor-home"
    anchor_home.mkdir()
    c.git("clone", "--quiet", f"file://{remote}", clone)
    for args in (("hive.team", team_id), ("hive.founder", founder), ("--add", "hive.remote", "origin"),
                 ("--add", "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*")):
        c.git("config", *args, cwd=clone)
    (anchor_home / "machine.key").write_text(anchor_key.encode().hex() + "\n")
    os.chmod(anchor_home / "machine.key", 0o600)
    return {"remote": remote, "work": work, "repo": repo, "team_id": team_id, "keys": keys,
            "obligations": obligations, "anchor": {"clone": clone, "home": anchor_home},
            "anchor_id": machine_id(anchor_key), "anchor_key": anchor_key}


def plan(people: int, sources: int, items: int, rnd: random.Random) -> list[list[tuple[int, int, str, int]]]:
    """Per hour, the proposals: (proposing person, session, what it cites, minute)."""
    out: list[list[tuple[int, int, str, int]]] = [[] for _ in range(24)]
    subjects: list[str] = []
    for n in range(items):
        source = rnd.randrange(sources)
        proposer, session = source % people, source // people
        roll = rnd.random()
        owner = rnd.randrange(people)
        if roll < 0.45:  # each about its own branch too: a distinct subject, not a duplicate
            cites = f"obligation:{owner}:{rnd.randrange(1, OBLIGATIONS_EACH)}+branch:b{n}"
        elif roll < 0.8:
            cites = f"branch:b{n}"
        elif roll < 0.9 and subjects:
            cites = rnd.choice(subjects)
        else:
            cites = f"obligation:{owner}:0"
        subjects.append(cites)
        out[n * 24 // items].append((proposer, session, cites, rnd.randrange(60)))
    return out


def _write_hour(setup: dict[str, Any], hour: list[tuple[int, int, str, int]], at: int) -> tuple[int, int]:
    """The hour's proposals, one batch per proposing machine; pushed. (records, their canonical bytes)"""
    from gitive.anchor.gate import items
    from gitive.core import canonical
    from gitive.core.keys import machine_id
    from gitive.store import logs

    by_machine: dict[int, list[dict[str, Any]]] = {}
    size = 0
    for proposer, session, cites, minute in hour:
        about, owner_name = [], f"p{proposer}"
        for cited in cites.split("+"):
            kind, _, rest = cited.partition(":")
            if kind == "obligation":
                owner, n = (int(x) for x in rest.split(":"))
                about.append({"kind": "obligation", "id": setup["obligations"][owner][n]["id"]})
                owner_name = f"p{owner}"
            else:
                about.append({"kind": kind, "id": rest})
        me = machine_id(setup["keys"][proposer])
        created = at + minute * 60_000 + len(by_machine.get(proposer, ()))
        c_ = items.proposal(me, f"p{proposer}", f"s{session}", f"have a look at {cites}", about, [], owner_name,
                            created)
        record = c_.record()
        size += len(canonical.dumps(record))
        by_machine.setdefault(proposer, []).append(record)
    for proposer, records in by_machine.items():
        logs.append_many(setup["repo"], setup["keys"][proposer], setup["team_id"], "team", TEAM_SCOPE, records,
                         at=at + HOUR_MS - 60_000)
    c.git("push", "--quiet", "origin", "refs/hive/*:refs/hive/*", cwd=setup["work"])
    return len(hour), size


def day(setup: dict[str, Any], hours: list[list[tuple[int, int, str, int]]], start: int, profile: int | None
        ) -> dict[str, Any]:
    """24 hourly ticks: write, fetch, ingest (untimed), then the gate (timed)."""
    from gitive.anchor.base import state
    from gitive.anchor.gate.gating import Gate
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    anchor = setup["anchor"]
    gate_seconds, gate_cpu, decided, written, item_bytes = 0.0, 0.0, Counter(), 0, 0
    with c.in_dir(anchor["clone"], anchor["home"]):
        hive = open_hive(anchor["clone"])
        for h, hour in enumerate(hours):
            at = start + h * HOUR_MS
            _, size = _write_hour(setup, hour, at)
            item_bytes += size
            c.git("fetch", "--quiet", "origin", cwd=anchor["clone"])
            with fresh_index(hive) as (index, _), state.connect(state.path_for(hive.store.path)) as st:
                gate = Gate(hive, st, index)
                if h == profile:
                    import cProfile
                    import pstats

                    with cProfile.Profile() as prof:
                        seconds, report = c.timed(lambda: gate.run(at + HOUR_MS))  # noqa: B023
                    pstats.Stats(prof, stream=sys.stderr).sort_stats("cumulative").print_stats(30)
                else:
                    cpu = _cpu()
                    seconds, report = c.timed(lambda: gate.run(at + HOUR_MS))  # noqa: B023 - called at once
                    gate_cpu += _cpu() - cpu
            gate_seconds += seconds
            decided.update(report.decided)
            written += report.written
            print(f"  hour {h:2}: {len(hour)} proposals, {sum(report.decided.values())} decisions in "
                  f"{seconds:.2f} s", file=sys.stderr)
    return {"seconds": gate_seconds, "cpu": gate_cpu, "decided": decided, "written": written,
            "item_bytes": item_bytes}


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children (git fast-import writes the ledger), to the
    microsecond (``os.times`` counts 10 ms clock ticks: up to a quarter second over the day's 24 runs)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _decisions(ledger: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every decision of the ledger's records, whatever the format (format 2: one entry per tick)."""
    out = []
    for r in ledger:
        if r["type"] == "ledger":
            out.append(r)
        elif r["type"] == "ledger-batch":
            out += [d | {"type": "ledger", "_at": r["_at"]} for d in r["decisions"]]
    return out


def _ledger(setup: dict[str, Any]) -> list[dict[str, Any]]:
    import pygit2

    from gitive.store import logs, refs

    repo = pygit2.Repository(str(setup["anchor"]["clone"]))
    return [e.body["record"] | {"_at": e.body["at"]}
            for e in logs.entries(repo, refs.log_ref(setup["anchor_id"], "ledger"))]


def _packed_bytes(repo_path: Path, ref: str) -> int:
    objects = subprocess.run(["git", "rev-list", "--objects", ref], cwd=repo_path, capture_output=True, check=True)
    packed = subprocess.run(["git", "pack-objects", "--stdout", "-q"], cwd=repo_path, input=objects.stdout,
                            capture_output=True, check=True)
    return len(packed.stdout)


def baseline_write(base: Path, setup: dict[str, Any], records: list[dict[str, Any]]) -> tuple[float, float]:
    """Signing and writing ``records`` alone, into the ledger log of an empty repository."""
    import pygit2

    from gitive.store import logs

    path = base / "baseline.git"
    c.git("init", "--quiet", "--bare", path)
    repo = pygit2.Repository(str(path))
    cpu = _cpu()
    seconds, _ = c.timed(lambda: logs.append_many(repo, setup["anchor_key"], setup["team_id"], "ledger",
                                                  TEAM_SCOPE, records))
    return seconds, _cpu() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--sources", type=int, default=200, help="proposing sessions, spread over the people")
    parser.add_argument("--items", type=int, default=10_000, help="candidate items over the day")
    parser.add_argument("--quick", action="store_true", help="5 people, 20 sources, 1,000 items")
    parser.add_argument("--keep", action="store_true", help="keep the temp directory")
    parser.add_argument("--profile", type=int, default=None, metavar="HOUR",
                        help="a cProfile (top 30) of the gate's run at this hour (7: quiet hours just ended)")
    args = parser.parse_args(argv)
    if args.quick:
        args.people, args.sources, args.items = 5, 20, 1000
    base = Path(tempfile.mkdtemp(prefix="gitive-bench-gate-"))
    c.hermetic_git(base / "git")
    start = (int(time.time() * 1000) - DAY_MS - HOUR_MS) // DAY_MS * DAY_MS  # a midnight UTC, the day all past
    try:
        print(f"gate benchmark: {args.items} items for {args.people} people from {args.sources} sources "
              f"({c.load()})", file=sys.stderr)
        with c.step("build the team, person keys, preferences and obligations"):
            setup = build(base, args.people, start)
        hours = plan(args.people, args.sources, args.items, random.Random(11))
        with c.step("a day of proposals through the gate, hour by hour"):
            found = day(setup, hours, start, args.profile)
        with c.step("baselines: the same ledger written alone; both logs packed"):
            ledger = _ledger(setup)
            decisions = _decisions(ledger)
            found["baseline"], found["baseline_cpu"] = baseline_write(base, setup, [{k: v for k, v in r.items() if k != "_at"}
                                                             for r in ledger])
            clone = setup["anchor"]["clone"]
            from gitive.store import refs

            found["ledger_packed"] = _packed_bytes(clone, refs.log_ref(setup["anchor_id"], "ledger"))
            found["items_packed"] = sum(_packed_bytes(setup["work"], refs.log_ref(m, "team"))
                                        for m in _members(setup))
            found["team_entries"] = _entries(setup)
        _print(found, ledger, decisions, args)
    finally:
        if args.keep:
            print(f"kept {base}", file=sys.stderr)
        else:
            shutil.rmtree(base, ignore_errors=True)
    return 0


def _entries(setup: dict[str, Any]) -> int:
    from gitive.store import logs, refs

    return sum(1 for m in _members(setup) for _ in logs.entries(setup["repo"], refs.log_ref(m, "team")))


def _members(setup: dict[str, Any]) -> list[str]:
    from gitive.core.keys import machine_id

    return [machine_id(k) for k in setup["keys"]]


def _print(found: dict[str, Any], ledger: list[dict[str, Any]], decisions: list[dict[str, Any]],
           args: argparse.Namespace) -> None:
    n = sum(found["decided"].values())
    assert n == len(decisions), (n, len(decisions))  # every decision is in the ledger, once
    rate, cpu_rate = n / found["seconds"], n / found["cpu"]
    print(f"decisions: {n:,} ({dict(sorted(found['decided'].items()))}) in {found['seconds']:.2f} s of gate time "
          f"= {rate:,.0f}/s wall (target >= 5,000/s: {c.target(rate >= 5000)}), {cpu_rate:,.0f}/s of CPU time "
          f"({c.target(cpu_rate >= 5000)}); writing the same ledger alone ({len(ledger):,} entries, {n:,} decisions): "
          f"{n / found['baseline']:,.0f} decisions/s wall, {n / found['baseline_cpu']:,.0f}/s of CPU (the gate runs at "
          f"{rate / (n / found['baseline']):.2f}x of its write wall, {cpu_rate / (n / found['baseline_cpu']):.2f}x "
          f"CPU: target >= 0.9x; {c.load()})")
    per_decision = found["ledger_packed"] / n
    per_item = found["items_packed"] / found["team_entries"]  # proposals, and a few obligations and decisions
    print(f"ledger: {per_decision:,.0f} bytes per decision packed ({found['ledger_packed'] / 1e6:.2f} MB for "
          f"{n:,} decisions in {len(ledger):,} entries); the proposals' own records: {per_item:,.0f} bytes each "
          f"packed ({per_decision / per_item:.2f}x; no target: metadata only, no item text)")
    def per_day(branches: tuple[str, ...]) -> Counter[tuple[str, int]]:  # (person, UTC day): every person is on UTC
        return Counter((d["person"], d["_at"] // DAY_MS) for d in decisions if d["branch"] in branches
                       and not d["shadow"])

    attention, delivered = per_day(("attention",)), per_day(("floor", "alarm", "attention", "note"))
    candidates = Counter(p for p, _ in {(d["person"], d["item"]) for d in decisions if d["branch"] != "note"})
    worst = max(attention.values())
    print(f"delivered per person per day: attention max {worst}, mean {sum(attention.values()) / len(attention):.1f}"
          f" over {len(attention)} person-days, against a budget of {BUDGET} (target: nobody over: "
          f"{c.target(worst <= BUDGET)}); everything delivered (alarms, floors, digest notes too) max "
          f"{max(delivered.values())}; a plain queue would have delivered {sum(candidates.values()) / args.people:.0f}"
          f" per person")


if __name__ == "__main__":
    sys.exit(main())
