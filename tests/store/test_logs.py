"""Signed logs as commit chains: numbering, deterministic commits, no work tree, races, crashes, bad input."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitive.constants import ENTRY_FILE, MAX_ENTRY_BYTES, STALE_LOCK_SECONDS
from gitive.core import canonical, signed
from gitive.errors import InvalidRecord, RaceLost
from gitive.store import logs, refs, verify
from testing import fixtures
from testing.builders import TEAM_ID, TEAM_SCOPE, entry_body, entry_commit, machine, member_record
from testing.fixtures import run_git

ME = machine("writer")
REF = refs.log_ref(ME.id, "team")
_BLOB = pygit2.enums.FileMode.BLOB
_TREE = pygit2.enums.FileMode.TREE


def team_record(name: str) -> dict[str, Any]:
    return {"type": "team", "name": name, "founder": ME.id}


def append(repo: pygit2.Repository, name: str = "acme", *, at: int | None = 1_700_000_000_000) -> logs.Entry:
    return logs.append(repo, ME.key, TEAM_ID, "team", TEAM_SCOPE, team_record(name), at=at)


def seqs(repo: pygit2.Repository, ref: str = REF) -> list[int]:
    return [e.seq for e in logs.entries(repo, ref)]


def commit_of(repo: pygit2.Repository, files: dict[str, bytes | pygit2.Oid], parents: tuple[str, ...] = ()) -> str:
    """A commit holding ``files`` (bytes become blobs, an ``Oid`` is inserted as a subtree); one entry file with
    at most one parent is wrapped in canonical commit form, so what fails is the entry, not its wrapper."""
    if list(files) == [ENTRY_FILE] and isinstance(files[ENTRY_FILE], bytes) and len(parents) < 2:
        return entry_commit(repo, files[ENTRY_FILE], parents[0] if parents else None)
    builder = repo.TreeBuilder()
    for name, data in files.items():
        if isinstance(data, pygit2.Oid):
            builder.insert(name, data, _TREE)
        else:
            builder.insert(name, repo.create_blob(data), _BLOB)
    who = pygit2.Signature("t", "t@hive", 0, 0)
    return str(repo.create_commit(None, who, who, "m\n", builder.write(), [pygit2.Oid(hex=p) for p in parents]))


def signed_envelope(**over: Any) -> dict[str, Any]:
    body = entry_body(ME, team_record("acme"), log="team", **over)
    return signed.sign(ME.key, TEAM_ID, "team", body)


# --- appending ---------------------------------------------------------------------------------------------

def test_append_numbers_entries_one_two_three(bare_repo: pygit2.Repository) -> None:
    made = [append(bare_repo, f"n{i}") for i in range(3)]
    assert [e.seq for e in made] == [1, 2, 3]
    assert made[0].parent is None
    assert [e.parent for e in made[1:]] == [made[0].commit, made[1].commit]
    assert refs.tip(bare_repo, REF) == made[-1].commit
    assert [e.commit for e in logs.entries(bare_repo, REF)] == [e.commit for e in made]
    assert [e.body["record"]["name"] for e in logs.entries(bare_repo, REF)] == ["n0", "n1", "n2"]


def test_append_stores_one_canonical_signed_entry_per_commit(bare_repo: pygit2.Repository) -> None:
    entry = append(bare_repo, at=1_700_000_123_456)
    commit = bare_repo[entry.commit]
    assert [item.name for item in commit.tree] == [ENTRY_FILE]
    data = bare_repo[commit.tree[ENTRY_FILE].id].data
    assert data == canonical.dumps(entry.signed) == entry.raw
    assert entry.body == {"v": 2, "author": ME.id, "log": "team", "scope": {"team": True}, "seq": 1,
                          "at": 1_700_000_123_456, "record": team_record("acme")}
    assert entry.body_bytes == canonical.dumps(entry.body)
    assert signed.signature_ok(TEAM_ID, "team", entry.signed)
    assert commit.author.email == commit.committer.email == f"{ME.id}@hive"
    assert commit.author.time == commit.committer.time == 1_700_000_123
    assert commit.author.name == ME.id[:16]
    assert commit.message == "team #1: team\n"


def test_summary_is_one_readable_line() -> None:
    member = entry_body(ME, member_record(ME, "alice", 5, name="laptop"))
    assert logs.summary(member) == f"roster #1: member alice/laptop {ME.id[:12]} active"
    gone = entry_body(ME, member_record(ME, "alice", 5, active=False), seq=4)
    assert logs.summary(gone).endswith("inactive") and "#4" in logs.summary(gone)
    invite = entry_body(ME, {"type": "invite", "id": "ab" * 32}, seq=2)
    assert logs.summary(invite) == f"roster #2: invite {'ab' * 6}"


def test_git_log_reads_the_chain(git_repo: Path) -> None:
    repo = pygit2.Repository(str(git_repo))
    for i in range(3):
        append(repo, f"n{i}")
    out = run_git(["log", "--format=%s", REF], cwd=git_repo).splitlines()
    assert out == ["team #3: team", "team #2: team", "team #1: team"]
    run_git(["fsck", "--strict", "--no-dangling"], cwd=git_repo)


def test_commit_id_is_deterministic_across_repositories(tmp_path: Path) -> None:
    one = pygit2.Repository(str(fixtures.init_bare(tmp_path / "one.git")))
    two = pygit2.Repository(str(fixtures.init_bare(tmp_path / "two.git")))
    a = [append(one, f"n{i}", at=1_700_000_000_000 + i) for i in range(3)]
    b = [append(two, f"n{i}", at=1_700_000_000_000 + i) for i in range(3)]
    assert [e.commit for e in a] == [e.commit for e in b]


def test_commit_id_is_deterministic_with_a_fixed_clock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITIVE_NOW_MS", "1700000000999")
    one = pygit2.Repository(str(fixtures.init_bare(tmp_path / "one.git")))
    two = pygit2.Repository(str(fixtures.init_bare(tmp_path / "two.git")))
    first, second = append(one, at=None), append(two, at=None)
    assert first.commit == second.commit
    assert first.body["at"] == 1_700_000_000_999


def test_same_entry_on_another_parent_is_another_commit(tmp_path: Path) -> None:
    one = pygit2.Repository(str(fixtures.init_bare(tmp_path / "one.git")))
    two = pygit2.Repository(str(fixtures.init_bare(tmp_path / "two.git")))
    append(one, "x")
    append(two, "y")
    assert append(one, "z").commit != append(two, "z").commit


def test_append_never_touches_the_work_tree_or_index(git_repo: Path) -> None:
    (git_repo / "README").write_text("changed but not staged\n")
    (git_repo / "staged.txt").write_text("staged\n")
    run_git(["add", "staged.txt"], cwd=git_repo)
    (git_repo / "untracked.txt").write_text("untracked\n")
    status = run_git(["status", "--porcelain=v1", "--untracked-files=all"], cwd=git_repo)
    index = (git_repo / ".git" / "index").read_bytes()
    head = run_git(["rev-parse", "HEAD"], cwd=git_repo)
    assert status.splitlines() == [" M README", "A  staged.txt", "?? untracked.txt"]

    repo = pygit2.Repository(str(git_repo))
    for i in range(3):
        append(repo, f"n{i}")

    assert run_git(["status", "--porcelain=v1", "--untracked-files=all"], cwd=git_repo) == status
    assert (git_repo / ".git" / "index").read_bytes() == index
    assert run_git(["rev-parse", "HEAD"], cwd=git_repo) == head
    assert (git_repo / "README").read_text() == "changed but not staged\n"
    assert not (git_repo / ENTRY_FILE).exists()
    assert run_git(["diff", "--cached", "--name-only"], cwd=git_repo).split() == ["staged.txt"]


def test_append_refuses_an_invalid_record_and_writes_nothing(bare_repo: pygit2.Repository) -> None:
    with pytest.raises(InvalidRecord, match="unknown fields"):
        logs.append(bare_repo, ME.key, TEAM_ID, "team", TEAM_SCOPE, {**team_record("x"), "extra": 1})
    with pytest.raises(InvalidRecord, match="bad scope"):
        logs.append(bare_repo, ME.key, TEAM_ID, "team", {"team": False}, team_record("x"))
    with pytest.raises(InvalidRecord, match="unknown log"):
        logs.append(bare_repo, ME.key, TEAM_ID, "gossip", TEAM_SCOPE, team_record("x"))
    assert refs.tips(bare_repo, "refs/") == {}


def test_append_refuses_an_entry_over_the_size_cap(bare_repo: pygit2.Repository) -> None:
    append(bare_repo, "ok")
    with pytest.raises(InvalidRecord, match="cap"):
        append(bare_repo, "x" * MAX_ENTRY_BYTES)
    assert seqs(bare_repo) == [1]


def test_entries_of_a_missing_ref_is_empty(bare_repo: pygit2.Repository) -> None:
    assert logs.entries(bare_repo, REF) == []


def test_walk_stops_before_the_given_commit(bare_repo: pygit2.Repository) -> None:
    made = [append(bare_repo, f"n{i}") for i in range(4)]
    walked = list(logs.walk(bare_repo, made[-1].commit, stop=made[1].commit))
    assert [e.seq for e in walked] == [4, 3]


# --- several writers, and writers that die ----------------------------------------------------------------

_APPENDER = r"""
import sys, time
from pathlib import Path
import pygit2
from nacl.signing import SigningKey
from gitive.store import logs
repo_path, seed, team, prefix, count, go = sys.argv[1:7]
key = SigningKey(bytes.fromhex(seed))
repo = pygit2.Repository(repo_path)
while go and not Path(go).exists():
    time.sleep(0.001)
i = 0
while count == "forever" or i < int(count):
    record = {"type": "team", "name": f"{prefix}-{i}", "founder": key.verify_key.encode().hex()}
    logs.append(repo, key, team, "team", {"team": True}, record)
    i += 1
"""


def _start_appender(repo: pygit2.Repository, prefix: str, count: str, go: Path | str = "") -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", _APPENDER, repo.path, ME.key.encode().hex(), TEAM_ID, prefix, count, str(go)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )


def _assert_honest_chain(repo: pygit2.Repository, count: int) -> list[logs.Entry]:
    chain = logs.entries(repo, REF)
    assert [e.seq for e in chain] == list(range(1, count + 1))
    result, base = verify.verify_chain(repo, TEAM_ID, REF, ME.id, "team", refs.tip(repo, REF), lambda _: None)
    assert result.problem is None and base is None
    assert len(result.entries) == count
    return chain


def test_concurrent_appends_from_several_processes_leave_a_gap_free_chain(
    bare_repo: pygit2.Repository, tmp_path: Path
) -> None:
    # The log exists before the race starts: this is the compare-and-swap of a moving tip. (Creating the ref
    # concurrently is not covered here: see the report on refs.set_if_equals with old=None.)
    append(bare_repo, "seed")
    go = tmp_path / "go"
    writers = [_start_appender(bare_repo, f"w{w}", "50", go) for w in range(4)]
    time.sleep(0.3)  # every writer imported and waiting: they start together and race
    go.touch()
    for proc in writers:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    chain = _assert_honest_chain(bare_repo, 201)
    names = sorted(e.body["record"]["name"] for e in chain[1:])
    assert names == sorted(f"w{w}-{i}" for w in range(4) for i in range(50))  # none lost, none doubled
    assert len({e.commit for e in chain}) == 201


def test_concurrent_first_appends_never_both_take_seq_one(bare_repo: pygit2.Repository, tmp_path: Path) -> None:
    # Creating the ref is a compare-and-swap too: the ref is locked before "does it exist" is answered.
    for trial in range(3):
        go = tmp_path / f"go{trial}"
        name = f"{REF}"
        refs.delete(bare_repo, name)
        writers = [_start_appender(bare_repo, f"t{trial}w{w}", "5", go) for w in range(4)]
        time.sleep(0.3)
        go.touch()
        for proc in writers:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err.decode()
        _assert_honest_chain(bare_repo, 20)


def test_writer_killed_mid_append_leaves_a_valid_chain(bare_repo: pygit2.Repository) -> None:
    rng = random.Random(20240101)
    lock = Path(bare_repo.path) / f"{REF}.lock"
    for round_ in range(10):
        before = refs.tip(bare_repo, REF)
        proc = _start_appender(bare_repo, f"k{round_}", "forever")
        deadline = time.monotonic() + 30
        while refs.tip(bare_repo, REF) == before and time.monotonic() < deadline:  # wait until it is writing
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        if proc.stderr:
            proc.stderr.close()
        if lock.exists():  # killed while holding the ref lock: make it look abandoned long ago
            old = time.time() - STALE_LOCK_SECONDS - 5
            os.utime(lock, (old, old))
        chain = logs.entries(bare_repo, REF)
        assert [e.seq for e in chain] == list(range(1, len(chain) + 1))
    count = len(logs.entries(bare_repo, REF))
    assert count >= 10
    _assert_honest_chain(bare_repo, count)
    assert append(bare_repo, "after").seq == count + 1
    assert not lock.exists()
    _assert_honest_chain(bare_repo, count + 1)


def _leave_lock(repo: pygit2.Repository, ref: str, age: float) -> Path:
    lock = Path(repo.path) / f"{ref}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("0" * 40 + "\n")
    stamp = time.time() - age
    os.utime(lock, (stamp, stamp))
    return lock


def test_append_clears_a_stale_lock_left_by_a_dead_writer(bare_repo: pygit2.Repository) -> None:
    append(bare_repo, "one")
    lock = _leave_lock(bare_repo, REF, STALE_LOCK_SECONDS + 5)
    assert append(bare_repo, "two").seq == 2
    assert not lock.exists()
    assert seqs(bare_repo) == [1, 2]


def test_first_append_clears_a_stale_lock_on_a_new_ref(bare_repo: pygit2.Repository) -> None:
    lock = _leave_lock(bare_repo, REF, STALE_LOCK_SECONDS + 5)
    assert append(bare_repo, "one").seq == 1
    assert not lock.exists()


def test_a_fresh_lock_is_respected_and_the_append_gives_up(
    bare_repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = append(bare_repo, "one")
    lock = _leave_lock(bare_repo, REF, 1)  # a live writer holds it
    monkeypatch.setattr(logs, "CAS_RETRIES", 3)
    monkeypatch.setattr(logs.time, "sleep", lambda _s: None)
    with pytest.raises(RaceLost, match="try again"):
        append(bare_repo, "two")
    assert lock.exists()
    assert refs.tip(bare_repo, REF) == first.commit
    old = time.time() - STALE_LOCK_SECONDS - 1
    os.utime(lock, (old, old))
    assert append(bare_repo, "two").seq == 2


def test_set_if_equals_is_a_compare_and_swap(bare_repo: pygit2.Repository) -> None:
    a, b = append(bare_repo, "a"), append(bare_repo, "b")
    assert not refs.set_if_equals(bare_repo, REF, a.commit, a.commit, "stale tip")
    assert not refs.set_if_equals(bare_repo, REF, None, a.commit, "ref exists")
    assert refs.tip(bare_repo, REF) == b.commit
    assert refs.set_if_equals(bare_repo, REF, b.commit, a.commit, "rewind")
    assert refs.tip(bare_repo, REF) == a.commit
    other = refs.log_ref(ME.id, "mail")
    assert not refs.set_if_equals(bare_repo, other, a.commit, b.commit, "missing ref")
    assert refs.set_if_equals(bare_repo, other, None, b.commit, "create")


# --- reading malformed commits ---------------------------------------------------------------------------

def _valid_data(**over: Any) -> bytes:
    return canonical.dumps(signed_envelope(**over))


def test_read_entry_accepts_a_well_formed_commit(bare_repo: pygit2.Repository) -> None:
    data = _valid_data()
    oid = commit_of(bare_repo, {ENTRY_FILE: data})
    entry = logs.read_entry(bare_repo, oid)
    assert entry.commit == oid and entry.parent is None and entry.raw == data
    assert entry.seq == 1 and entry.kind == "team"


def test_claimed_seq_reads_the_commit_message_only(bare_repo: pygit2.Repository) -> None:
    """What ingest estimates its work by: the claim, not a checked entry (a forged message claims anything)."""
    first = logs.append(bare_repo, ME.key, TEAM_ID, "team", TEAM_SCOPE, team_record("x"))
    second = logs.append(bare_repo, ME.key, TEAM_ID, "team", TEAM_SCOPE, team_record("y"))
    assert (logs.claimed_seq(bare_repo, first.commit), logs.claimed_seq(bare_repo, second.commit)) == (1, 2)
    tree = bare_repo.TreeBuilder().write()
    who = pygit2.Signature("x", "x@hive", 1, 0)
    liar = str(bare_repo.create_commit(None, who, who, "team #900: team", tree, []))
    plain = str(bare_repo.create_commit(None, who, who, "no claim here", tree, []))
    assert logs.claimed_seq(bare_repo, liar) == 900
    assert logs.claimed_seq(bare_repo, plain) is None
    assert logs.claimed_seq(bare_repo, str(tree)) is None and logs.claimed_seq(bare_repo, "0" * 40) is None


def _malformed_cases(repo: pygit2.Repository) -> dict[str, str]:
    good = _valid_data()
    env = signed_envelope()
    sub = repo.TreeBuilder()
    sub.insert("x", repo.create_blob(b"{}"), _BLOB)
    subtree = sub.write()
    parent = commit_of(repo, {ENTRY_FILE: good})
    return {
        "two-files": commit_of(repo, {ENTRY_FILE: good, "extra.txt": b"hi"}),
        "wrong-name": commit_of(repo, {"entry.txt": good}),
        "empty-tree": commit_of(repo, {}),
        "entry-is-a-tree": commit_of(repo, {ENTRY_FILE: subtree}),
        "oversized": commit_of(repo, {ENTRY_FILE: good[:-1] + b" " * MAX_ENTRY_BYTES + b"}"}),
        "not-json": commit_of(repo, {ENTRY_FILE: b"this is not json"}),
        "not-utf8": commit_of(repo, {ENTRY_FILE: b"\xff\xfe\x00garbage"}),
        "float": commit_of(repo, {ENTRY_FILE: good.replace(b'"seq":1', b'"seq":1.0')}),
        "nan": commit_of(repo, {ENTRY_FILE: good.replace(b'"seq":1', b'"seq":NaN')}),
        "not-canonical": commit_of(repo, {ENTRY_FILE: json.dumps(env, indent=1).encode()}),
        "unsorted": commit_of(repo, {ENTRY_FILE: json.dumps(
            {"sig": env["sig"], "by": env["by"], "body": env["body"]}, separators=(",", ":")).encode()}),
        "duplicate-key": commit_of(repo, {ENTRY_FILE: good[:-1] + b',"sig":"00"}'}),
        "extra-envelope-key": commit_of(repo, {ENTRY_FILE: canonical.dumps({**env, "note": "x"})}),
        "missing-sig": commit_of(repo, {ENTRY_FILE: canonical.dumps({"body": env["body"], "by": env["by"]})}),
        "envelope-is-list": commit_of(repo, {ENTRY_FILE: canonical.dumps([env])}),
        "bad-body": commit_of(repo, {ENTRY_FILE: canonical.dumps({**env, "body": {**env["body"], "seq": 0}})}),
        "bad-record": commit_of(repo, {ENTRY_FILE: canonical.dumps(
            {**env, "body": {**env["body"], "record": {"type": "gossip"}}})}),
        "merge-commit": commit_of(repo, {ENTRY_FILE: _valid_data(seq=2)}, (parent, parent)),
        "a-blob": str(repo.create_blob(good)),
        "a-tree": str(subtree),
        "missing-object": "0" * 40,
        "not-an-id": "xyz",
    }


def test_read_entry_refuses_malformed_commits(bare_repo: pygit2.Repository) -> None:
    cases = _malformed_cases(bare_repo)
    accepted = []
    for name, oid in cases.items():
        try:
            logs.read_entry(bare_repo, oid)
        except InvalidRecord:
            continue
        accepted.append(name)
    assert accepted == []


def test_read_entry_reports_why(bare_repo: pygit2.Repository) -> None:
    cases = _malformed_cases(bare_repo)
    for name, pattern in [("two-files", "exactly one entry.json"), ("oversized", "cap"),
                          ("merge-commit", "more than one parent"), ("a-blob", "not a commit"),
                          ("missing-object", "missing"), ("extra-envelope-key", "signed envelope"),
                          ("not-canonical", "canonical"), ("float", "float")]:
        with pytest.raises(InvalidRecord, match=pattern):
            logs.read_entry(bare_repo, cases[name])


def test_walk_raises_at_a_malformed_commit_below_good_ones(bare_repo: pygit2.Repository) -> None:
    bad = commit_of(bare_repo, {ENTRY_FILE: b"junk"})
    top = commit_of(bare_repo, {ENTRY_FILE: _valid_data(seq=2)}, (bad,))
    walked = []
    with pytest.raises(InvalidRecord):
        walked.extend(logs.walk(bare_repo, top))
    assert [e.commit for e in walked] == [top]


# --- fuzzing: read_entry only ever raises InvalidRecord -----------------------------------------------------

@pytest.fixture(scope="module")
def fuzz_repo(tmp_path_factory: pytest.TempPathFactory) -> pygit2.Repository:
    return pygit2.init_repository(str(tmp_path_factory.mktemp("fuzz") / "fuzz.git"), bare=True)


def _read(repo: pygit2.Repository, data: bytes) -> logs.Entry | None:
    oid = commit_of(repo, {ENTRY_FILE: data})
    with contextlib.suppress(InvalidRecord):  # any other exception fails the test
        return logs.read_entry(repo, oid)
    return None


def _canonical_text(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@given(st.binary(max_size=300))
def test_read_entry_on_random_bytes_raises_only_invalid_record(fuzz_repo: pygit2.Repository, data: bytes) -> None:
    _read(fuzz_repo, data)


@given(json_values)
def test_read_entry_on_random_json_raises_only_invalid_record(fuzz_repo: pygit2.Repository, value: Any) -> None:
    _read(fuzz_repo, _canonical_text(value))
    _read(fuzz_repo, json.dumps(value).encode())


def _maybe(valid: Any, other: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.just(valid) | other


@given(st.data())
def test_read_entry_on_mutated_envelopes_raises_only_invalid_record(
    fuzz_repo: pygit2.Repository, data: st.DataObject
) -> None:
    env = signed_envelope()
    body = dict(env["body"])
    for name in list(body):
        body[name] = data.draw(_maybe(body[name], json_values), label=name)
    record = dict(body["record"]) if isinstance(body["record"], dict) else {}
    for name in ("type", "name", "founder"):
        record[name] = data.draw(_maybe(record.get(name), json_values), label=f"record.{name}")
    body["record"] = record
    outer = {"body": body, "by": data.draw(_maybe(env["by"], json_values)),
             "sig": data.draw(_maybe(env["sig"], json_values))}
    if data.draw(st.booleans(), label="drop a key"):
        outer.pop(data.draw(st.sampled_from(sorted(outer))))
    entry = _read(fuzz_repo, _canonical_text(outer))
    if entry is not None:
        assert entry.body == body
