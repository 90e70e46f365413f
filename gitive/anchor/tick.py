"""The anchor's deterministic tick: fetch, ingest, new events per source, conditions, deadlines, expiries, gate.

No model runs here. With nothing new, a tick costs the fetch plus one comparison per log (and per watched
remote and presence ref) and evaluates no CEL. In one tick:

1. fetch every shared store's remotes (a project store's branches and tags too, in the same ``git fetch``);
2. ingest what came (verified, unioned; the obligation tables follow);
3. read the events past each source's cursor (logs, watched refs, presence, clock, watchers due to run);
4. evaluate the open obligations' conditions on them, in time order;
5. fire what is satisfied, what passed its deadline and what is about to lapse: each firing is a signed record
   in this machine's ``ledger`` log, written *before* its item is offered to the gate and before any cursor
   moves, and checked before anything fires, so a crash at any point never fires anything twice (the next
   tick re-offers items of firings already written; offering is idempotent);
6. write a verdict record when an obligation's evaluation became, or stopped being, unverifiable;
7. save the cursors, push what was written.

A firing is *late* when the event (or deadline) that caused it is older than this run of the anchor, or more
than :data:`LATE_AFTER_MS` older than the firing: the item and the record carry both times.
"""

from __future__ import annotations

import os
import sqlite3
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from gitive.anchor import sources, watchers
from gitive.anchor.base import state
from gitive.anchor.base.configuration import Config
from gitive.anchor.base.context import Gate, Step, Tick, TickReport
from gitive.anchor.gate.gating import Gate as Gating
from gitive.anchor.gate.gating import RunGate
from gitive.anchor.gate.queue import Item, Queue, item_for
from gitive.anchor.gate.watched import OfferWatched
from gitive.anchor.obligations.dangling import OfferDangling
from gitive.anchor.obligations.evaluation import Evaluator, Results
from gitive.anchor.prepared.rescue import Rescue
from gitive.anchor.prepared.speculative import SpeculativeMerges
from gitive.anchor.prepared.work import PreparedWork
from gitive.core.clock import now_ms
from gitive.core.records import TEAM_SCOPE
from gitive.errors import RemoteError
from gitive.index import obligations as table
from gitive.index.refresh import fresh_index
from gitive.store import logs, maintenance, refs, sync, watch
from gitive.store import repo as repos
from gitive.team.hive import Hive

if TYPE_CHECKING:
    from gitive.store.types import Repo

LATE_AFTER_MS = 5 * 60_000
LAPSE_NOTICE_MS = 86_400_000  # an item a day before an obligation lapses (the digest lists them)
STEP_DELAY = "GITIVE_ANCHOR_STEP_DELAY_MS"  # for tests: pause after each firing, so a kill lands mid-tick
_ORDER = {"log": 0, "ref": 1, "presence": 2, "watcher": 3, "clock": 4}


@dataclass
class Anchor:
    """One anchor run: the hive it serves, its config, when it started, and what it keeps between ticks
    (implements :class:`gitive.anchor.base.context.Run`, what a step sees of it)."""

    hive: Hive
    config: Config
    started: int
    _evaluator: tuple[str, Evaluator] | None = None
    _reconciled: bool = False
    unpushed: bool = True  # this machine's refs may be ahead of the remote: push at the next tick
    _packed: bool = False
    _gated: bool = False  # the gate has read the index once in this run
    # Every ref's tip in each shared store as the last fetch left it (by repository path): the sources read it,
    # and the next fetch compares with it, so a tick lists the refs once (ingest lists them once more).
    _snapshots: dict[str, dict[str, str]] = field(default_factory=dict)
    _kept: list[sqlite3.Connection] = field(default_factory=list)
    inline: bool = False  # prepared work runs inside the tick (`gitive anchor run --once`), not on threads
    prepared_work: Any = None  # gitive.anchor.prepared.work.Work, made at the first tick that has a task
    _watching: list[tuple[Repo, str, str]] | None = None  # this tick's watch list (watching())
    _watch_list: tuple[Any, list[tuple[Repo, str, str]]] | None = None  # (the config file's stat, its watch list)
    _gate_memory: dict[str, Any] = field(default_factory=dict)  # what the gate keeps between ticks (Gate)
    _cursors: dict[str, tuple[str, Any]] = field(default_factory=dict)  # state.get_prefix's parsed cursors
    _key: Any = None  # this tick's writing key (writing_key())

    def keep_open(self) -> None:
        """Hold an idle connection to the index and to the state database between ticks: SQLite deletes a
        database's write-ahead log when its last connection closes, and recreates it on the next open."""
        if self._kept:
            return
        for path in (self.hive.index_path, self.state_path):
            if path.exists():
                conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True)
                conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # opens the log and shared memory
                self._kept.append(conn)

    @property
    def state_path(self) -> Any:
        return state.path_for(self.hive.store.path)

    def mark(self, index: sqlite3.Connection) -> str:
        """Changes when the obligations (or the watchers configured here) change."""
        return f"{table.current_fingerprint(index)}/{sorted(self.config.watcher_names)}"

    def stale(self, mark: str) -> bool:
        return self._evaluator is None or self._evaluator[0] != mark

    def evaluator(self, mark: str, open_obs: list[dict[str, Any]]) -> Evaluator:
        """The evaluator for the current open obligations, rebuilt only when ``mark`` changed."""
        if self._evaluator is None or self._evaluator[0] != mark:
            self._evaluator = (mark, Evaluator(open_obs, self.config.watcher_names))
        return self._evaluator[1]

    def writing_key(self) -> Any:
        """The machine key for this tick's records, checked once a tick (``Hive.key`` reads the store's config
        for a removal on every call; the tick's ingest is what could record one, and it ran before)."""
        if self._key is None:
            self._key = self.hive.key
        return self._key

    def watching(self) -> list[tuple[Repo, str, str]]:
        """(project store, remote, repository label) for each remote whose branches the anchor watches; read
        once a tick (:func:`tick` forgets it at its start), where four steps each read the git config again."""
        if self._watching is not None:
            return self._watching
        mark = _stat(self.hive.common_dir / "config")  # remotes live in it: a tick with it unchanged reads nothing
        if mark is not None and self._watch_list is not None and self._watch_list[0] == mark:
            self._watching = self._watch_list[1]
            return self._watching
        from gitive.team.projects import normalize_url

        project = self.hive.project
        names = self.hive.sync_remotes(project) or repos.remotes(project)
        self._watching = [(project, r, normalize_url(repos.remote_url(project, r) or r)) for r in names]
        self._watch_list = (mark, self._watching)
        return self._watching


def _stat(path: Any) -> tuple[int, int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size, found.st_ino


def _fetch(anchor: Anchor, report: TickReport) -> list[tuple[Repo, str]]:
    hive, reached = anchor.hive, []
    anchor._snapshots = {path: snap for path, snap in anchor._snapshots.items() if path == hive.project.path}
    for repo, remote, _ in anchor.watching():
        try:
            anchor._snapshots[repo.path] = watch.fetch_all(repo, remote, known=anchor._snapshots.get(repo.path))
            reached.append((repo, remote))
            report.fetched.append(remote)
        except RemoteError as exc:
            anchor._snapshots.pop(repo.path, None)  # a failed fetch may have moved some refs: list them again
            report.unreachable[remote] = str(exc)
    if hive.separate_store:
        for remote in hive.sync_remotes(hive.store) or repos.remotes(hive.store):
            try:
                sync.fetch(hive.store, remote)
                reached.append((hive.store, remote))
            except RemoteError as exc:
                report.unreachable[f"team:{remote}"] = str(exc)
    return reached


def _collect(anchor: Anchor, index: sqlite3.Connection, st: sqlite3.Connection, now: int,
             report: TickReport, presence: dict[str, Any]) -> sources.Batch:
    batch = sources.Batch()
    sources.logs(index, st, batch, anchor._cursors)
    for repo in anchor.hive.shared_stores():
        if repo.path not in anchor._snapshots:  # not fetched this tick (or its fetch failed): list its refs now
            anchor._snapshots[repo.path] = refs.tips(repo, "refs/")
    for repo, remote, label in anchor.watching():
        sources.watched(repo, remote, label, st, batch, now, anchor._snapshots[repo.path])
    members = {m: (p, bool(a)) for m, p, a in index.execute("SELECT machine, person, active FROM members")}
    sources.presence(anchor.hive.shared_stores(), anchor.hive.team_id, members, st, batch, now, anchor._snapshots,
                     presence)
    last = state.get(st, "clock")
    if last is not None and now > last:
        passing = table.open_obligations(index, "AND ((deadline > ? AND deadline <= ?) OR (expires > ? AND "
                                         "expires <= ?))", (last, now, last, now))
    else:
        passing = []
    sources.clock(st, batch, now, passing)
    _watch(anchor, st, batch, now, report)
    batch.events.sort(key=lambda e: (e["ts"], _ORDER.get(e["source"]["kind"], 9), e["sequence"], e["event"]["id"]))
    return batch


def _watch(anchor: Anchor, st: sqlite3.Connection, batch: sources.Batch, now: int, report: TickReport) -> None:
    cwd = anchor.hive.project.workdir or anchor.hive.project.path
    for w in anchor.config.watchers:
        last = state.get(st, f"watcher:{w.name}")
        if last is not None and now - last < w.every * 1000:
            continue
        run = watchers.run(w, cwd, now)
        batch.add("watcher", run.events)
        batch.cursors[f"watcher:{w.name}"] = now
        state.problem(st, f"watcher:{w.name}", run.problem, now)
        if run.problem:
            report.problems[f"watcher {w.name}"] = run.problem


def _late(anchor: Anchor, due: int, now: int, since: int | None = None) -> bool:
    return min(due, since if since is not None else due) < anchor.started or now - due > LATE_AFTER_MS


def _fire(anchor: Anchor, gate: Gate, ob: dict[str, Any], reason: str, due: int, now: int,
          event: dict[str, Any] | None, report: TickReport, since: int | None = None) -> None:
    """Write the firing record, then offer its item: the record first, so a crash never fires twice."""
    late = _late(anchor, due, now, since)
    item = item_for(ob, reason, due, now, late, event)
    record: dict[str, Any] = {"type": "firing", "obligation": ob["id"], "reason": reason, "item": item.id,
                              "due": due, "late": late}
    if event:
        record["event"] = event
    hive = anchor.hive
    logs.append(hive.store, anchor.writing_key(), hive.team_id, "ledger", TEAM_SCOPE, record, at=now)
    gate.offer(item)
    report.fired.append(item.as_dict())
    delay = os.environ.get(STEP_DELAY)
    if delay:
        time.sleep(int(delay) / 1000)


def _event_meta(event: dict[str, Any]) -> dict[str, Any]:
    return {"id": event["event"]["id"], "action": event["event"]["action"], "source": event["source"]["kind"],
            "ts": event["ts"]}


def _reconcile(anchor: Anchor, index: sqlite3.Connection, gate: Gate) -> None:
    """Offer again the items of this anchor's firings (a crash may have come between record and offer)."""
    obs = {ob["id"]: ob for ob in table.open_obligations(index)}
    for f in table.firings_by(index, anchor.hive.me):
        ob = obs.get(f["obligation"])
        if ob is not None:
            gate.offer(item_for(ob, f["reason"], f["due"], f["at"], f["late"], f["event"]))


def _timed(anchor: Anchor, index: sqlite3.Connection, gate: Gate, now: int, report: TickReport,
           done: set[tuple[str, str]]) -> None:
    """Deadlines passed and obligations about to lapse, each fired once."""
    for ob in table.open_obligations(index, "AND deadline IS NOT NULL AND deadline <= ? AND expires > ?",
                                     (now, now)):
        if (ob["id"], "deadline") not in done:
            _fire(anchor, gate, ob, "deadline", ob["deadline"], now, None, report)
    for ob in table.open_obligations(index, "AND expires > ? AND expires <= ?", (now, now + LAPSE_NOTICE_MS)):
        if (ob["id"], "lapsing") not in done:
            _fire(anchor, gate, ob, "lapsing", max(ob["created"], ob["expires"] - LAPSE_NOTICE_MS), now, None, report)


def _verdicts(anchor: Anchor, index: sqlite3.Connection, evaluator: Evaluator | None, results: Results,
              now: int, report: TickReport) -> None:
    """Write a verdict when an obligation became unverifiable, or stopped being so."""
    if evaluator is None and not results.errors:
        return
    known = table.verdicts(index)
    wanted: dict[str, tuple[str, str]] = {}
    if evaluator is not None:
        for key, reason in evaluator.static.items():
            wanted[key] = ("unverifiable", reason)
        for key in evaluator.compiled:
            if known.get(key, ("unsatisfied",))[0] == "unverifiable" and not known[key][1].startswith("evaluation"):
                wanted[key] = ("unsatisfied", "its events can be seen again")
    for key, reason in results.errors.items():
        if key not in results.satisfied:
            wanted[key] = ("unverifiable", reason)
    hive = anchor.hive
    for key, (value, reason) in sorted(wanted.items()):
        if known.get(key, ("unsatisfied", "")) == (value, reason) or (key not in known and value == "unsatisfied"):
            continue
        logs.append(hive.store, anchor.writing_key(), hive.team_id, "ledger", TEAM_SCOPE,
                    {"type": "verdict", "obligation": key, "value": value, "reason": reason[:500]}, at=now)
        report.verdicts.append({"obligation": key, "value": value, "reason": reason})


def tick(anchor: Anchor, *, fetch: bool = True, gate: Gate | None = None) -> TickReport:
    """One tick; see the module docstring. Unreachable remotes and watcher failures are reported, not raised."""
    clock = time.monotonic()
    now = now_ms()
    report = TickReport(at=now)
    anchor._watching = None  # the config may have changed between ticks
    anchor._key = None  # so may the roster (a removal): the key is checked again after this tick's ingest
    if not fetch:
        anchor._snapshots = {}
    reached = _fetch(anchor, report) if fetch else []
    with fresh_index(anchor.hive) as (index, ingested), state.connect(anchor.state_path) as st:
        gate = gate if gate is not None else _gate(anchor, st, index)
        report.received = ingested.received
        if not anchor._reconciled:
            _reconcile(anchor, index, gate)
            anchor._reconciled = True
        # parsed once a tick (and only the cursors whose text changed): the sources read it, the steps read it as
        # the tick saved it
        presence = state.presence(st, parsed=anchor._cursors)
        batch = _collect(anchor, index, st, now, report, presence)
        presence.update((key[len(state.PRESENCE):], value) for key, value in batch.cursors.items()
                        if key.startswith(state.PRESENCE))
        ctx = Tick(anchor, index, st, gate, now, report, batch.events, batch.counts, presence=presence)
        for step in INTAKE:
            step.run(ctx)
        done = table.fired(index)
        evaluator, results = None, Results()
        mark = anchor.mark(index)
        if batch.events or anchor.stale(mark):
            evaluator = anchor.evaluator(mark, table.open_obligations(index) if anchor.stale(mark) else [])
            if batch.events:
                results = evaluator.run(batch.events, {ob for ob, reason in done if reason == "condition"})
        report.evaluations = results.evaluations
        for key, event in sorted(results.satisfied.items(), key=lambda kv: (kv[1]["ts"], kv[0])):
            ob = evaluator.obligations[key] if evaluator else None
            if ob is not None and (key, "condition") not in done:
                _fire(anchor, gate, ob, "condition", event["ts"], now, _event_meta(event), report,
                      batch.since.get(event["event"]["id"]))
        _timed(anchor, index, gate, now, report, done)
        _verdicts(anchor, index, evaluator, results, now, report)
        with st:  # one transaction for every cursor the tick moved
            st.execute("BEGIN")
            for source, value in batch.cursors.items():
                state.put(st, source, value, now)
        report.events = batch.counts
        ctx.changed = bool(report.received or batch.events or report.fired) or not anchor._gated
        for step in STEPS:
            step.run(ctx)
        anchor._gated = True
    anchor.keep_open()
    report.idle = not (batch.events or report.fired or report.verdicts or report.received or report.gate
                       or report.prepared or report.merges or report.rescued)
    if not report.idle or not anchor._packed:
        _pack_refs(anchor)
    anchor.unpushed |= bool(report.fired or report.verdicts or report.gate)
    if anchor.unpushed and reached:
        report.pushed, anchor.unpushed = _push(anchor, reached)
    report.ms = int((time.monotonic() - clock) * 1000)
    return report


def _gate(anchor: Anchor, st: sqlite3.Connection, index: sqlite3.Connection) -> Gate:
    return Gating(anchor.hive, st, index, anchor._gate_memory)


# Steps of the rooms, each a small object below the tick (gitive.anchor.base.context.Step): what the tick offers
# the gate before it evaluates obligations, and what runs after the cursors are saved, in this order.
INTAKE: tuple[Step, ...] = (OfferWatched(),)
STEPS: tuple[Step, ...] = (PreparedWork(), SpeculativeMerges(), Rescue(), OfferDangling(), RunGate())

LOOSE_REFS = 32  # an idle tick reads every ref twice (ingest, sources): loose ones cost a file each


def _pack_refs(anchor: Anchor) -> None:
    """Pack refs after a tick that moved some: git fetch and libgit2 write them loose, and listing a few hundred
    loose refs costs ten times the packed ones (measured: 100 loose refs, 10 ms against 0.8 ms)."""
    anchor._packed = True
    for repo in anchor.hive.shared_stores():
        if maintenance.health(repo).loose_refs > LOOSE_REFS:
            maintenance.pack_refs(repo)


def _push(anchor: Anchor, reached: list[tuple[Repo, str]]) -> tuple[int, bool]:
    """Push this machine's refs to the team store's remotes; the count pushed, and whether any push failed."""
    pushed, failed = 0, False
    for repo, remote in reached:
        if repo.path != anchor.hive.store.path:
            continue
        try:
            result = sync.push(repo, remote, anchor.hive.me)
        except RemoteError:
            failed = True  # what was written stays local, and goes with the next tick's push
            continue
        pushed += len(result.pushed)
        failed |= bool(result.rejected)
    if pushed:
        maintenance.upkeep(anchor.hive.store)  # runs only when due: the schedule is remembered in the repository
    return pushed, failed


def queued(anchor: Anchor, limit: int = 100) -> list[dict[str, Any]]:
    """Every obligation item the tick handed the gate (state ``gated`` once the gate decided it)."""
    with state.connect(anchor.state_path) as st:
        return Queue(st).items(state=None, limit=limit)


__all__ = ["Anchor", "Item", "queued", "tick"]
