"""The gate as the tick runs it: take candidates, decide each in the reference order, write the ledger.

Per tick, after the obligations fired (:mod:`gitive.anchor.tick`):

1. mirror every anchor's ledger decisions from the index (the duplicate check and the budget count them all,
   so two anchors share one budget and a second anchor records the first one's item as a duplicate);
2. take the candidates: items the tick offered (obligations, watcher lines, dangling work), sessions'
   proposals (verified ``item`` records), messages injection screening matches, and held items whose quiet
   hours ended (they re-enter the gate from the start);
3. decide each (:func:`gitive.anchor.gate.order.decide`), then each person's digest when its time came;
4. write the anchor's own item records (their titles sealed to the person and the anchors) and the ledger, one
   entry holding the tick's decisions (ledger format 2; more past 64 KiB), in one batch: the ledger *is*
   the delivery (the person's daemon shows what the ledger says), so a crash between deciding and writing
   sends nothing, and one after writing is found in the ledger on the next start, never decided twice.

The state in ``anchor.sqlite`` is a cache of the ledger: losing it costs a re-read of the ledger from git.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gitive.anchor.base import state
from gitive.anchor.base.context import Tick
from gitive.anchor.gate import digest as digests
from gitive.anchor.gate import floors, gestures, items, ledger
from gitive.anchor.gate import prefs as prefs_mod
from gitive.anchor.gate.items import Candidate
from gitive.anchor.gate.order import DUPLICATE_WINDOW_MS, Context, Decision, decide
from gitive.anchor.gate.queue import Item, Queue
from gitive.anchor.gate.urgency import Facts
from gitive.core import item_ids
from gitive.core.records import TEAM_SCOPE
from gitive.index import ledger as ledger_reads
from gitive.index import obligations as table
from gitive.index import queries
from gitive.team.hive import Hive

MAX_BATCH = 20_000  # decisions written per tick at most; the rest wait for the next tick


@dataclass
class GateReport:
    decided: dict[str, int] = field(default_factory=dict)
    delivered: int = 0
    written: int = 0
    decisions: list[dict[str, Any]] = field(default_factory=list)


class Gate:
    """Implements the tick's :class:`~gitive.anchor.base.context.Gate` protocol and decides at the end of the tick."""

    def __init__(self, hive: Hive, st: sqlite3.Connection, index: sqlite3.Connection,
                 memory: dict[str, Any] | None = None) -> None:
        self.hive, self.st, self.index = hive, st, index
        # What the run keeps between ticks (the tick's Anchor holds it): everyone's preferences and the active
        # people as the index gave them, reused while the index holds the same entries and roster (_index_mark).
        self._memory = memory if memory is not None else {}
        self.me = hive.me
        self.watch: dict[str, dict[str, Any]] = {}
        self._queue = Queue(st)
        self._tick: list[Decision] = []
        self._fp: dict[tuple[str, str], str] = {}
        self._used: dict[tuple[str, str, str], int] = {}
        self._owners: dict[str, str] | None = None  # obligation id -> owner, read once per run
        self._offered: dict[str, tuple[Candidate, dict[str, Any] | None]] = {}  # this run's, by id
        self._known = ledger.Known()  # what the mirror says of the tick's candidates (prior_decisions)
        self._presence: dict[str, Any] | None = None  # the tick's presence cursors (run())

    # --- candidates ---------------------------------------------------------------------------------------

    def offer(self, item: Item) -> bool:
        """An obligation item the tick fired (kept in the tick's queue table too, for ``anchor status``)."""
        new = self._queue.offer(item)
        self.offer_candidate(items.from_obligation(item), item.owner)
        return new

    def offer_candidate(self, c: Candidate, person: str | None = None, watch: dict[str, Any] | None = None) -> bool:
        """Take ``c`` for ``person`` (default: its owner); true if it was new. Offering twice is a no-op."""
        cur = self.st.execute("INSERT OR IGNORE INTO gate_items VALUES (?,?,?,?,'new',NULL,?)",
                              _row(c, person, watch))
        if cur.rowcount > 0:
            self._offered[c.id] = (c, watch)
        return cur.rowcount > 0

    def _offer_many(self, found: list[tuple[Candidate, str]]) -> None:
        """Sessions' proposals of one intake in one statement (thousands a tick); offering twice is a no-op."""
        known = {r[0] for r in self.st.execute(
            f"SELECT id FROM gate_items WHERE id IN ({','.join('?' * len(found))})", [c.id for c, _ in found])}
        fresh = {c.id: (c, person) for c, person in found if c.id not in known}
        self.st.executemany("INSERT OR IGNORE INTO gate_items VALUES (?,?,?,?,'new',NULL,?)",
                            [_row(c, person, None) for c, person in fresh.values()])
        self._offered.update((ident, (c, None)) for ident, (c, _) in fresh.items())

    def _load(self, row: tuple[Any, ...]) -> tuple[Candidate, str, dict[str, Any] | None]:
        offered = self._offered.get(row[0])
        if offered is not None:  # offered in this run: already a candidate, no need to parse it again
            c, watch = offered
        else:
            data = json.loads(row[2])
            parsed = items.from_record(data["record"], data.get("author"), data.get("title"))
            assert parsed is not None  # written by _dump from a valid candidate
            c, watch = parsed, data.get("watch")
        if watch is not None:
            self.watch[c.id] = watch
        return c, row[1], watch

    # --- one tick -----------------------------------------------------------------------------------------

    def run(self, now: int, changed: bool = True, presence: dict[str, Any] | None = None) -> GateReport:
        """Decide every candidate due; ``changed`` false (nothing ingested) skips re-reading the index.
        ``presence``: the tick's parsed presence cursors, when it has them."""
        report = GateReport()
        self._presence = presence
        mark = self._index_mark()
        if self._memory.get("mark") != mark:  # entries came in, or the roster or keys changed: read them again
            self._memory.clear()
            self._memory["mark"] = mark
        elif "prefs" in self._memory:
            self._prefs_cache = self._memory["prefs"]
        with _transaction(self.st):  # one commit for the mirror and the intake, not one per row
            if changed or state.get(self.st, "gate-mirror-ready") is None:
                ledger.mirror(self.index, self.st, self._prefs())
                state.put(self.st, "gate-mirror-ready", True, now)
                self._intake(now)
            if state.get(self.st, "gate-started") is None:
                state.put(self.st, "gate-started", now, now)
        due = self.st.execute("SELECT id, person, data, state FROM gate_items WHERE state = 'new' OR "
                              "(state = 'held' AND until <= ?) ORDER BY offered, id LIMIT ?",
                              (now, MAX_BATCH)).fetchall()
        people = self._memory.get("people")
        if people is None:
            people = self._memory["people"] = items.active_people(self.index)
        self._memory["prefs"] = self._prefs()
        digest_due = digests.due(self.st, self.index, people, self._prefs(), now)
        if not due and not digest_due:
            return report
        loaded: list[tuple[str, Candidate, str]] = []
        for row in due:
            c, person, _ = self._load(row)
            loaded.append((row[3], c, person))
        self._known = ledger.prior_decisions(self.st, [(c.id, c.fingerprint) for _, c, _ in loaded],
                                             now - DUPLICATE_WINDOW_MS)
        ctx = self._context(now)
        pending: list[tuple[Candidate, str]] = []
        with _transaction(self.st):
            for was, c, person in loaded:
                if was == "new" and self.me in self._known.anchors.get(c.id, {}):  # decided before a crash
                    self._settle(c.id)
                    continue
                pending.append((c, person))
            for person in digest_due:
                pending.append((digests.note(self.st, self.index, person, ctx.prefs_for(person), now), person))
        for c, person in pending:
            if person not in people:
                person = _fallback(self.index, c) or person
            d = decide(c, person, ctx)
            self._note(d, ctx)
        self._write(now, report)
        return report

    def _index_mark(self) -> tuple[Any, ...]:
        """Changes when the index gains an entry, or its roster, person keys or exemptions change (the
        obligation tables' fingerprint, which counts those, as the tick's refresh left it)."""
        newest = self.index.execute("SELECT MAX(rowid) FROM entries").fetchone()[0]
        return newest, table.current_fingerprint(self.index)

    def _prefs(self) -> dict[str, prefs_mod.Prefs]:
        if not hasattr(self, "_prefs_cache"):
            self._prefs_cache = prefs_mod.all_current(self.index, self.hive.team_id)
        return self._prefs_cache

    def _context(self, now: int) -> Context:
        live = {p: v for p, (v, _) in gestures.live_people(self.index, self.hive.team_id).items()}
        obligations = {ob["id"]: ob for ob in table.rows(self.index, "WHERE state = 'open'")}
        facts = Facts(obligations, _waiting(self.st, self.index, self._presence), self.watch, _drafts(self.index))
        window = now - DUPLICATE_WINDOW_MS

        def seen(c: Candidate, person: str) -> tuple[str, str] | None:
            if c.id not in self._known.items:  # not read with the tick's due items (a digest note): ask now
                self._known.add(ledger.prior_decisions(self.st, [(c.id, c.fingerprint)], window))
            other = next(((a, b) for a, b in self._known.anchors.get(c.id, {}).items() if a != self.me), None)
            if other:
                return c.id, f"duplicate: anchor {other[0][:12]} already decided it ({other[1]})"
            prior = self._fp.get((person, c.fingerprint))
            if prior is None or prior == c.id:
                prior = next((i for i in self._known.by_fingerprint.get((person, c.fingerprint), ()) if i != c.id),
                             None)
            return (prior, f"duplicate of {prior[:12]}") if prior and prior != c.id else None

        days: set[str] = set()

        def used(person: str, day: str, source: str) -> tuple[int, int]:
            if day not in days:  # the whole day's counts at once, before this tick's decisions add to them
                days.add(day)
                by_person, by_source = ledger.attention_on(self.st, day)
                for p, n in by_person.items():
                    self._used.setdefault((p, day, ""), n)
                for (p, s), n in by_source.items():
                    self._used.setdefault((p, day, s), n)
            return self._used.get((person, day, ""), 0), self._used.get((person, day, source), 0)

        return Context(now, self._prefs(), live, facts, seen, used)

    def _note(self, d: Decision, ctx: Context) -> None:
        """Keep ``d`` for this tick's write; later candidates of the tick see it (duplicates, budget)."""
        self._tick.append(d)
        if d.branch not in ("preference", "duplicate"):
            self._fp.setdefault((d.person, d.item.fingerprint), d.item.id)
        if d.branch == "attention":
            day = prefs_mod.day_of(ctx.prefs_for(d.person), ctx.now)
            self._used[(d.person, day, "")] = self._used.get((d.person, day, ""), 0) + 1
            key = (d.person, day, d.item.source_key)
            self._used[key] = self._used.get(key, 0) + 1

    def _write(self, now: int, report: GateReport) -> None:
        """One batch: the anchor's own item records not yet written, then the tick's decisions in one entry."""
        from gitive.store import logs

        decisions, self._tick = self._tick, []
        ids = list({d.item.id: None for d in decisions})
        unwritten = set()
        for chunk in range(0, len(ids), 500):  # by key: not a scan of every item the gate ever took
            part = ids[chunk:chunk + 500]
            unwritten.update(r[0] for r in self.st.execute(
                f"SELECT id FROM gate_items WHERE id IN ({','.join('?' * len(part))}) AND written = 0", part))
        audience = _audiences(self.index)
        records = []
        for d in decisions:
            if d.item.id in unwritten:
                machines = audience.get(d.person, []) + audience.get("", [])
                records.append(d.item.record(item_ids.seal_title(d.item.id, d.item.title, self.me, machines)))
                unwritten.discard(d.item.id)
        first_batch = len(records)
        batches = ledger.batches(decisions)
        records += [record for record, _ in batches]
        entries = logs.append_many(self.hive.store, self.hive.key, self.hive.team_id, "ledger", TEAM_SCOPE,
                                   records, at=now)
        placed = [(e.seq, n, d, ctx_day(self._prefs(), d.person, now))
                  for (_, held), e in zip(batches, entries[first_batch:], strict=True) for n, d in enumerate(held)]
        self.st.execute("BEGIN")
        try:
            ledger.remember(self.st, self.me, placed, now)
            self._advance(decisions)
            for d in decisions:
                report.decided[d.branch] = report.decided.get(d.branch, 0) + 1
                report.delivered += d.delivered
                if len(report.decisions) < 50:
                    report.decisions.append({"item": d.item.id, "person": d.person, "branch": d.branch,
                                             "rule": d.rule, "shadow": d.shadow})
            self.st.execute("COMMIT")
        except BaseException:
            self.st.execute("ROLLBACK")
            raise
        report.written = len(records)

    def _advance(self, decisions: list[Decision]) -> None:
        """Each decided item's state (and that its record is written: one statement a decision, not two); the
        tick's queue holds obligation items only."""
        self.st.executemany("UPDATE gate_items SET state = ?, until = ?, written = 1 WHERE id = ?",
                            [("held", d.until, d.item.id) if d.branch == "hold" else ("done", None, d.item.id)
                             for d in decisions])
        self.st.executemany("UPDATE queue SET state = 'gated' WHERE id = ?",
                            [(d.item.id,) for d in decisions if d.item.source.get("kind") == "obligation"])

    def _settle(self, item_id: str) -> None:
        """An item this anchor decided before a crash: its state from its last decision, nothing decided again."""
        last = self.st.execute("SELECT branch, at FROM gate_decisions WHERE item = ? AND anchor = ? ORDER BY seq "
                               "DESC, n DESC LIMIT 1", (item_id, self.me)).fetchone()
        until = ledger_reads.until_of(self.index, self.me, item_id) if last and last[0] == "hold" else None
        self.st.execute("UPDATE gate_items SET state = ?, until = ?, written = 1 WHERE id = ?",
                        ("held" if until else "done", until, item_id))
        self.st.execute("UPDATE queue SET state = 'gated' WHERE id = ?", (item_id,))

    # --- intake from the index ----------------------------------------------------------------------------

    def _intake(self, now: int) -> None:
        """Sessions' proposals and screened messages past their cursors, as candidates."""
        repo = _project_repo(self.hive)
        people = items.active_people(self.index)
        for author, log_, hwm in self.index.execute("SELECT author, log, hwm FROM logs WHERE log IN "
                                                    "('team', 'mail')").fetchall():
            key = f"gate-intake:{author}/{log_}"
            seen = state.get(self.st, key) or 0
            if hwm <= seen:
                continue
            person, role = items.person_of(self.index, author)
            # only the kinds the gate takes are read and parsed (not a team log's lessons and citations)
            of = functools.partial(queries.verified_entries, self.index, author=author, log=log_, after_seq=seen,
                                   limit=1 << 40)
            if log_ == "team" and role != "anchor":
                proposed = [self._proposal(e, person, people, repo) for e in of(kind="item")]
                for chunk in range(0, len(proposed), 500):
                    if batch := [p for p in proposed[chunk:chunk + 500] if p is not None]:
                        self._offer_many(batch)
                if person in people:
                    for entry in of(kind="finding"):
                        self._finding(entry, person)
            elif log_ == "mail":
                self._screen(of(kind="message"))
            state.put(self.st, key, hwm, now)

    def _proposal(self, entry: dict[str, Any], person: str | None, people: set[str], repo: Any
                  ) -> tuple[Candidate, str] | None:
        """The candidate a session's proposal is, and whom it is for; None when it is no item."""
        # A member's machine may only propose: an item claiming another source (an obligation, a watcher, a
        # screening finding) is not the anchor's and could reach past preferences and budgets; ignored. Its id and
        # fingerprint are the ones derived from it (an id it claims could be the anchor's next firing's), and it
        # speaks only for its own person's sessions (whose budget share it spends).
        c = items.verified(entry["record"], entry["author"], anchor=False)
        if c is None or person is None or str(c.source.get("ref") or "").split("/", 1)[0] != person:
            return None
        fallback = c.owner if c.owner in people else person
        if self._owners is None:
            self._owners = items.obligation_owners(self.index)
        owner, _ = items.owner_of(self.index, repo, list(c.files), list(c.about), fallback, self._owners)
        return c, owner if owner in people else person

    def _finding(self, entry: dict[str, Any], person: str) -> None:
        """A machine's outbound-screening finding (:mod:`gitive.daemon.findings`): a floor for that machine's
        own person, never anyone else's, so a machine that forges one interrupts only its own person."""
        c = floors.outbound_finding(entry, person)
        if c is not None:
            self.offer_candidate(c, person)

    def _screen(self, messages: list[dict[str, Any]]) -> None:
        machines = {m: p for m, p in self.index.execute("SELECT machine, person FROM members WHERE active = 1")}
        for entry, rules in floors.screen_messages(messages):
            record = entry["record"]
            recipients = {machines.get(r.get("machine")) for r in record.get("recipients") or []
                          if isinstance(r, dict)}
            for person in sorted(p for p in recipients if p):
                title = (f"a message from {record.get('from')} to your session was held by injection screening "
                         f"({', '.join(rules)})")
                self.offer_candidate(items.make({"kind": "screening", "ref": str(record.get("id"))},
                                                "security.screening", f"message:{record.get('id')}", person, title,
                                                entry["at"], about=[{"kind": "message", "id": str(record.get("id"))}]),
                                     person)


@contextlib.contextmanager
def _transaction(st: sqlite3.Connection) -> Iterator[None]:
    """One transaction around many small writes to the anchor's state (its connection is in autocommit)."""
    if st.in_transaction:
        yield
        return
    st.execute("BEGIN")
    try:
        yield
    except BaseException:
        st.execute("ROLLBACK")
        raise
    st.execute("COMMIT")


def ctx_day(prefs: dict[str, prefs_mod.Prefs], person: str, now: int) -> str:
    return prefs_mod.day_of(prefs.get(person) or prefs_mod.Prefs(person), now)


def _dump(c: Candidate, watch: dict[str, Any] | None) -> str:
    """A candidate as the anchor's state keeps it: its record (format 1, the title with it: local), whose it is."""
    return json.dumps({"record": c.record(), "author": c.author, "watch": watch})  # read back by _load only


def _row(c: Candidate, person: str | None, watch: dict[str, Any] | None) -> tuple[Any, ...]:
    return c.id, person or c.owner, _dump(c, watch), c.created, int(c.author is not None)


def _audiences(index: sqlite3.Connection) -> dict[str, list[str]]:
    """person -> their active machines, and ``""`` -> the active anchors: whom an anchor's item title is sealed to
    (the person it is for, to read it; the anchors, to tell it again in a digest or to a second anchor)."""
    out: dict[str, list[str]] = {}
    for machine, person, role in index.execute("SELECT machine, person, role FROM members WHERE active = 1"):
        out.setdefault("" if role == "anchor" else person, []).append(machine)
    return out


def _fallback(index: sqlite3.Connection, c: Candidate) -> str | None:
    """An owner who left (or none the graph names): the team's first admin person sees it instead."""
    row = index.execute("SELECT person FROM members WHERE active = 1 AND role != 'anchor' ORDER BY ts LIMIT 1"
                        ).fetchone()
    return row[0] if row else None


def _waiting(st: sqlite3.Connection, index: sqlite3.Connection, presence: dict[str, Any] | None = None) -> set[str]:
    """person/session of every session that waits for approval, from the presence the tick last read."""
    persons = dict(index.execute("SELECT machine, person FROM members").fetchall())
    out = set()
    for machine, cursor in state.presence(st, presence).items():
        for name, session in (cursor.get("sessions") or {}).items():
            if isinstance(session, dict) and session.get("turn") == "waiting_approval" and machine in persons:
                out.add(f"{persons[machine]}/{name}")
    return out


def _drafts(index: sqlite3.Connection) -> set[str]:
    """Tasks whose newest step is a draft waiting for its owner's review (docs/prepared.md)."""
    from gitive.index import prepared as prepared_reads

    return {task for task, step in prepared_reads.latest(index).items() if step["state"] == "drafted"}


def _project_repo(hive: Hive) -> Any:
    try:
        return hive.project
    except Exception:  # no project repository here (a bare team store): owners come from records only
        return None


def offer_all(gate: Gate, candidates: Iterable[tuple[Candidate, str | None, dict[str, Any] | None]]) -> int:
    return sum(gate.offer_candidate(c, person, watch) for c, person, watch in candidates)


class RunGate:
    """The tick's last step: what the anchor checked goes to the digest, then the gate decides what was offered."""

    name = "gate"

    def run(self, tick: Tick) -> None:
        if not isinstance(tick.gate, Gate):
            return
        open_count = len(table.open_obligations(tick.index)) if tick.events else 0
        digests.record_checked(tick.state, tick.now, sum(tick.counts.values()), tick.report.evaluations,
                               open_count, tick.counts.get("watcher", 0))
        found = tick.gate.run(tick.now, tick.changed, tick.presence)
        if found.decided:
            tick.report.gate = {"decided": found.decided, "delivered": found.delivered,
                                "decisions": found.decisions}
