"""``gitive sync``: fetch every hive remote, verify and index what came, push this machine's own refs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gitive.core.clock import now_ms
from gitive.errors import RemoteError
from gitive.index import db, ingest, scopes, sync_history
from gitive.index.bodies import drop_own_bodies
from gitive.index.catchup import catch_up
from gitive.index.entries import check_signatures
from gitive.index.problems import Report, record_problem
from gitive.index.refresh import fresh_index
from gitive.store import bodies, maintenance, refs, sync
from gitive.store import repo as repos
from gitive.team.hive import Hive


@dataclass
class SyncReport:
    fetched: dict[str, int] = field(default_factory=dict)  # remote -> refs that moved
    moved: dict[str, int] = field(default_factory=dict)  # what those refs hold (logs, presence, bodies) -> count
    received: int = 0
    problems: list[dict[str, Any]] = field(default_factory=list)
    pushed: dict[str, list[str]] = field(default_factory=dict)
    rejected: list[tuple[str, str, str]] = field(default_factory=list)  # (remote, ref, reason)
    unreachable: dict[str, str] = field(default_factory=dict)  # remote -> one-line reason
    packed: bool = False
    dropped: int = 0  # body stores rewritten to drop retracted bodies
    replaced: list[dict[str, Any]] = field(default_factory=list)  # junk on our refs a lease push replaced
    no_remote: list[str] = field(default_factory=list)  # stores with no remote to sync with (git dirs)
    team: dict[str, str] = field(default_factory=dict)  # the team this sync acted for: {id}
    resealed: int = 0  # new epochs of sealed scopes written for machines that lacked a key

    @property
    def ok(self) -> bool:
        return not self.rejected and not self.unreachable and not self.no_remote

    def as_dict(self) -> dict[str, Any]:
        return {"fetched": self.fetched, "moved": self.moved, "received": self.received, "problems": self.problems,
                "pushed": self.pushed, "rejected": [{"remote": r, "ref": f, "reason": why}
                                                    for r, f, why in self.rejected],
                "unreachable": self.unreachable, "packed": self.packed, "dropped": self.dropped,
                "replaced": self.replaced, "no_remote": self.no_remote, "team": self.team,
                "resealed": self.resealed, "ok": self.ok}


    def lines(self) -> list[tuple[str, str]]:
        """What ``gitive sync`` prints, as (style, text) pairs: the CLI colours them, the daemon's answer to a
        ``gitive sync`` sent over its socket is printed plain."""
        from gitive.store.refs import parse_log_ref

        kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(self.moved.items()))
        out = [("", f"fetched {sum(self.fetched.values())} changed refs from {len(self.fetched)} remote(s)"
                    f"{f' ({kinds})' if kinds else ''}; received {self.received} new entries")]
        for p in self.problems:
            ref = parse_log_ref(p["source"])
            where = f"{ref.source}:{ref.machine[:12]}/{ref.log}" if ref else p["source"]
            seq = f" seq {p['seq']}" if p["seq"] else ""
            out.append(("yellow", f"rejected {p['kind']} in {where}{seq}: {p['detail']}"))
        out += [("", f"pushed {len(pushed)} refs to {remote}") for remote, pushed in self.pushed.items() if pushed]
        out += [("red", f"{remote} refused {ref}: {why}") for remote, ref, why in self.rejected]
        out += [("red", f"{remote}: {why}") for remote, why in self.unreachable.items()]
        if self.resealed:
            out.append(("", f"sealed {self.resealed} scope key(s) to machines that lacked them (docs/scopes.md)"))
        if self.no_remote:
            out.append(("yellow", NO_REMOTE))
        return out


NO_REMOTE = ("this repository has no remote to sync with: add one (`git remote add origin URL`), then run "
             "`gitive sync`")


# Inner signatures of entries authenticated by a hash link, checked per idle sync (about 50 ms of work).
IDLE_SIGNATURE_CHECKS = 1_000


def _signers_text(conn: Any, signers: dict[str, int]) -> str:
    names = dict(conn.execute("SELECT machine, person || '/' || name FROM members").fetchall())
    parts = [f"{'unsigned' if who == 'unsigned' else names.get(who, who[:12] + ' (not on the roster)')} ({n})"
             for who, n in sorted(signers.items(), key=lambda kv: -kv[1])]
    return ", ".join(parts)


def _record_replaced(hive: Hive, remote: str, replaced: tuple[sync.Replaced, ...], report: SyncReport) -> None:
    """Say in the index (for `gitive doctor`) who signed the commits a lease push replaced on the remote."""
    with db.connect(hive.index_path) as conn:
        conn.execute("BEGIN IMMEDIATE")
        for r in replaced:
            who = _signers_text(conn, r.signers)
            odd = f", {r.malformed} of them no well-formed entry (junk or re-wrapped)" if r.malformed else ""
            detail = (f"the remote's copy of this machine's log held {r.commits} commit(s) it did not write "
                      f"(signed by: {who}{odd}); replaced with this machine's verified tip")
            parsed = refs.parse_log_ref(r.ref)
            record_problem(conn, Report(), "replaced", f"{remote}:{r.ref}", r.tip, hive.me,
                           parsed.log if parsed else None, None, detail)
            report.replaced.append({"remote": remote, "ref": r.ref, "tip": r.tip, "commits": r.commits,
                                    "signers": r.signers, "malformed": r.malformed})
        conn.execute("COMMIT")


def run(hive: Hive, *, push: bool = True, progress: ingest.Progress | None = None,
        only: str | None = None) -> SyncReport:
    """One sync round. Unreachable remotes and refused pushes are reported, not raised.

    Raises:
        RemoteError: ``only`` names a remote that does not exist.
    """
    report = SyncReport(team={"id": hive.team_id})
    started, before = now_ms(), sync_history.newest_entry(hive)
    previous = sync_history.last_round(hive)
    if only is not None and not any(only in repos.remotes(r) for r in hive.shared_stores()):
        raise RemoteError(f"no remote named {only!r}; see `git remote -v`")
    reached = _fetch_all(hive, only, report)
    delays, machines = _ingest(hive, report, progress, push, before, previous)
    if push:
        _push_all(hive, reached, machines, report)
    _remember(hive, report, push)
    for repo in hive.stores():  # the personal store too: its bodies are rewritten like any other
        report.packed |= maintenance.upkeep(repo).packed
    _history(hive, report, started, delays)
    return report


def _fetch_all(hive: Hive, only: str | None, report: SyncReport) -> list[tuple[Any, str]]:
    """Fetch every sync remote of every shared store (or only ``only``); the (store, remote) pairs reached."""
    reached: list[tuple[Any, str]] = []
    for repo in hive.shared_stores():
        sync.migrate_config(repo)
        names = sync.sync_remotes(repo)
        if only is not None:
            names = [only] if only in repos.remotes(repo) else []
        elif not names and not repos.remotes(repo):
            report.no_remote.append(repo.path)
        for remote in names:
            try:
                moved = sync.fetch(repo, remote)
                report.fetched[remote] = len(moved)
                for name in moved:  # refs/hive-remotes/<remote>/<logs|presence|bodies>/...
                    kind = name.split("/")[3] if name.count("/") >= 3 else "other"
                    report.moved[kind] = report.moved.get(kind, 0) + 1
                reached.append((repo, remote))
            except RemoteError as exc:
                report.unreachable[remote] = str(exc)
    return reached


def _ingest(hive: Hive, report: SyncReport, progress: ingest.Progress | None, push: bool, before: int,
            previous: dict[str, Any] | None) -> tuple[list[int], list[str]]:
    """Bring the index up to date with what was fetched; the arrival delays and the roster's machines."""
    delays: list[int] = []
    with fresh_index(hive, progress) as (conn, ingested):
        report.received = ingested.received
        report.problems = ingested.problems
        if not ingested.refs_read:  # an idle sync: check some inner signatures in the background
            conn.execute("BEGIN IMMEDIATE")
            check_signatures(conn, hive.team_id, hive.stores(), IDLE_SIGNATURE_CHECKS)
            conn.execute("COMMIT")
        if previous is not None:
            delays = sync_history.arrival_delays(conn, before, _me(hive), previous["at"], now_ms())
        if push:
            _before_push(hive, conn, report)
        machines = [row[0] for row in conn.execute("SELECT machine FROM members ORDER BY machine")]
    return delays, machines


def _before_push(hive: Hive, conn: Any, report: SyncReport) -> None:
    """Reseal scope keys, drop retracted bodies and go above another clone's push, before pushing."""
    if not hive.removed and _me(hive) is not None:
        # A machine that joined a sealed scope gets its keys (and so its history) from one that has them.
        report.resealed = scopes.reseal(hive, conn, _sealed_scopes(hive, conn))
    # A lesson retracted by its reviewer or owner: the author's machine drops the body it serves.
    # The machine key, not the shared-record writer: a removed machine still honours retractions.
    report.dropped = drop_own_bodies(hive.stores(), hive.machine_key, hive.team_id, hive.me, conn=conn)
    # Another clone with this key may have pushed a newer version of our store: go above it.
    reconciled = sum(bodies.reconcile(repo, hive.machine_key, hive.team_id) for repo in hive.shared_stores())
    if report.dropped or reconciled:
        catch_up(hive, conn)  # the pins follow, so the dropped bodies are unreachable here too


def _push_all(hive: Hive, reached: list[tuple[Any, str]], machines: list[str], report: SyncReport) -> None:
    """Push to every remote that was reached; refusals and lease replacements go into the report."""
    me = hive.me
    for repo, remote in reached:
        try:
            result = sync.push(repo, remote, me, team_id=hive.team_id, signers=machines)
        except RemoteError as exc:
            report.unreachable[remote] = str(exc)
            continue
        report.pushed[remote] = result.pushed
        report.rejected += [(remote, ref, why) for ref, why in result.rejected]
        if result.replaced:
            _record_replaced(hive, remote, result.replaced, report)


def _sealed_scopes(hive: Hive, conn: Any) -> list[tuple[Any, str, dict[str, Any]]]:
    """The sealed scopes this machine writes keys for: its person's, and this repository's project."""
    from gitive.core.records import project_log

    found = []
    person = conn.execute("SELECT person FROM members WHERE machine = ? AND active = 1", (_me(hive),)).fetchone()
    if person is not None:
        found.append((hive.store, "personal", {"personal": person[0]}))
    found.append((hive.project_store, project_log(hive.project_id), {"project": hive.project_id}))
    return found


def _remember(hive: Hive, report: SyncReport, pushed: bool) -> None:
    """Keep each remote's outcome beside its store, so ``doctor`` can say a remote refuses pushes."""
    for repo in hive.shared_stores():
        outcome: dict[str, dict[str, Any]] = {}
        for remote in repos.remotes(repo):
            if remote not in report.fetched and remote not in report.unreachable:
                continue
            entry: dict[str, Any] = {"unreachable": report.unreachable.get(remote)}
            if pushed:
                entry["pushed"] = len(report.pushed.get(remote, []))
                entry["rejected"] = [[ref, why] for r, ref, why in report.rejected if r == remote]
            outcome[remote] = entry
        if outcome:
            sync.remember_results(repo, outcome)


def _me(hive: Hive) -> str | None:
    from gitive.errors import KeyFileError

    try:
        return hive.me
    except KeyFileError:
        return None


def _history(hive: Hive, report: SyncReport, started: int, delays: list[int]) -> None:
    """One line of sync history for `gitive ui` (what moved, what failed, how old arrivals were)."""
    sync_history.record(hive, {
        "at": started, "ms": now_ms() - started, "ok": report.ok, "fetched": report.fetched,
        "received": report.received, "pushed": sum(len(v) for v in report.pushed.values()),
        "rejected": len(report.rejected), "unreachable": report.unreachable, "problems": len(report.problems),
        "latency": sync_history.summary(delays),
    })
