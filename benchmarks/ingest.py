"""Ingest benchmark: many machines' signed logs fetched from a bare remote, then verified and indexed.

    .venv/bin/python benchmarks/ingest.py                      # 50 machines x 2,000 entries (100,000)
    .venv/bin/python benchmarks/ingest.py --machines 5 --entries 200 --sync-runs 3   # a quick run
    .venv/bin/python benchmarks/ingest.py --profile            # also profile the ingest (cProfile)

What it does (see benchmarks/README.md for what each printed figure means):

1. Data (cached): a bare remote holding a real team founded with ``gitive.enrolment.ops.found``, the founder's
   roster admitting ``--machines`` machines (founder-signed ``member`` entries written with
   ``gitive.store.logs.append``), and for each machine a ``team`` log of ``--entries`` signed entries. The bulk
   logs are written with ``git fast-import`` in gitive's exact commit format (same tree, author, committer and
   message as ``logs.write_commit``); samples are then checked with ``verify.verify_chain`` and rebuilt with
   ``logs.write_commit`` to prove they are the commits gitive itself would write.
2. A fresh clone of the remote is configured as ``gitive join`` would (``hive.team``, ``hive.founder``, the
   ``+refs/hive/*:refs/hive-remotes/origin/*`` refspec), then ``git fetch`` of the hive refs is timed.
3. Baseline: the floor for this work, in-process, single-threaded: walk every log ref's commits with pygit2,
   read ``entry.json``, parse it, and verify the ed25519 signature over ``"hive/1/<team>/<kind>/" +
   canonical(body)``.
4. gitive: ``gitive.index.ingest.ingest`` in-process into a fresh SQLite file (the hive's own index path);
   entries, members and problems are counted and checked.
5. No-op sync: the real ``gitive sync`` CLI as a subprocess against plain ``git fetch`` + ``git push`` of
   the same refspecs, median of several interleaved runs.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

FORMAT_VERSION = 2  # bump when the generated data changes shape, so old caches are not reused
BULK_LOG = "team"
TEAM_SCOPE: dict[str, Any] = {"team": True}
DAY_MS = 86_400_000


# --------------------------------------------------------------------------------------------- data


def bench_key(index: int) -> Any:
    return c.seeded_key(b"gitive-bench-machine", index)


def bench_machine(index: int) -> str:
    return c.seeded_machine(b"gitive-bench-machine", index)


MIX_MAIL_EVERY = 3  # in the realistic mix, every third entry of a machine is mail (in its `mail` log)
# The team log's cycle in the realistic mix: a lesson (citing files and a commit), its citations, a peer's review,
# and the anchor's firing and verdict records.
MIX_CYCLE = ("lesson", "citation", "citation", "review", "lesson", "citation", "firing", "verdict")


def _invite(seed: bytes, at: int) -> dict[str, Any]:
    return {"type": "invite", "id": c.hex_of(b"id/" + seed), "key": c.hex_of(b"key/" + seed), "reusable": False,
            "expires": at + 7 * DAY_MS}


def _team_record(kind: str, n: int, seed: bytes, lesson: str, machines: int, index: int) -> dict[str, Any]:
    """One record of the realistic mix's team log (``lesson`` is the last lesson this machine wrote)."""
    if kind == "lesson":
        files = [f"src/pkg{n % 40}/mod{n % 7}.py", f"tests/test_mod{n % 11}.py"]
        return {"type": "lesson", "id": c.hex_of(b"lesson/" + seed), "kind": ("Gotcha", "Convention", "Correction")[n % 3],
                "evidence": [{"kind": "file", "path": files[0], "digest": c.hex_of(b"f/" + seed)},
                             {"kind": "commit", "ref": c.hex_of(b"commit/" + seed)[:40], "files": files}],
                "tags": ["bench", f"t{n % 17}"], "body_hash": c.hex_of(b"body/" + seed), "hearsay": False,
                "session": f"s-{c.hex_of(seed)[:12]}"}
    if kind == "citation":
        return {"type": "citation", "lesson": lesson, "session": f"s-{c.hex_of(seed)[:12]}", "success": n % 5 != 0,
                "tests_passed": n % 7 != 0, "reverted": False}
    if kind == "review":
        return {"type": "review", "about": lesson, "approver": f"dev{(index + 1) % machines}", "approved": True,
                "note": "checked against the code: holds"}
    obligation = c.hex_of(b"obligation/" + seed)
    if kind == "firing":
        return {"type": "firing", "obligation": obligation, "reason": "deadline", "item": c.hex_of(b"item/" + seed),
                "due": 1_700_000_000_000 + n, "late": False}
    return {"type": "verdict", "obligation": obligation, "value": "unverifiable", "reason": "no event source"}


def _mail_record(n: int, seed: bytes, at: int, machines: int, index: int) -> dict[str, Any]:
    peer = (index + 1 + n % 13) % machines
    if n % 2:
        return {"type": "message", "id": c.ulid_of(at, seed), "from": f"dev{index}/api-claude", "to": f"dev{peer}",
                "recipients": [{"machine": bench_machine(peer), "session": None}],
                "body": f"heads-up {n}: the retry budget in net/retry.py changed; rebase before you touch it",
                "from_person": False}
    return {"type": "ack", "message": c.ulid_of(at - 1000, b"m/" + seed), "state": "read", "session": "api-claude"}


def mix_logs(mix: bool) -> tuple[str, ...]:
    return ("team", "mail") if mix else (BULK_LOG,)


def _records(index: int, team_id: str, entries: int, base_at: int, machines: int, mix: bool
             ) -> dict[str, list[tuple[int, dict[str, Any]]]]:
    """(at, record) of each bulk log of machine ``index``, oldest first."""
    out: dict[str, list[tuple[int, dict[str, Any]]]] = {log: [] for log in mix_logs(mix)}
    lesson = c.hex_of(b"first-lesson/%d" % index)
    for n in range(1, entries + 1):
        at = base_at + n * 1000 + index
        seed = f"{team_id}/{index}/{n}".encode()
        if not mix:
            out[BULK_LOG].append((at, _invite(seed, at)))
        elif n % MIX_MAIL_EVERY == 0:
            out["mail"].append((at, _mail_record(n, seed, at, machines, index)))
        else:
            record = _team_record(MIX_CYCLE[len(out["team"]) % len(MIX_CYCLE)], n, seed, lesson, machines, index)
            lesson = record["id"] if record["type"] == "lesson" else lesson
            out["team"].append((at, record))
    return out


def _machine_stream(job: tuple[int, str, int, int, int, bool]) -> bytes:
    """``git fast-import`` commands for one machine's bulk logs: ``entries`` signed v2 entries in all
    (:func:`_common.log_stream`): ``invite`` records, or the realistic mix (``mix``)."""
    from gitive.core.keys import machine_id

    index, team_id, entries, base_at, machines, mix = job
    key = bench_key(index)
    me = machine_id(key)
    out = io.BytesIO()
    for log, records in _records(index, team_id, entries, base_at, machines, mix).items():
        c.log_stream(out, key, team_id, me, log, ((at, TEAM_SCOPE, record) for at, record in records))
    return out.getvalue()


def generate(data_dir: Path, machines: int, entries: int, gc: bool, mix: bool) -> dict[str, Any]:
    """Build the cached data set under ``data_dir`` (removed first) and return its description."""
    from gitive.core.clock import now_ms

    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir(parents=True)
    print(f"generating {machines} machines x {entries} entries ({'realistic mix' if mix else 'invites'}) "
          f"in {data_dir}", file=sys.stderr)
    start = time.perf_counter()
    with c.step("bare remote, founder's clone, gitive team (ops.found)"):
        team = c.found_team(data_dir)
    remote, team_id, founder = team.remote, team.team_id, team.founder
    with c.step(f"founder admits {machines} machines (logs.append of member records)"):
        c.admit(team, [(bench_machine(i), f"dev{i}", f"box{i}") for i in range(machines)])
        c.git("push", "--quiet", "origin", "refs/hive/*:refs/hive/*", cwd=team.work)
    base_at = now_ms() - (entries + 10) * 1000
    with c.step(f"sign {machines * entries:,} entries and git fast-import them into the remote"):
        c.fast_import(remote, _machine_stream, [(i, team_id, entries, base_at, machines, mix)
                                                        for i in range(machines)])
    before = c.dir_size(remote / "objects")
    if gc:
        with c.step("git gc on the remote (as a host would have packed it)"):
            c.git("gc", "--quiet", cwd=remote)
    with c.step("validate samples (verify.verify_chain, logs.write_commit gives the same commit ids)"):
        validate(remote, team_id, machines, entries, mix)
    meta = {"format": FORMAT_VERSION, "mix": mix, "machines": machines, "entries": entries, "team_id": team_id,
            "founder": founder, "roster_entries": 3 + machines, "bulk_logs": list(mix_logs(mix)),
            "objects_bytes_before_gc": before, "objects_bytes": c.dir_size(remote / "objects"),
            "generate_seconds": round(time.perf_counter() - start, 1)}
    (data_dir / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def validate(remote: Path, team_id: str, machines: int, entries: int, mix: bool) -> None:
    """Prove the generated logs are valid gitive data: whole chains verify, and commits are bit-identical
    to what ``logs.write_commit`` builds from the same entry (a no-op write: the objects exist already)."""
    import pygit2

    from gitive.store import logs, refs, verify

    repo = pygit2.Repository(str(remote))
    for i in sorted({0, machines // 2, machines - 1}):
        me = bench_machine(i)
        read = 0
        for log in mix_logs(mix):
            ref = refs.log_ref(me, log)
            tip = refs.tip(repo, ref)
            assert tip, f"{ref} is missing"
            result, _ = verify.verify_chain(repo, team_id, ref, me, log, tip, lambda _oid: None)
            assert result.problem is None, f"{ref}: {result.problem}"
            read += len(result.entries)
            for entry in (result.entries[0], result.entries[len(result.entries) // 2], result.entries[-1]):
                rebuilt = logs.write_commit(repo, entry.raw, entry.body, entry.parent)
                assert rebuilt == entry.commit, f"{ref} seq {entry.seq}: fast-import wrote {entry.commit}, " \
                                                f"gitive would write {rebuilt}"
                again = logs.read_entry(repo, entry.commit)
                assert verify.check_entry(team_id, me, log, again, entry.seq, ref) is None
        assert read == entries, f"machine {i}: {read} entries, expected {entries}"


def load_or_generate(cache: Path, machines: int, entries: int, regenerate: bool, gc: bool, mix: bool
                     ) -> tuple[Path, dict]:
    data_dir = cache / f"ingest-v{FORMAT_VERSION}{'-mix' if mix else ''}-m{machines}-e{entries}{'' if gc else '-nogc'}"
    meta_file = data_dir / "meta.json"
    if not regenerate and meta_file.exists():
        return data_dir, json.loads(meta_file.read_text())
    return data_dir, generate(data_dir, machines, entries, gc, mix)


# ------------------------------------------------------------------------------------------- phases


def fresh_clone(data_dir: Path, run_dir: Path, meta: dict[str, Any]) -> Path:
    """Clone the remote and configure the hive as ``gitive join`` would, without fetching hive refs yet."""
    clone = run_dir / "clone"
    c.git("clone", "--quiet", f"file://{data_dir / 'remote.git'}", clone)
    c.git("config", "hive.team", meta["team_id"], cwd=clone)
    c.git("config", "hive.founder", meta["founder"], cwd=clone)
    c.git("config", "--add", "hive.remote", "origin", cwd=clone)
    c.git("config", "--add", "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*", cwd=clone)
    return clone


FETCH = ["git", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin",
         "+refs/hive/*:refs/hive-remotes/origin/*"]  # exactly what gitive.store.sync.fetch runs


def log_refs(repo: Any) -> list[tuple[str, str, str, str]]:
    """(ref, tip, owner, log) of every fetched log ref."""
    prefix = "refs/hive-remotes/origin/logs/"
    out = []
    for ref in repo.references.iterator():
        if ref.name.startswith(prefix):
            owner, _, log = ref.name[len(prefix):].partition("/")
            out.append((ref.name, str(ref.target), owner, log))
    return sorted(out)


def baseline(clone: Path, team_id: str) -> int:
    """The floor: walk each log's commits with pygit2, read ``entry.json``, parse it, verify the signature.

    Single-threaded; no seq, schema or canonical-form checks, no database. Returns the entries verified.
    """
    import pygit2
    from nacl.signing import VerifyKey

    encoder = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    repo = pygit2.Repository(str(clone))
    keys: dict[str, VerifyKey] = {}
    domains: dict[str, bytes] = {}
    count = 0
    for _, tip, _, _ in log_refs(repo):
        for commit in repo.walk(tip, pygit2.enums.SortMode.NONE):
            env = json.loads(repo[commit.tree[0].id].data)
            body = env["body"]
            kind = body["record"]["type"]
            prefix = domains.get(kind) or domains.setdefault(kind, f"hive/1/{team_id}/{kind}/".encode())
            by = env["by"]
            key = keys.get(by) or keys.setdefault(by, VerifyKey(bytes.fromhex(by)))
            key.verify(prefix + encoder.encode(body).encode(), bytes.fromhex(env["sig"]))  # raises if bad
            count += 1
    return count


def bare_walk(clone: Path) -> int:
    """The floor of reading: walk each log's commits with pygit2 and read ``entry.json`` (no parse, no check)."""
    import pygit2

    repo = pygit2.Repository(str(clone))
    count = 0
    for _, tip, _, _ in log_refs(repo):
        for commit in repo.walk(tip, pygit2.enums.SortMode.NONE):
            repo[commit.tree[0].id].data  # noqa: B018 - reading the blob is the work measured
            count += 1
    return count


def signatures_only(clone: Path, team_id: str) -> tuple[float, float, int]:
    """Wall and CPU seconds to verify every signature alone (messages and keys prepared beforehand, untimed)."""
    import pygit2
    from nacl.signing import VerifyKey

    repo = pygit2.Repository(str(clone))
    work = []
    for _, tip, owner, _ in log_refs(repo):
        key = VerifyKey(bytes.fromhex(owner))
        for commit in repo.walk(tip, pygit2.enums.SortMode.NONE):
            raw = repo[commit.tree[0].id].data
            env = json.loads(raw)
            body = raw[len(b'{"body":'):raw.rindex(b',"by":"')]
            work.append((key, f"hive/1/{team_id}/{env['body']['record']['type']}/".encode() + body,
                         bytes.fromhex(env["sig"])))

    def verify_all() -> int:
        for key, message, sig in work:
            key.verify(message, sig)
        return len(work)

    wall, cpu, count = c.timed_cpu(verify_all)
    return wall, cpu, count


def drop_index(clone: Path) -> Path:
    """Remove the hive's index and the pins a previous ingest wrote; return the index path."""
    import pygit2

    repo = pygit2.Repository(str(clone))
    for ref in list(repo.references.iterator()):
        if ref.name.startswith("refs/hive-pinned/"):
            repo.references.delete(ref.name)
    index = Path(repo.path) / "gitive" / "index.sqlite"
    for suffix in ("", "-wal", "-shm"):
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    return index


def gitive_ingest(clone: Path, meta: dict[str, Any], profiler: cProfile.Profile | None = None
                  ) -> tuple[float, float, Any, dict[str, int]]:
    """Time ``ingest.ingest`` into a fresh index; return wall and CPU seconds, its report and what the
    index holds."""
    import pygit2

    from gitive.index import db, ingest, queries

    index = drop_index(clone)
    repo = pygit2.Repository(str(clone))
    children = _children_cpu()
    with db.connect(index) as conn:
        if profiler:
            profiler.enable()
        seconds, cpu, report = c.timed_cpu(lambda: ingest.ingest(conn, [repo], meta["team_id"],
                                                                  meta["founder"], meta["founder"]))
        if profiler:
            profiler.disable()
        held = queries.counts(conn)
        held["members"] = conn.execute("SELECT COUNT(*) FROM members").fetchone()[0]
        held["problems"] = conn.execute("SELECT COUNT(*) FROM problems").fetchone()[0]
        held["verified"] = conn.execute(f"SELECT COUNT(*) FROM ({queries.VERIFIED})").fetchone()[0]
    held["workers_cpu"] = _children_cpu() - children  # type: ignore[assignment]
    return seconds, cpu, report, held


def _children_cpu() -> float:
    """CPU seconds of this process's finished children (the ingest's worker processes, once joined)."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def gitive_bin() -> str:
    here = Path(sys.executable).parent / "gitive"
    found = str(here) if here.exists() else shutil.which("gitive")
    if not found:
        raise SystemExit("no `gitive` command found: run with the project's venv (.venv/bin/python)")
    return found


def sync_bench(clone: Path, run_dir: Path, data_dir: Path, meta: dict[str, Any], runs: int) -> dict[str, Any]:
    """Median no-op ``gitive sync`` against ``git fetch`` + ``git push`` of the same refspecs."""
    founder = meta["founder"]
    home = run_dir / "founder-home"
    home.mkdir(mode=0o700)
    shutil.copy(data_dir / "founder-home" / "machine.key", home / "machine.key")
    (home / "machine.key").chmod(0o600)
    env = {**os.environ, "GITIVE_HOME": str(home)}
    # The founder's own log refs, as the founder's machine holds them: gitive pushes these (and only these).
    own_prefix = f"refs/hive-remotes/origin/logs/{founder}/"
    own = c.git("for-each-ref", "--format=%(refname) %(objectname)", own_prefix, cwd=clone).split("\n")
    for line in filter(None, own):
        name, tip = line.split(" ")
        c.git("update-ref", f"refs/hive/logs/{founder}/{name[len(own_prefix):]}", tip, cwd=clone)
    gitive = gitive_bin()
    sync = [gitive, "sync"]
    push = ["git", "push", "--quiet", "--porcelain", "origin",
            f"refs/hive/logs/{founder}/*:refs/hive/logs/{founder}/*"]
    for _ in range(2):  # warm-up: the first sync ingests the founder's local refs and the pins
        c.run(sync, cwd=clone, env=env)
    check = json.loads(c.run([*sync, "--json"], cwd=clone, env=env))
    assert check["received"] == 0 and not any(check["fetched"].values()) and check["ok"], check
    # Start-up alone: `gitive --version` (falls back to --help if --version fails in this checkout).
    startup = [gitive, "--version"]
    if subprocess.run(startup, cwd=clone, env=env, capture_output=True).returncode != 0:
        startup = [gitive, "--help"]
    times: dict[str, list[float]] = {"sync": [], "fetch": [], "push": [], "startup": []}
    for _ in range(runs):
        times["sync"].append(c.time_command(sync, clone, env))
        times["fetch"].append(c.time_command(FETCH, clone))
        times["push"].append(c.time_command(push, clone))
        times["startup"].append(c.time_command(startup, clone, env))
    return {k: c.median(v) for k, v in times.items()} | {"startup_cmd": " ".join(startup[1:])}


JUNK_KINDS = ("junk chain on a malformed root, unknown machine", "junk chain on a malformed root, a member's "
              "unwritten log", "self-signed log of a machine the roster does not admit",
              "entries claiming a member, signed by another key")


def _junk_stream(job: tuple[int, str, str, int, int]) -> bytes:
    """``git fast-import`` commands for junk ref number ``index`` (its kind cycles through ``JUNK_KINDS``)."""
    from gitive.core import canonical, signed
    from gitive.core.keys import machine_id
    from gitive.store import logs, refs

    index, team_id, member, length, base_at = job
    kind = index % len(JUNK_KINDS)
    stranger = bench_key(10_000 + index)
    owner = member if kind in (1, 3) else machine_id(stranger)
    ref = refs.log_ref(owner, ("team", "project", "team", "mail")[kind])
    out = io.BytesIO()
    prev = None
    for seq in range(1, length + 1):
        at = base_at + seq * 1000
        if kind in (0, 1):
            data, message = b'{"body":"junk %d"}' % seq, b"junk\n"
        else:
            entry = {"v": 2, "author": owner, "log": ref.rsplit("/", 1)[1], "scope": TEAM_SCOPE, "seq": seq,
                     "at": at, "record": {"type": "team", "name": f"junk {seq}", "founder": owner}}
            if prev:
                entry["prev"] = prev
            env = signed.sign(stranger, team_id, "team", entry)
            env["by"] = owner
            data = canonical.dumps(env)
            prev = logs.entry_hash(data)
            message = (logs.summary(entry) + "\n").encode()
        who = f"{owner[:16]} <{owner}@hive> {at // 1000} +0000"
        out.write(f"commit {ref}\nauthor {who}\ncommitter {who}\ndata {len(message)}\n".encode() + message)
        out.write(f"M 100644 inline entry.json\ndata {len(data)}\n".encode() + data + b"\n")
        if seq == 1 and kind in (0, 1):
            out.write(b"M 100644 inline extra\ndata 1\nx\n")  # the malformed root
        out.write(b"\n")
    return out.getvalue()


def hostile_remote(data_dir: Path, meta: dict[str, Any], share: float) -> tuple[Path, int]:
    """A copy of the remote plus junk refs, ``share`` of its log refs (cached); returns it and the junk count."""
    remote = data_dir / "remote-junk.git"
    refs_now = meta["machines"] + 1  # bulk logs + the founder's roster
    count = max(1, round(refs_now * share / (1 - share)))
    marker = remote / "gitive-junk"
    if marker.exists() and marker.read_text().strip() == str(count):
        return remote, count
    shutil.rmtree(remote, ignore_errors=True)
    with c.step(f"hostile remote: {count} junk refs ({', '.join(JUNK_KINDS)})"):
        shutil.copytree(data_dir / "remote.git", remote)
        members = [bench_machine(i) for i in range(meta["machines"])]
        jobs = [(i, meta["team_id"], members[i % len(members)], 10_000 if i % len(JUNK_KINDS) < 2 else 2_000,
                 1_700_000_000_000) for i in range(count)]
        proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done", "--force"], cwd=remote,
                                stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdin is not None
        for job in jobs:
            proc.stdin.write(_junk_stream(job))
        proc.stdin.write(b"done\n")
        proc.stdin.close()
        if proc.wait() != 0:
            raise RuntimeError(f"git fast-import failed: {proc.stderr.read().decode() if proc.stderr else ''}")
        marker.write_text(f"{count}\n")
    return remote, count


def _founder_clone(remote: Path, dest: Path, data_dir: Path, meta: dict[str, Any]) -> tuple[Path, dict[str, str]]:
    """A clone configured as ``gitive join`` would, holding the founder's key and own refs: (clone, env)."""
    clone = dest / "clone"
    dest.mkdir(parents=True)
    c.git("clone", "--quiet", f"file://{remote}", clone)
    c.git("config", "hive.team", meta["team_id"], cwd=clone)
    c.git("config", "hive.founder", meta["founder"], cwd=clone)
    c.git("config", "--add", "hive.remote", "origin", cwd=clone)
    c.git("config", "--add", "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*", cwd=clone)
    c.git("fetch", "--quiet", "origin", cwd=clone)
    home = dest / "home"
    home.mkdir(mode=0o700)
    shutil.copy(data_dir / "founder-home" / "machine.key", home / "machine.key")
    (home / "machine.key").chmod(0o600)
    founder = meta["founder"]
    own_prefix = f"refs/hive-remotes/origin/logs/{founder}/"
    for line in filter(None, c.git("for-each-ref", "--format=%(refname) %(objectname)", own_prefix,
                                   cwd=clone).split("\n")):
        name, tip = line.split(" ")
        c.git("update-ref", f"refs/hive/logs/{founder}/{name[len(own_prefix):]}", tip, cwd=clone)
    return clone, {**os.environ, "GITIVE_HOME": str(home)}


def hostile_bench(data_dir: Path, run_dir: Path, meta: dict[str, Any], runs: int, share: float) -> dict[str, Any]:
    """`gitive sync` and `gitive team` with nothing new, on a clone whose remote holds junk refs, against the
    same on a clean clone; both after the same warm-up (the first sync walks the junk once)."""
    junk_remote, count = hostile_remote(data_dir, meta, share)
    gitive = gitive_bin()
    clones = {}
    first = {}
    for label, remote in (("clean", data_dir / "remote.git"), ("junk", junk_remote)):
        with c.step(f"hostile variant: {label} clone, first sync (verifies everything once)"):
            clone, env = _founder_clone(remote, run_dir / f"hostile-{label}", data_dir, meta)
            first[label] = c.time_command([gitive, "sync"], clone, env)
            c.run([gitive, "sync"], cwd=clone, env=env)
            clones[label] = (clone, env)
    check = json.loads(c.run([gitive, "sync", "--json"], cwd=clones["junk"][0], env=clones["junk"][1]))
    assert check["received"] == 0 and check["ok"], check
    times: dict[str, list[float]] = {f"{cmd}-{label}": [] for cmd in ("sync", "team") for label in clones}
    for _ in range(runs):
        for label, (clone, env) in clones.items():
            times[f"sync-{label}"].append(c.time_command([gitive, "sync"], clone, env))
            times[f"team-{label}"].append(c.time_command([gitive, "team"], clone, env))
    out: dict[str, Any] = {k: c.median(v) for k, v in times.items()}
    return out | {"junk_refs": count, "first_clean": first["clean"], "first_junk": first["junk"]}


def print_profile(profiler: cProfile.Profile, out: Path, top: int) -> None:
    profiler.dump_stats(str(out))
    for key in ("tottime", "cumulative"):
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).strip_dirs().sort_stats(key).print_stats(top)
        lines = text.getvalue().splitlines()
        start = next(i for i, ln in enumerate(lines) if ln.lstrip().startswith("ncalls"))
        print(f"\nprofile of the ingest, top {top} by {key} (full profile: {out}):")
        print("\n".join(ln for ln in lines[start:] if ln.strip()))


# --------------------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", type=int, default=50, help="machines writing a bulk log (default 50)")
    parser.add_argument("--entries", type=int, default=2000, help="entries per machine (default 2,000)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench",
                        help="where generated data is cached (default: $TMPDIR/gitive-bench)")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the cached data")
    parser.add_argument("--no-gc", action="store_true", help="leave the remote as fast-import wrote it")
    parser.add_argument("--repeat", type=int, default=1, help="baseline and ingest runs; the best counts")
    parser.add_argument("--sync-runs", type=int, default=7, help="no-op sync runs (median; 0 skips it)")
    parser.add_argument("--junk-share", type=float, default=0.10,
                        help="share of junk refs on the hostile remote (default 0.10; 0 skips the variant)")
    parser.add_argument("--data", choices=("both", "invites", "mix"), default="both",
                        help="data sets: invite records only, the realistic mix, or both (default)")
    parser.add_argument("--profile", action="store_true", help="profile one more ingest of each set (cProfile)")
    parser.add_argument("--profile-top", type=int, default=25, help="profile lines printed")
    args = parser.parse_args(argv)
    if args.machines < 1 or args.entries < 1:
        parser.error("--machines and --entries must be at least 1")

    args.cache.mkdir(parents=True, exist_ok=True)
    c.hermetic_git(args.cache / "env")
    sets = [mix for mix in (False, True) if args.data in ("both", "mix" if mix else "invites")]
    measured = [measure(args, mix) for mix in sets]
    first = measured[0]
    clone, run_dir, data_dir, meta = first["clone"], first["run_dir"], first["data_dir"], first["meta"]
    with c.step("signature verification alone"):
        sig_s, sig_cpu, sig_n = signatures_only(clone, meta["team_id"])

    hostile = None
    if args.sync_runs > 0 and args.junk_share > 0:
        hostile = hostile_bench(data_dir, run_dir, meta, args.sync_runs, args.junk_share)
    sync = None
    if args.sync_runs > 0:
        with c.step(f"no-op sync: gitive sync vs git fetch + git push, {args.sync_runs} runs each"):
            sync = sync_bench(clone, run_dir, data_dir, meta, args.sync_runs)

    ok = True
    for m in measured:
        ok &= print_set(m, sig_s, sig_cpu, sig_n if m is first else None)
    if hostile:
        junk = hostile["sync-junk"] / hostile["sync-clean"]
        print(f"hostile:  {hostile['junk_refs']} junk refs ({args.junk_share:.0%} of log refs): no-op `gitive sync` "
              f"{c.ms(hostile['sync-junk'])} with junk vs {c.ms(hostile['sync-clean'])} without, median of "
              f"{args.sync_runs}: ratio {junk:.2f}   [target <= 1.2: {c.target(junk <= 1.2)}]")
        print(f"          `gitive team` {c.ms(hostile['team-junk'])} with junk vs {c.ms(hostile['team-clean'])} "
              f"without: ratio {hostile['team-junk'] / hostile['team-clean']:.2f}; first sync (walks the junk once) "
              f"{hostile['first_junk']:.2f} s vs {hostile['first_clean']:.2f} s")
    if sync:
        plain = sync["fetch"] + sync["push"]
        print(f"sync:     no-op `gitive sync` {c.ms(sync['sync'])} vs git fetch + git push {c.ms(plain)} "
              f"(fetch {c.ms(sync['fetch'])} + push {c.ms(sync['push'])}), median of {args.sync_runs}: "
              f"ratio {sync['sync'] / plain:.2f}   [target <= 2: {c.target(sync['sync'] <= 2 * plain)}]")
        print(f"          `gitive {sync['startup_cmd']}` alone (interpreter + CLI start-up): {c.ms(sync['startup'])}")

    print(f"machine:  {first['load_before']} before the timed runs, {c.load()} after "
          f"(other processes slow every figure; ratios are measured in the same run)")

    if args.profile:
        for m in measured:
            profiler = cProfile.Profile()
            with c.step(f"profiled ingest of the {m['label']} (cProfile)"):
                gitive_ingest(m["clone"], m["meta"], profiler)
            print(f"\n== {m['label']} ==")
            print_profile(profiler, m["run_dir"] / "ingest.prof", args.profile_top)
    return 0 if ok else 1


def measure(args: argparse.Namespace, mix: bool) -> dict[str, Any]:
    """Fetch one data set into a fresh clone, then time the bare walk, the baseline and gitive's ingest."""
    import pygit2

    data_dir, meta = load_or_generate(args.cache, args.machines, args.entries, args.regenerate, not args.no_gc, mix)
    expected = meta["machines"] * meta["entries"] + meta["roster_entries"]
    run_dir = data_dir / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    run_dir.mkdir()
    label = "realistic mix" if mix else "invite records"
    print(f"running ({label})", file=sys.stderr)
    with c.step("fresh clone, hive configured as `gitive join` would"):
        clone = fresh_clone(data_dir, run_dir, meta)
    with c.step("git fetch of the hive refs"):
        fetch_s = c.time_command(FETCH, clone)
    refs_fetched = len(log_refs(pygit2.Repository(str(clone))))
    pack_bytes = c.dir_size(clone / ".git" / "objects")

    load_before = c.load()
    base_times, ingest_times, walk_times = [], [], []
    for _ in range(max(1, args.repeat)):
        with c.step("baseline: bare pygit2 walk + read entry.json"):
            seconds, walk_cpu, walked = c.timed_cpu(lambda: bare_walk(clone))
        assert walked == expected, f"bare walk read {walked} entries, expected {expected}"
        walk_times.append((seconds, walk_cpu))
        with c.step("baseline: pygit2 walk + read + parse + verify"):
            seconds, cpu, walked = c.timed_cpu(lambda: baseline(clone, meta["team_id"]))
        assert walked == expected, f"baseline walked {walked} entries, expected {expected}"
        base_times.append((seconds, cpu))
        with c.step("gitive ingest into a fresh index"):
            seconds, cpu, report, held = gitive_ingest(clone, meta)
        ingest_times.append((seconds, cpu))
    (base_s, base_cpu), (ingest_s, ingest_cpu) = min(base_times), min(ingest_times)
    return {"label": label, "mix": mix, "data_dir": data_dir, "meta": meta, "expected": expected, "run_dir": run_dir,
            "clone": clone, "fetch_s": fetch_s, "refs_fetched": refs_fetched, "pack_bytes": pack_bytes,
            "walk_s": min(walk_times)[0], "walk_cpu": min(walk_times)[1], "base_s": base_s, "base_cpu": base_cpu, "ingest_s": ingest_s,
            "ingest_cpu": ingest_cpu, "report": report, "held": held, "load_before": load_before,
            "runs": len(ingest_times)}


def print_set(m: dict[str, Any], sig_s: float, sig_cpu: float, sig_n: int | None) -> bool:
    """Print one data set's figures; return whether the index holds what it should."""
    meta, expected, held = m["meta"], m["expected"], m["held"]
    walk_s, base_s, base_cpu, ingest_s, ingest_cpu = m["walk_s"], m["base_s"], m["base_cpu"], m["ingest_s"], \
        m["ingest_cpu"]
    rate = expected / ingest_s
    ratio = ingest_s / base_s
    floor = walk_s / ingest_s
    ok_counts = held["entries"] == expected and held["members"] == meta["machines"] + 1 and not held["problems"]
    print(f"\ngitive ingest benchmark, {m['label']}: {meta['machines']} machines x {meta['entries']:,} entries "
          f"+ {meta['roster_entries']} roster entries = {expected:,} entries; {os.cpu_count()} cores; "
          f"best of {m['runs']}")
    print(f"data:     remote {c.mib(meta['objects_bytes'])} of objects (generated in {meta['generate_seconds']} s, "
          f"cached in {m['data_dir']})")
    print(f"fetch:    {m['fetch_s']:.2f} s  git fetch of {m['refs_fetched']} log refs into a fresh clone "
          f"(file:// remote, {c.mib(m['pack_bytes'])} received)")
    print(f"walk:     {walk_s:.2f} s  = {expected / walk_s:,.0f} entries/s  bare pygit2 walk + read entry.json "
          f"(no parse, no check: the floor of reading)")
    print(f"baseline: {base_s:.2f} s  = {expected / base_s:,.0f} entries/s  ({base_cpu:.2f} s CPU; one signature "
          f"per entry: pygit2 walk + read entry.json + json parse + canonical body + ed25519 verify)")
    if sig_n is not None:
        print(f"          of which ed25519 verification alone: {sig_s:.2f} s = {sig_n / sig_s:,.0f} verifies/s "
              f"({sig_cpu:.2f} s CPU)")
    print(f"ingest:   {ingest_s:.2f} s  = {rate:,.0f} entries/s verified and indexed  ({ingest_cpu:.2f} s CPU)   "
          f"[target >= 30,000/s: {c.target(rate >= 30_000)}]")
    print(f"          indexed {held['entries']:,} entries (expected {expected:,}), {held['verified']:,} counted "
          f"as verified members' entries, {held['logs']} logs, {held['members']} members, "
          f"{held['problems']} problems, {m['report'].refs_read} refs read   [{'ok' if ok_counts else 'WRONG'}]")
    print(f"ratio:    ingest rate / bare walk rate = {floor:.2f}x   [target >= 0.7: {c.target(floor >= 0.7)}]")
    all_cpu = ingest_cpu + held["workers_cpu"]
    best = max(ingest_cpu, all_cpu / (os.cpu_count() or 1))
    print(f"cpu:      ingest {all_cpu:.2f} s CPU in all ({ingest_cpu:.2f} s this process + {held['workers_cpu']:.2f} s "
          f"workers) vs bare walk {m['walk_cpu']:.2f} s: walk CPU / ingest CPU = {m['walk_cpu'] / all_cpu:.2f}; "
          f"on an idle machine the rate ratio would be about {m['walk_cpu'] / best:.2f}x (the busiest process, or "
          f"all CPU over {os.cpu_count()} cores; load does not inflate CPU time)   [informational]")
    print(f"          ingest rate / one-signature-per-entry baseline = {base_s / ingest_s:.2f}x; "
          f"ingest / baseline time = {ratio:.2f} (CPU: {ingest_cpu / base_cpu:.2f})   "
          f"[target <= 1.5: {c.target(ratio <= 1.5)}]")
    return ok_counts


if __name__ == "__main__":
    sys.exit(main())
