"""Forged body and presence snapshots against the server guard and an honest reader.

The attacker can push anything: copies of every snapshot the owner ever signed (older versions), the
owner's signatures for another team or another kind of snapshot, their own key, and arbitrary trailers,
trees and parents. None of it may replace the owner's newest snapshot (docs/verification.md §5).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.store import bodies, guard, presence, refs, serverhook, snapshots
from testing.bodies import flat_tree, rewrap, v1_snapshot, v1_store
from testing.builders import OTHER_TEAM_ID, TEAM_ID, machine
from testing.fixtures import init_bare, init_repo, run_git

OWNER = machine("owner")
STRANGER = machine("stranger")
_BLOB = pygit2.enums.FileMode.BLOB


# ---- real pushes to a guarded server ---------------------------------------------------------------------

@pytest.fixture
def server(tmp_path: Path) -> Path:
    path = init_bare(tmp_path / "server.git")
    serverhook.install(path, TEAM_ID)
    return path


@pytest.fixture
def client(tmp_path: Path) -> pygit2.Repository:
    return pygit2.Repository(str(init_repo(tmp_path / "client")))


def _push(client: pygit2.Repository, server: Path, commit: str, ref: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", str(server), f"+{commit}:{ref}"], cwd=client.workdir,
                          capture_output=True, text=True, check=False)


def _server_tip(server: Path, ref: str) -> str:
    return run_git(["rev-parse", "--verify", "--quiet", ref], cwd=server, check=False).strip()


def _honest(client: pygit2.Repository, server: Path, *datas: bytes) -> list[str]:
    """The owner writes one body per ``datas`` and pushes each version; return the commits in order."""
    name = refs.bodies_ref(OWNER.id)
    out = []
    for data in datas:
        bodies.put(client, OWNER.key, TEAM_ID, bodies_hash(data), data)
        out.append(refs.tip(client, name))
        result = _push(client, server, out[-1], name)
        assert result.returncode == 0, result.stderr
    return out


def bodies_hash(data: bytes) -> str:
    from gitive.core.ids import blake3_hex

    return blake3_hex(data)


def test_a_replayed_older_snapshot_is_refused_by_the_guard(client: pygit2.Repository, server: Path) -> None:
    first, second = _honest(client, server, b"one", b"two")
    name = refs.bodies_ref(OWNER.id)
    result = _push(client, server, first, name)
    assert result.returncode != 0 and "replayed or stale bodies snapshot" in result.stderr
    assert "version 1 is not above the accepted version 2" in result.stderr
    assert _server_tip(server, name) == second


def test_an_unsigned_or_strangers_snapshot_is_refused(client: pygit2.Repository, server: Path) -> None:
    (current,) = _honest(client, server, b"one")
    name = refs.bodies_ref(OWNER.id)
    unsigned = rewrap(client, current, "bodies\n\nHive-Version: 9\nHive-Layout: fanout-2\n")
    strangers = snapshots.write(client, STRANGER.key, TEAM_ID, "bodies", client[current].tree_id, "x", 9)
    for forged, why in ((unsigned, "unsigned"), (strangers, f"not a bodies snapshot signed by {OWNER.id[:12]}")):
        result = _push(client, server, forged, name)
        assert result.returncode != 0 and why in result.stderr, result.stderr
    assert _server_tip(server, name) == current


def test_a_malformed_tree_is_refused_even_when_signed(client: pygit2.Repository, server: Path) -> None:
    _honest(client, server, b"one")
    builder = client.TreeBuilder()
    builder.insert("README", client.create_blob(b"not a body"), _BLOB)
    signed = snapshots.write(client, OWNER.key, TEAM_ID, "bodies", builder.write(), "x", 5)
    result = _push(client, server, signed, refs.bodies_ref(OWNER.id))
    assert result.returncode != 0 and "malformed body store" in result.stderr


def test_v1_stores_still_push_until_a_versioned_one_is_accepted(client: pygit2.Repository, server: Path) -> None:
    name = refs.bodies_ref(OWNER.id)
    old_client = v1_store(client, OWNER.key, TEAM_ID, {bodies_hash(b"v1"): b"v1"})
    assert _push(client, server, old_client, name).returncode == 0  # an old client's first push
    again = v1_store(client, OWNER.key, TEAM_ID, {bodies_hash(b"v1"): b"v1", bodies_hash(b"b"): b"b"})
    assert _push(client, server, again, name).returncode == 0  # and its next one
    bodies.put(client, OWNER.key, TEAM_ID, bodies_hash(b"new"), b"new")  # an upgraded client migrates
    assert _push(client, server, refs.tip(client, name), name).returncode == 0
    result = _push(client, server, again, name)
    assert result.returncode != 0 and "unversioned (v1) snapshot after version 1" in result.stderr


def test_presence_replays_are_refused_too(client: pygit2.Repository, server: Path) -> None:
    name = refs.presence_ref(OWNER.id)
    tips = []
    for doing in (b'{"sessions":[1]}', b'{"sessions":[]}'):
        assert presence.publish(client, OWNER.key, TEAM_ID, doing)
        tips.append(refs.tip(client, name))
        assert _push(client, server, tips[-1], name).returncode == 0
    result = _push(client, server, tips[0], name)
    assert result.returncode != 0 and "replayed or stale presence snapshot" in result.stderr
    assert _server_tip(server, name) == tips[1]


# ---- property: thousands of forged variants, none accepted ---------------------------------------------------

class Toolbox:
    """Everything the attacker holds: the owner's signed history, signatures for other contexts, a key."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self.history: list[snapshots.Snapshot] = []
        for i in range(4):
            bodies.put(repo, OWNER.key, TEAM_ID, bodies_hash(f"body {i}".encode()), f"body {i}".encode())
            tip = refs.tip(repo, refs.bodies_ref(OWNER.id))
            self.history.append(snapshots.check(repo, TEAM_ID, "bodies", OWNER.id, tip))
        self.current = self.history[-1]
        tree = self.current.tree
        # the owner's genuine signatures over higher versions, but for another team and another kind
        self.elsewhere = [
            snapshots.write(repo, OWNER.key, OTHER_TEAM_ID, "bodies", tree, "other team", 99),
            snapshots.write(repo, OWNER.key, TEAM_ID, "presence", tree, "presence", 99),
            v1_snapshot(repo, OWNER.key, TEAM_ID, "bodies", tree),  # a v1 signature over the newest tree
            v1_snapshot(repo, OWNER.key, TEAM_ID, "bodies", flat_tree(repo, {bodies_hash(b"x"): b"x"})),
        ]
        junk = repo.TreeBuilder()
        junk.insert("zz", repo.create_blob(b"junk"), _BLOB)
        self.trees = [s.tree for s in self.history] + [str(junk.write()), str(repo.TreeBuilder().write())]


KEEP = "keep"  # take the field from the genuine snapshot the forgery starts from


def _variant() -> st.SearchStrategy[dict[str, Any]]:
    """A forgery: a genuine signed snapshot of the owner's (any version, team or kind) with any of its parts
    kept or replaced. Keeping everything but the commit's other bytes is a replay."""
    return st.fixed_dictionaries({
        "base": st.integers(0, 7),
        "signer": st.sampled_from([KEEP, KEEP, KEEP, "stranger", "random", "none"]),
        "version": st.sampled_from([KEEP, KEEP]) | st.integers(-2, 12)
        | st.sampled_from([None, "01", "1e2", "", " 5", "99999999999999999"]),
        "layout": st.sampled_from([KEEP, KEEP, "fanout-2", None, "flat", "fanout-3"]),
        "tree": st.sampled_from([KEEP, KEEP]) | st.integers(0, 5),
        "parent": st.booleans(),
        "extra": st.sampled_from(["", "", "Hive-Sig: " + "0" * 128 + "\n", "Hive-Version: 100\n",
                                  "Hive-Note: x\n"]),
        "title": st.text("abc \n", max_size=8),
    })


def _trailers(message: str) -> dict[str, str]:
    return {k: v for k, _, v in (ln.partition(": ") for ln in message.splitlines() if ln.startswith("Hive-"))}


def _forge(box: Toolbox, v: dict[str, Any]) -> str:
    repo = box.repo
    base = repo[([s.commit for s in box.history] + box.elsewhere)[v["base"]]]
    genuine = _trailers(base.message)
    tree = str(base.tree_id) if v["tree"] == KEEP else box.trees[v["tree"]]
    version = genuine.get("Hive-Version") if v["version"] == KEEP else v["version"]
    layout = genuine.get("Hive-Layout") if v["layout"] == KEEP else v["layout"]
    lines = [] if version is None else [f"Hive-Version: {version}"]
    if layout is not None:
        lines.append(f"Hive-Layout: {layout}")
    if v["signer"] == KEEP:
        lines.append(snapshots.TRAILER + genuine["Hive-Sig"])
    elif v["signer"] == "stranger":
        n = int(version) if str(version).isdigit() and int(str(version)) > 0 else 0
        signed = f"{tree}/{OWNER.id}" if n == 0 else f"{tree}/{OWNER.id}/{n}"
        from gitive.core.signed import domain

        lines.append(snapshots.TRAILER + STRANGER.key.sign(domain(TEAM_ID, "bodies") + signed.encode())
                     .signature.hex())
    elif v["signer"] == "random":
        lines.append(snapshots.TRAILER + f"{v['base']:02x}" * 64)
    message = f"{v['title'] or 'bodies'}\n\n" + "".join(f"{ln}\n" for ln in lines) + v["extra"]
    parents = [box.current.commit] if v["parent"] else []
    return rewrap(repo, box.current.commit, message, pygit2.Oid(hex=tree), parents)


@pytest.fixture
def scratch(tmp_path: Path) -> Iterator[Path]:
    """A directory in memory when the machine has one (tens of thousands of small objects are written)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="gitive-forgery-", dir=shm))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_forged_body_snapshots_are_never_accepted(scratch: Path) -> None:
    repo = pygit2.init_repository(str(scratch / "server.git"), bare=True)
    box = Toolbox(repo)
    name = str(refs.bodies_ref(OWNER.id))
    checked: list[int] = []

    @settings(max_examples=200)
    @given(st.lists(_variant(), min_size=50, max_size=50))
    def run(variants: list[dict[str, Any]]) -> None:
        for v in variants:
            forged = _forge(box, v)
            if forged == box.current.commit:
                continue  # the honest snapshot itself, byte for byte: no change at all
            assert guard.check_update(repo, TEAM_ID, guard.Update(box.current.commit, forged, name)), v
            read = snapshots.read(repo, TEAM_ID, "bodies", OWNER.id, forged)
            assert read is None or snapshots.refusal(box.current, read) is not None, v
            checked.append(1)

    run()
    assert len(checked) >= 10_000


def test_owner_signatures_for_another_team_or_kind_are_refused(tmp_path: Path) -> None:
    repo = pygit2.Repository(str(init_bare(tmp_path / "server.git")))
    box = Toolbox(repo)
    name = str(refs.bodies_ref(OWNER.id))
    for commit in box.elsewhere[:2]:
        why = guard.check_update(repo, TEAM_ID, guard.Update(box.current.commit, commit, name))
        assert why and "not a bodies snapshot" in why
    for commit in box.elsewhere[2:]:  # v1 signatures are genuine, but v1 comes after a versioned one: refused
        why = guard.check_update(repo, TEAM_ID, guard.Update(box.current.commit, commit, name))
        assert why and "unversioned (v1)" in why
