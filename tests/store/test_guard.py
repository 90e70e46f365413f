"""The server-side guard: real bare repositories with the hook installed, real ``git push`` from clones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest
from typer.testing import CliRunner

from gitive.cli import server as server_cli
from gitive.constants import ENTRY_FILE
from gitive.core import canonical, signed
from gitive.core.keys import load_or_create_key, machine_id
from gitive.errors import NotARepository
from gitive.store import bodies, guard, logs, presence, refs, serverhook
from testing.fixtures import init_bare, init_repo, run_git

TEAM = "ab" * 16
OTHER_TEAM = "cd" * 16
TEAM_SCOPE = {"team": True}
_BLOB = pygit2.enums.FileMode.BLOB


@pytest.fixture
def key_a() -> Any:
    return load_or_create_key()[0]


@pytest.fixture
def key_b(tmp_path: Path) -> Any:
    (tmp_path / "machine-b").mkdir()
    return load_or_create_key(tmp_path / "machine-b" / "machine.key")[0]


@pytest.fixture
def server(tmp_path: Path) -> Path:
    path = init_bare(tmp_path / "server.git")
    serverhook.install(path, TEAM)
    return path


@pytest.fixture
def client(tmp_path: Path) -> pygit2.Repository:
    return pygit2.Repository(str(init_repo(tmp_path / "client")))


def push(client: pygit2.Repository, remote: Path | str, *refspecs: str, options: tuple[str, ...] = ()
         ) -> subprocess.CompletedProcess[str]:
    opts = [arg for opt in options for arg in ("-o", opt)]
    return subprocess.run(["git", "push", *opts, str(remote), *refspecs], cwd=client.workdir,
                          capture_output=True, text=True, check=False)


def log_spec(machine: str, force: bool = False) -> str:
    return f"{'+' if force else ''}refs/hive/logs/{machine}/*:refs/hive/logs/{machine}/*"


def remote_tips(remote: Path) -> dict[str, str]:
    out = run_git(["for-each-ref", "--format=%(refname) %(objectname)", "refs/"], cwd=remote)
    return dict(line.split(" ", 1) for line in out.splitlines())


def team_record(founder: str) -> dict[str, Any]:
    return {"type": "team", "name": "acme", "founder": founder}


def founder_record(machine: str) -> dict[str, Any]:
    return {"type": "member", "machine": machine, "person": "alice", "name": "laptop", "role": "member",
            "active": True, "emails": [], "ts": 1_700_000_000_000, "admission": {"via": "founder"}}


def raw_commit(repo: pygit2.Repository, files: dict[str, bytes], parent: str | None) -> str:
    """A commit built by hand, bypassing every write-time check."""
    builder = repo.TreeBuilder()
    for name, data in files.items():
        builder.insert(name, repo.create_blob(data), _BLOB)
    who = pygit2.Signature("x", "x@hive", 1_700_000_000, 0)
    return str(repo.create_commit(None, who, who, "raw\n", builder.write(),
                                  [pygit2.Oid(hex=parent)] if parent else []))


def raw_entry(repo: pygit2.Repository, key: Any, seq: int, parent: str | None,
              team_id: str = TEAM, **overrides: Any) -> str:
    me = machine_id(key)
    body = {"author": me, "log": "roster", "scope": TEAM_SCOPE, "seq": seq, "at": 1_700_000_000_000,
            "record": team_record(me)}
    envelope = {**signed.sign(key, team_id, "team", body), **overrides}
    return raw_commit(repo, {ENTRY_FILE: canonical.dumps(envelope)}, parent)


def assert_refused(result: subprocess.CompletedProcess[str], ref: str, words: str) -> None:
    assert result.returncode != 0, result.stderr
    line = next((ln for ln in result.stderr.splitlines() if f"gitive guard: {ref}: " in ln), None)
    assert line is not None, result.stderr
    assert words in line, line


# ---- logs -----------------------------------------------------------------------------------------------

def test_honest_log_push_accepted_and_appending_more_accepted(server: Path, client: pygit2.Repository,
                                                              key_a: Any) -> None:
    me = machine_id(key_a)
    first = logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    assert push(client, server, log_spec(me)).returncode == 0
    assert remote_tips(server)[refs.log_ref(me, "roster")] == first.commit

    logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    third = logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    result = push(client, server, log_spec(me))
    assert result.returncode == 0, result.stderr
    assert remote_tips(server)[refs.log_ref(me, "roster")] == third.commit


def test_ordinary_branch_push_passes(server: Path, client: pygit2.Repository) -> None:
    result = push(client, server, "main:refs/heads/main", "main:refs/tags/v1")
    assert result.returncode == 0, result.stderr
    assert "gitive guard" not in result.stderr
    assert {"refs/heads/main", "refs/tags/v1"} <= set(remote_tips(server))


@pytest.mark.parametrize("diverge", [False, True], ids=["rewind", "rewrite"])
def test_log_rewrite_refused(server: Path, client: pygit2.Repository, key_a: Any, diverge: bool) -> None:
    me = machine_id(key_a)
    name = refs.log_ref(me, "roster")
    first = logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    second = logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    assert push(client, server, log_spec(me)).returncode == 0
    refs.force_set(client, name, first.commit, "test: rewind")
    if diverge:
        logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me), at=1)
    assert_refused(push(client, server, log_spec(me, force=True)), name, "not a fast-forward")
    assert remote_tips(server)[name] == second.commit


def test_entry_by_another_machine_under_my_ref_refused(server: Path, client: pygit2.Repository,
                                                       key_a: Any, key_b: Any) -> None:
    a, b = machine_id(key_a), machine_id(key_b)
    logs.append(client, key_b, TEAM, "roster", TEAM_SCOPE, team_record(b))
    target = refs.log_ref(a, "roster")
    assert_refused(push(client, server, f"{refs.log_ref(b, 'roster')}:{target}"), target, "wrong-signer")
    assert target not in remote_tips(server)


def test_entry_claiming_my_name_but_signed_by_another_refused(server: Path, client: pygit2.Repository,
                                                              key_a: Any, key_b: Any) -> None:
    a = machine_id(key_a)
    name = refs.log_ref(a, "roster")
    body = {"author": a, "log": "roster", "scope": TEAM_SCOPE, "seq": 1, "at": 1_700_000_000_000,
            "record": team_record(a)}
    forged = {**signed.sign(key_b, TEAM, "team", body), "by": a}
    client.references.create(name, raw_commit(client, {ENTRY_FILE: canonical.dumps(forged)}, None))
    assert_refused(push(client, server, log_spec(a)), name, "bad-signature at seq 1")


def test_entry_signed_for_another_team_refused(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    logs.append(client, key_a, OTHER_TEAM, "roster", TEAM_SCOPE, team_record(me))
    assert_refused(push(client, server, log_spec(me)), refs.log_ref(me, "roster"), "bad-signature")


def test_malformed_entry_refused(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    name = refs.log_ref(me, "roster")
    first = logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    assert push(client, server, log_spec(me)).returncode == 0
    good = client[client[first.commit].tree[ENTRY_FILE].id].data
    bad = raw_commit(client, {ENTRY_FILE: good, "extra.txt": b"smuggled\n"}, first.commit)
    refs.force_set(client, name, bad, "test: malformed")
    assert_refused(push(client, server, log_spec(me)), name, "malformed")
    assert remote_tips(server)[name] == first.commit


def test_seq_gap_refused(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    name = refs.log_ref(me, "roster")
    first = logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    assert push(client, server, log_spec(me)).returncode == 0
    refs.force_set(client, name, raw_entry(client, key_a, 3, first.commit), "test: gap")
    assert_refused(push(client, server, log_spec(me)), name, "seq-gap at seq 3")


def test_new_log_must_start_at_seq_one(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    name = refs.log_ref(me, "roster")
    client.references.create(name, raw_entry(client, key_a, 2, None))
    assert_refused(push(client, server, log_spec(me)), name, "seq-gap at seq 2")


def test_deleting_a_log_refused(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    name = refs.log_ref(me, "roster")
    logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    assert push(client, server, log_spec(me)).returncode == 0
    assert_refused(push(client, server, f":{name}"), name, "deleting a hive log is refused")
    assert name in remote_tips(server)


@pytest.mark.parametrize("ref", [
    "refs/hive/foo/bar",
    "refs/hive/logs/not-a-machine/roster",
    "refs/hive/bodies/" + "A" * 64,
    "refs/hive/logs/" + "a" * 64 + "/roster/extra",
])
def test_unknown_hive_ref_refused(server: Path, client: pygit2.Repository, ref: str) -> None:
    assert_refused(push(client, server, f"main:{ref}"), ref, "not a gitive ref")


def test_one_bad_ref_refuses_the_whole_push(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    result = push(client, server, log_spec(me), "main:refs/heads/main", "main:refs/hive/junk")
    assert_refused(result, "refs/hive/junk", "not a gitive ref")
    assert remote_tips(server) == {}


# ---- bodies and presence --------------------------------------------------------------------------------

def test_bodies_force_updated_by_owner_accepted(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    spec = f"+{refs.bodies_ref(me)}:{refs.bodies_ref(me)}"
    bodies.put(client, key_a, TEAM, "1" * 64, b"first body")
    bodies.put(client, key_a, TEAM, "2" * 64, b"second body")
    assert push(client, server, spec).returncode == 0
    bodies.delete(client, key_a, TEAM, ["1" * 64])
    result = push(client, server, spec)
    assert result.returncode == 0, result.stderr
    assert remote_tips(server)[refs.bodies_ref(me)] == refs.tip(client, refs.bodies_ref(me))


def test_bodies_written_by_another_machine_refused(server: Path, client: pygit2.Repository,
                                                   key_a: Any, key_b: Any) -> None:
    a, b = machine_id(key_a), machine_id(key_b)
    bodies.put(client, key_b, TEAM, "1" * 64, b"planted")
    target = refs.bodies_ref(a)
    assert_refused(push(client, server, f"+{refs.bodies_ref(b)}:{target}"), target, "not a bodies snapshot")


def test_presence_needs_a_presence_signature(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    bodies.put(client, key_a, TEAM, "1" * 64, b"a body, not presence")
    target = refs.presence_ref(me)
    assert_refused(push(client, server, f"+{refs.bodies_ref(me)}:{target}"), target, "presence snapshot")


def test_presence_rewritten_by_owner_accepted(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    spec = f"+{refs.presence_ref(me)}:{refs.presence_ref(me)}"
    for doing in (b"editing api.py", b"idle"):
        assert presence.publish(client, key_a, TEAM, doing)
        result = push(client, server, spec)
        assert result.returncode == 0, result.stderr


def test_deleting_bodies_refused(server: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = machine_id(key_a)
    bodies.put(client, key_a, TEAM, "1" * 64, b"body")
    assert push(client, server, f"+{refs.bodies_ref(me)}:{refs.bodies_ref(me)}").returncode == 0
    assert_refused(push(client, server, f":{refs.bodies_ref(me)}"), refs.bodies_ref(me), "deleting")


# ---- team id --------------------------------------------------------------------------------------------

@pytest.fixture
def unconfigured(tmp_path: Path) -> Path:
    path = init_bare(tmp_path / "fresh.git")
    serverhook.install(path)
    return path


def found_team(client: pygit2.Repository, key: Any, team_id: str = TEAM) -> str:
    me = machine_id(key)
    logs.append(client, key, team_id, "roster", TEAM_SCOPE, founder_record(me))
    logs.append(client, key, team_id, "roster", TEAM_SCOPE, team_record(me))
    return me


def test_no_team_id_refuses_hive_refs_but_not_branches(unconfigured: Path, client: pygit2.Repository,
                                                       key_a: Any) -> None:
    me = found_team(client, key_a)
    assert_refused(push(client, unconfigured, log_spec(me)), refs.log_ref(me, "roster"), "has no team id")
    assert push(client, unconfigured, "main:refs/heads/main").returncode == 0


def test_team_id_learned_from_founders_first_push(unconfigured: Path, client: pygit2.Repository,
                                                  key_a: Any, key_b: Any) -> None:
    me = found_team(client, key_a)
    result = push(client, unconfigured, log_spec(me), options=(f"hive-team={TEAM}",))
    assert result.returncode == 0, result.stderr
    assert run_git(["config", "hive.team"], cwd=unconfigured).strip() == TEAM
    # Once learned, the team id is fixed: another founder offering another team is refused.
    other = pygit2.Repository(str(init_repo(unconfigured.parent / "other")))
    b = found_team(other, key_b, OTHER_TEAM)
    assert_refused(push(other, unconfigured, log_spec(b), options=(f"hive-team={OTHER_TEAM}",)),
                   refs.log_ref(b, "roster"), "bad-signature")


def test_team_id_not_learned_without_a_founder_roster(unconfigured: Path, client: pygit2.Repository,
                                                      key_a: Any) -> None:
    me = machine_id(key_a)
    logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))  # no founder member entry
    result = push(client, unconfigured, log_spec(me), options=(f"hive-team={TEAM}",))
    assert_refused(result, refs.log_ref(me, "roster"), "has no team id")
    assert run_git(["config", "hive.team"], cwd=unconfigured, check=False) == ""


def test_team_id_not_learned_for_a_team_the_roster_was_not_signed_for(
        unconfigured: Path, client: pygit2.Repository, key_a: Any) -> None:
    me = found_team(client, key_a, OTHER_TEAM)
    result = push(client, unconfigured, log_spec(me), options=(f"hive-team={TEAM}",))
    assert_refused(result, refs.log_ref(me, "roster"), "has no team id")


# ---- library ---------------------------------------------------------------------------------------------

def test_check_push_never_raises_on_garbage(tmp_path: Path, key_a: Any) -> None:
    repo = pygit2.init_repository(str(tmp_path / "lib.git"), bare=True)
    me = machine_id(key_a)
    weird = raw_entry(repo, key_a, 1, None, by=5)
    not_json = raw_commit(repo, {ENTRY_FILE: b"{not json"}, None)
    blob = str(repo.create_blob(b"just a blob"))
    name = str(refs.log_ref(me, "roster"))
    updates: list[tuple[str | None, str | None, str]] = [
        (None, weird, name),
        (None, not_json, name),
        (None, blob, name),
        (None, "f" * 40, name),
        ("e" * 40, not_json, name),
        (None, blob, str(refs.presence_ref(me))),
        (None, not_json, "refs/heads/anything"),
    ]
    rejections = guard.check_push(repo.path, updates, TEAM)
    assert [r.ref for r in rejections] == [name] * 5 + [str(refs.presence_ref(me))]
    assert all("\n" not in r.reason and r.reason for r in rejections)


def test_parse_updates_reads_zero_ids_as_none() -> None:
    text = f"{'0' * 40} {'a' * 40} refs/hive/x\n\n{'b' * 64} {'0' * 64} refs/heads/main\n"
    assert guard.parse_updates(text) == [guard.Update(None, "a" * 40, "refs/hive/x"),
                                         guard.Update("b" * 64, None, "refs/heads/main")]


# ---- installing -----------------------------------------------------------------------------------------

LEGACY = """#!/bin/sh
cat > "$(dirname "$0")/../legacy-saw"
test ! -e "$(dirname "$0")/../legacy-refuses"
"""


def test_legacy_hook_chained_and_restored(server: Path, tmp_path: Path, client: pygit2.Repository,
                                          key_a: Any) -> None:
    repo = init_bare(tmp_path / "legacy.git")
    hook = repo / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(LEGACY)
    hook.chmod(0o755)
    installed = serverhook.install(repo, TEAM)
    assert installed.legacy == repo / "hooks" / "pre-receive.legacy"
    assert serverhook.install(repo, TEAM).legacy == installed.legacy  # idempotent: ours is not re-kept
    assert serverhook.is_ours(hook) and installed.legacy.read_text() == LEGACY

    me = machine_id(key_a)
    logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    assert push(client, repo, log_spec(me)).returncode == 0
    assert f"refs/hive/logs/{me}/roster" in (repo / "legacy-saw").read_text()

    (repo / "legacy-refuses").touch()
    result = push(client, repo, "main:refs/heads/main")
    assert result.returncode != 0 and "refs/heads/main" not in remote_tips(repo)

    assert serverhook.uninstall(repo) is True
    assert hook.read_text() == LEGACY and not installed.legacy.exists()
    assert serverhook.uninstall(repo) is False


def test_install_respects_core_hooks_path(tmp_path: Path, client: pygit2.Repository) -> None:
    repo = init_bare(tmp_path / "hp.git")
    run_git(["config", "core.hooksPath", "custom-hooks"], cwd=repo)
    installed = serverhook.install(repo, TEAM)
    assert installed.hook == repo / "custom-hooks" / "pre-receive"
    assert push(client, repo, "main:refs/hive/junk").returncode != 0  # git ran the hook from there


def test_installed_hook_runs_this_interpreter_and_reinstall_is_idempotent(server: Path) -> None:
    hook = server / "hooks" / "pre-receive"
    assert hook.read_text().splitlines()[0] == f"#!{sys.executable}"
    assert serverhook.install(server).legacy is None  # reinstalling never keeps our own hook as legacy
    assert sorted(p.name for p in hook.parent.iterdir()) == ["pre-receive"]
    assert run_git(["config", "hive.team"], cwd=server).strip() == TEAM  # kept without --team


def test_hook_without_gitive_refuses_hive_refs_only(server: Path, client: pygit2.Repository) -> None:
    hook = server / "hooks" / "pre-receive"
    _, _, rest = hook.read_text().partition("\n")
    hook.write_text(f"#!{sys.executable} -S\n{rest}")  # -S: no site-packages, so no gitive
    assert_refused(push(client, server, "main:refs/hive/junk"), "refs/hive/junk", "cannot be imported")
    assert push(client, server, "main:refs/heads/main").returncode == 0


def test_guard_over_git_daemon(git_daemon: Any, client: pygit2.Repository, key_a: Any, key_b: Any) -> None:
    url = git_daemon("team.git")
    serverhook.install(git_daemon.base / "team.git", TEAM)
    me = machine_id(key_a)
    logs.append(client, key_a, TEAM, "roster", TEAM_SCOPE, team_record(me))
    result = push(client, url, log_spec(me))
    assert result.returncode == 0, result.stderr
    bodies.put(client, key_b, TEAM, "1" * 64, b"planted")
    target = refs.bodies_ref(me)
    assert_refused(push(client, url, f"+{refs.bodies_ref(machine_id(key_b))}:{target}"), target,
                   "not a bodies snapshot")


def test_cli_install_and_uninstall(tmp_path: Path) -> None:
    repo = init_bare(tmp_path / "cli.git")
    runner = CliRunner()
    result = runner.invoke(server_cli.app, ["install-hook", str(repo), "--team", TEAM])
    assert result.exit_code == 0, result.output
    assert "installed the gitive guard" in result.output
    assert run_git(["config", "hive.team"], cwd=repo).strip() == TEAM
    result = runner.invoke(server_cli.app, ["uninstall-hook", str(repo)])
    assert result.exit_code == 0 and "removed" in result.output
    assert not (repo / "hooks" / "pre-receive").exists()


@pytest.mark.parametrize("make", ["work-tree", "plain-dir", "missing"])
def test_cli_install_refuses_a_non_bare_path(tmp_path: Path, make: str) -> None:
    path = tmp_path / make
    if make == "work-tree":
        init_repo(path, first_commit=False)
    elif make == "plain-dir":
        path.mkdir()
    result = CliRunner().invoke(server_cli.app, ["install-hook", str(path), "--team", TEAM])
    assert isinstance(result.exception, NotARepository)
    assert "not a bare git repository" in str(result.exception)
    assert "\n" not in str(result.exception)


def test_cli_install_refuses_a_bad_team_id(tmp_path: Path) -> None:
    repo = init_bare(tmp_path / "t.git")
    result = CliRunner().invoke(server_cli.app, ["install-hook", str(repo), "--team", "acme"])
    assert result.exception is not None and "not a team id" in str(result.exception)
    assert not (repo / "hooks" / "pre-receive").exists()


def test_every_command_has_an_example() -> None:
    for command in server_cli.app.registered_commands:
        assert command.callback is not None and "Example: gitive server" in (command.callback.__doc__ or "")
