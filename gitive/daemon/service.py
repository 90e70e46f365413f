"""The daemon's work, without its transport: repositories it serves, presence, sync with back-off, mail.

``gitive.daemon.server`` puts a socket in front of it and ``gitive.daemon.runner`` drives it on timers and
file-system events. Every method opens what it needs (pygit2 repositories, SQLite connections) itself, so
the socket's threads and the timer thread never share one.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

from gitive.capture import events, locate
from gitive.core.clock import now_ms
from gitive.daemon import anchor_items, findings, mailbox, overlap, prepare, presence, stuck
from gitive.daemon import db as daemon_db
from gitive.errors import GitiveError, NoTeam
from gitive.index import queries
from gitive.index.refresh import fresh_index
from gitive.index.sync import run as sync_run
from gitive.store import sync
from gitive.team.hive import Hive, open_hive

PUBLISH_EVERY_MS = 15_000
MAX_BACKOFF_S = 600
PROBE_EVERY_S = 2.0  # while a local session is live: ask the remotes whether mail moved this often
MAIL_REFS = ["refs/hive/logs/*/mail"]  # what the probe asks about: every machine's mail log


class Service:
    def __init__(self, interval: float = 30.0) -> None:
        self.interval = interval
        self.started = now_ms()
        self.lock = threading.RLock()
        self.status: dict[str, dict[str, Any]] = {}  # store path -> last sync, errors, next due
        self.last_publish: dict[str, int] = {}
        self._rules: Any = None
        self.live_sessions = 0  # this machine's live sessions at the last presence round
        self.live_stores: set[str] = set()  # the team stores those sessions work for (the ones worth probing)
        self.requests = {"probe": 0, "fetch": 0, "push": 0}  # what this daemon asked of remotes, for its cost

    # --- repositories -------------------------------------------------------------------------------

    def add_repo(self, path: str | os.PathLike[str]) -> bool:
        try:
            hive = open_hive(path)
        except GitiveError:
            return False
        with daemon_db.connect() as db:
            db.execute("INSERT INTO repos VALUES (?, ?) ON CONFLICT(path) DO UPDATE SET last_seen = excluded.last_seen",
                       (str(Path(hive.project.workdir or hive.project.path).resolve()), now_ms()))
        return True

    def discover(self, since_ms: int) -> None:
        """Register repositories that sessions worked in (from the event log)."""
        seen = set()
        for event in events.read(since_ms=since_ms):
            repo = (event.get("vcs") or {}).get("repository")
            if repo and repo not in seen:
                seen.add(repo)
                self.add_repo(repo)

    def hives(self) -> dict[str, Hive]:
        """One hive per team store (several repositories of one team share it): presence, mail, probes."""
        out: dict[str, Hive] = {}
        for hive in self.repo_hives().values():
            out.setdefault(store_key(hive), hive)
        return out

    def repo_hives(self) -> dict[str, Hive]:
        """One hive per repository served, keyed as :func:`sync_key`: what sync covers (a repository attached
        to a team keeps its project records in itself, with its own remotes)."""
        out: dict[str, Hive] = {}
        with daemon_db.connect() as db:
            paths = [r[0] for r in db.execute("SELECT path FROM repos ORDER BY last_seen DESC")]
        for path in paths:
            try:
                hive = open_hive(path)
            except (GitiveError, OSError):
                continue
            out.setdefault(sync_key(hive), hive)
        return out

    # --- presence and notices -----------------------------------------------------------------------

    def _roster(self, hive: Hive) -> tuple[dict[str, dict[str, Any]], str | None]:
        with fresh_index(hive) as (conn, _):
            members = {m["machine"]: m for m in queries.members(conn)}
        me = members.get(hive.me)
        return members, me["person"] if me and me["active"] else None

    def _local_view(self, hive: Hive, db: Any) -> tuple[dict[str, dict[str, Any]], str, list[dict[str, Any]],
                                                       dict[str, Any]] | None:
        """Roster, this machine's person, its live sessions of this team, and their snapshot."""
        members, person = self._roster(hive)
        if person is None:
            return None
        peers = presence.peers(hive, members)
        mine_peer_names = {s.get("name") for p in peers if p.get("person") == person
                           for s in p.get("sessions") or [] if isinstance(s, dict)}
        sessions = [s for s in presence.collect(db, {n for n in mine_peer_names if n})
                    if _team_of(s.get("repo")) == hive.team_id]  # never publish another team's work
        resolved = stuck.annotate(db, sessions)  # stuck signatures, as hashes only
        return members, person, sessions, presence.snapshot(hive.me, person, members[hive.me]["name"], sessions,
                                                            resolved)

    def refresh_presence(self, force: bool = False) -> dict[str, Any]:
        """Recompute this machine's sessions, publish them (at most every 15 s), queue overlap notices."""
        result: dict[str, Any] = {}
        live, stores = 0, set()
        with self.lock, daemon_db.connect() as db:
            for store, hive in self.hives().items():
                view = self._local_view(hive, db)
                if view is None:
                    continue
                members, person, sessions, snap = view
                now = now_ms()
                # Nothing to say before the first session: publishing an empty snapshot would only make the
                # first real one wait out the 15 s limit.
                first = store not in self.last_publish and not sessions
                due = not first and (force or now - self.last_publish.get(store, 0) >= PUBLISH_EVERY_MS)
                if due and presence.publish(hive, snap):
                    self.last_publish[store] = now
                live += len(sessions)
                if sessions:
                    stores.add(store)
                _note_prompts(db, sessions, person)
                directory = presence.directory(hive, snap, members)
                overlap.notices(db, sessions, directory, person)
                anchor_items.show_due(db, hive.team_id, sessions)
                result[store] = {"sessions": len(sessions), "directory": directory}
            prepare.spool_all(db)  # what is due now waits in each session's spool for its next hook call
        self.live_sessions, self.live_stores = live, stores
        self.prepare_repos()
        return result

    def prepare_repos(self) -> None:
        """Each served repository's card and file matches, as its next session start and edits need them."""
        for hive in self.repo_hives().values():
            if hive.project.workdir:
                prepare.prepare_repo(hive.project.workdir)

    def spool(self, harness: str | None = None, session: str | None = None, read: bool = False) -> int:
        """Hand what is due to the sessions' spools now (one session's, after its hook delivered; ``read``:
        that session took a turn since its last delivery)."""
        with daemon_db.connect() as db:
            if harness and session:
                return prepare.spool_one(db, harness, session, read)
            return prepare.spool_all(db)

    # --- sync --------------------------------------------------------------------------------------

    def sync_due(self) -> list[str]:
        now = time.monotonic()
        return [s for s in self.repo_hives() if self.status.get(s, {}).get("next", 0) <= now]

    def probe(self) -> list[str]:
        """The team stores (of teams a live session here works for) whose remotes' mail refs moved since they
        were last fetched.

        One ``git ls-remote`` of the mail refs per remote: no objects move, so asking every few seconds
        while someone works costs the remote about what an HTTP HEAD does. A store backing off after
        failures is not asked; an unreachable remote counts as a failure.
        """
        moved = []
        now = time.monotonic()
        for store, hive in self.hives().items():
            if store not in self.live_stores:
                continue  # no live session works for this team: its interval sync is enough
            state = self.status.setdefault(sync_key(hive), {"failures": 0, "next": 0.0})
            if state["failures"] and state["next"] > now:
                continue
            repo = hive.store
            for remote in sync.sync_remotes(repo):
                self.requests["probe"] += 1
                try:
                    theirs = sync.probe(repo, remote, MAIL_REFS, timeout=10)
                except GitiveError:
                    moved.append(store)  # let the sync say what is wrong and back off
                    break
                ours = sync.tracked(repo, remote, MAIL_REFS)
                if any(ours.get(name) != tip for name, tip in theirs.items()):
                    moved.append(store)
                    break
        return moved

    def directory(self, path: str) -> list[dict[str, Any]]:
        """Every known session of the team of the repository at ``path``, as ``team_view`` sees it (read-only).

        Raises:
            NoTeam: this machine is not an active member of that team.
        """
        return team_view(path).directory

    def push_now(self, path: str) -> dict[str, Any]:
        """Push the own refs of the hive at ``path`` at once (a message was just written)."""
        hive = open_hive(path)
        return {remote: done._asdict() for remote, done in push_own(hive).items()}

    def sync(self, only_due: bool = True, stores: set[str] | None = None) -> dict[str, Any]:
        """Sync every hive (or those due, or ``stores``); an unreachable remote backs off, doubling up to 10
        minutes."""
        out = {}
        for key, hive in self.repo_hives().items():
            state = self.status.setdefault(key, {"failures": 0, "next": 0.0})
            if stores is not None and key not in stores and store_key(hive) not in stores:
                continue
            if only_due and state["next"] > time.monotonic():
                continue
            self._sync_one(key, hive)
            out[key] = dict(state)
        return out

    def sync_repo(self, path: str) -> Any:
        """One full sync of the hive at ``path``, as ``gitive sync`` would run it; its ``SyncReport``.

        Raises:
            GitiveError: ``path`` is not in a team.
        """
        from gitive.lessons.outcomes import record_if_due

        hive = open_hive(path)
        if sync_key(hive) not in self.status:  # a repository this daemon did not serve yet
            self.add_repo(path)
        with self.lock:
            record_if_due(hive)  # as `gitive sync` does: settled citations go out with this sync
        report = self._sync_one(sync_key(hive), hive)
        if report is None:
            raise GitiveError(self.status[sync_key(hive)].get("error", "sync failed"))
        return report

    def _sync_one(self, store: str, hive: Hive) -> Any:
        """Sync one hive, keep its status and back-off, queue its mail; the report (None if it failed)."""
        state = self.status.setdefault(store, {"failures": 0, "next": 0.0})
        report = None
        try:
            with self.lock:
                with daemon_db.connect() as db:
                    mailbox.sign_acks(hive, db)  # acks owed go out with this sync
                    problem = findings.report(hive, db)  # outbound screening after the fact: out with this sync
                if problem:
                    state["findings_error"] = problem
                else:
                    state.pop("findings_error", None)
                report = sync_run(hive)
            self.requests["fetch"] += len(report.fetched) + len(report.unreachable)
            self.requests["push"] += sum(1 for pushed in report.pushed.values() if pushed)
            state["last_sync"] = now_ms()
            state["unreachable"] = report.unreachable
            state["rejected"] = [f"{r} {ref}: {why}" for r, ref, why in report.rejected]
            state["failures"] = state["failures"] + 1 if report.unreachable else 0
            state.pop("error", None)
        except Exception as exc:  # a broken repository must not stop the daemon serving the others
            state["error"] = f"{type(exc).__name__}: {exc}"
            state["failures"] += 1
        delay = min(MAX_BACKOFF_S, self.interval * (2 ** min(state["failures"], 6))) if state["failures"] \
            else self.interval
        state["next"] = time.monotonic() + delay
        state["backoff_s"] = delay if state["failures"] else 0
        self.ingest_mail(hive)
        self.take_items(hive)
        self.spool()  # a message that just arrived is ready for the session's very next hook call
        if hive.project.workdir:
            prepare.prepare_repo(hive.project.workdir)
        return report

    # --- mail --------------------------------------------------------------------------------------

    def rules(self) -> Any:
        if self._rules is None:
            from gitive.daemon.screening import load_rules

            self._rules = load_rules()
        return self._rules

    def ingest_mail(self, hive: Hive) -> int:
        from gitive.daemon import trust

        with self.lock, fresh_index(hive) as (conn, _), daemon_db.connect() as db:
            members = {m["machine"]: m for m in queries.members(conn)}
            me = members.get(hive.me)
            if me is None:
                return 0
            ctx = trust.TrustContext(person_of=lambda m: (members.get(m) or {}).get("person"), db=db,
                                     rules=self.rules(), config=load_config())
            return mailbox.ingest(conn, db, hive.me, me["person"], lambda msg: trust.admit(msg, ctx))

    def take_items(self, hive: Hive) -> int:
        """What the anchor's gate delivered to this machine's person (shown by ``refresh_presence``)."""
        with self.lock, fresh_index(hive) as (conn, _), daemon_db.connect() as db:
            row = conn.execute("SELECT person, active FROM members WHERE machine = ?", (hive.me,)).fetchone()
            if not row or not row[1]:
                return 0
            added = anchor_items.take(conn, db, hive.team_id, row[0])
        if added:
            self.refresh_presence()  # a floor or an alarm is shown now, not at the next presence timer
        return added

    def session_name(self, harness: str, session: str) -> str | None:
        with daemon_db.connect() as db:
            row = db.execute("SELECT name FROM sessions WHERE key = ?", (f"{harness}:{session}",)).fetchone()
        if row is None:
            self.refresh_presence()
            with daemon_db.connect() as db:
                row = db.execute("SELECT name FROM sessions WHERE key = ?", (f"{harness}:{session}",)).fetchone()
        return row[0] if row else None

    def pending(self, harness: str, session: str, room: int = mailbox.DEFAULT_CAP,
                cap: int = mailbox.DEFAULT_CAP, until: int | None = None) -> list[dict[str, Any]]:
        """Hand out what fits ``room`` bytes of the hook's reply (``cap``: the most one reply may hold).

        ``until`` (wall-clock ms) is when the asking hook stops listening: a request read later (this daemon
        was stopped, or busy) hands out nothing, so nothing waits 90 s for a hook that is gone.
        """
        name = self.session_name(harness, session)
        if name is None or (until is not None and time.time_ns() // 1_000_000 >= until):
            return []
        # No service lock here: a hook waits at most 150 ms, and SQLite orders the writes. Acks are signed
        # later, before the next sync, so nothing slow happens on a hook's path.
        with daemon_db.connect() as db:
            # The session took another turn since its last delivery: what was delivered has been read.
            read = [r[0] for r in db.execute("SELECT id FROM inbox WHERE to_session = ? AND state = 'delivered'",
                                             (name,))]
            if read:
                mailbox.confirm(None, db, read, name, "read")
            if until is not None and time.time_ns() // 1_000_000 >= until:
                return []
            return mailbox.pending(db, name, room=room, cap=cap)

    def unhand(self, harness: str, session: str, ids: list[str]) -> None:
        """Items handed to a hook that went away before reading them wait again (not 90 s in flight)."""
        name = self.session_name(harness, session)
        if name is not None:
            with daemon_db.connect() as db:
                mailbox.unhand(db, name, ids)

    def delivered(self, harness: str, session: str, ids: list[str]) -> list[str]:
        name = self.session_name(harness, session)
        if name is None:
            return []
        with daemon_db.connect() as db:
            done = mailbox.confirm(None, db, ids, name, "delivered")
        for item in done:
            part = mailbox.part_of(item)
            delivery = {"tier": "turn", "part": f"{part[1]}/{part[2]}"} if part else {"tier": "turn"}
            events.append(events.make("team.message.injected", harness=harness, session=session,
                                      message={"id": part[0] if part else item}, delivery=delivery))
        return done

    def _hive_for_session(self, name: str) -> Hive | None:
        with daemon_db.connect() as db:
            row = db.execute("SELECT repo FROM sessions WHERE name = ? ORDER BY last_seen DESC", (name,)).fetchone()
        if row and row[0]:
            try:
                return open_hive(row[0])
            except GitiveError:
                pass
        hives = list(self.hives().values())
        return hives[0] if hives else None

    def describe(self) -> dict[str, Any]:
        return {"pid": os.getpid(), "started": self.started, "interval": self.interval,
                "live_sessions": self.live_sessions, "requests": dict(self.requests),
                "hives": {s: {k: v for k, v in st.items() if k != "next"} for s, st in self.status.items()},
                "repos": [str(Path(h.project.workdir or h.project.path)) for h in self.repo_hives().values()]}


class TeamView(NamedTuple):
    """The team as one repository's hive sees it now: every known session, and who this machine is."""

    hive: Hive
    directory: list[dict[str, Any]]
    persons: set[str]
    person: str


def team_view(repo: str | os.PathLike[str] | None = None) -> TeamView:
    """Read-only: this machine's live sessions and its peers' published ones (nothing published or queued).

    Raises:
        NoTeam: this machine is not an active member of the repository's team.
    """
    hive = open_hive(repo)
    service = Service()
    with daemon_db.connect() as db:
        view = service._local_view(hive, db)
    if view is None:
        raise NoTeam("this machine is not an active member of the team; see `gitive team`")
    members, person, _, snap = view
    return TeamView(hive, presence.directory(hive, snap, members), {m["person"] for m in members.values()},
                    person)


def store_key(hive: Hive) -> str:
    return str(Path(hive.store.path).resolve())


def sync_key(hive: Hive) -> str:
    """The team store's path, or for a repository attached to a team (separate store) its own git dir."""
    return str(hive.common_dir.resolve()) if hive.separate_store else store_key(hive)


def push_own(hive: Hive) -> dict[str, sync.PushResult]:
    """Push this machine's own hive refs of ``hive`` to every remote sync uses, without fetching first
    (what a just-sent message needs); a remote that cannot be reached is left to the next sync."""
    out = {}
    for repo in hive.shared_stores():
        for remote in sync.sync_remotes(repo):
            try:
                out[remote] = sync.push(repo, remote, hive.me)
            except GitiveError:
                continue
    return out


def load_config() -> dict[str, Any]:
    """``$GITIVE_HOME/config.yaml`` (inbound policy, rate limit, loop guard); empty when absent."""
    from gitive.core.home import gitive_home

    path = gitive_home() / "config.yaml"
    if not path.exists():
        return {}
    import yaml

    try:
        value = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise GitiveError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(value, dict):
        raise GitiveError(f"{path} must hold a mapping (inbound, rate_limit, loop_guard)")
    return value


def _team_of(repo: str | None) -> str | None:
    found = locate.find(repo) if repo else None
    return locate.read_config(found.common_dir).get("hive.team") if found else None


def _note_prompts(db: Any, sessions: list[dict[str, Any]], person: str) -> None:
    """A person typed a prompt in a session since we last looked: reset that session's loop-guard pairs."""
    from gitive.daemon import trust

    since = int(daemon_db.meta_get(db, "prompts_seen", "0"))
    latest = since
    for event in events.read(since_ms=since + 1, actions=("prompt.submitted",)):
        key = f"{(event.get('harness') or {}).get('name')}:{(event.get('session') or {}).get('id')}"
        name = next((s["name"] for s in sessions if s["session_key"] == key), None)
        if name:
            trust.note_person_input(db, f"{person}/{name}")
        latest = max(latest, int(event.get("ts", 0)))
    if latest != since:
        daemon_db.meta_set(db, "prompts_seen", str(latest))
