"""The one helper that runs the git CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.errors import GitCommandError
from gitive.store import git


def test_run_returns_code_and_both_streams(git_repo: Path) -> None:
    code, out, err = git.run(["rev-parse", "--abbrev-ref", "HEAD"], cwd=git_repo)
    assert (code, out.strip(), err) == (0, "main", "")


def test_run_raises_with_command_code_and_last_stderr_line(git_repo: Path) -> None:
    with pytest.raises(GitCommandError) as info:
        git.run(["rev-parse", "--verify", "no-such-ref"], cwd=git_repo)
    exc = info.value
    assert exc.cmd == ("git", "rev-parse", "--verify", "no-such-ref")
    assert exc.returncode != 0
    assert "fatal" in exc.stderr
    assert str(exc).startswith("`git rev-parse --verify no-such-ref` failed (exit ")
    assert "fatal" in str(exc)


def test_run_without_check_returns_the_failure(git_repo: Path) -> None:
    code, _, err = git.run(["rev-parse", "--verify", "no-such-ref"], cwd=git_repo, check=False)
    assert code != 0 and err


def test_run_passes_input(git_repo: Path) -> None:
    _, out, _ = git.run(["hash-object", "--stdin"], cwd=git_repo, input=b"hello\n")
    assert out.strip() == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_run_ignores_an_outer_repositorys_git_dir(git_repo: Path, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("GIT_DIR", str(other / "nowhere"))  # as a hook of another repository would see
    monkeypatch.setenv("GIT_INDEX_FILE", str(other / "index"))
    _, out, _ = git.run(["rev-parse", "--show-toplevel"], cwd=git_repo)
    assert Path(out.strip()).resolve() == git_repo.resolve()


def test_no_git_env_keeps_transport_settings_and_never_prompts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_DIR", "/x")
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -i key")
    monkeypatch.delenv("GIT_TERMINAL_PROMPT", raising=False)
    env = git.no_git_env({"EXTRA": "1"})
    assert "GIT_DIR" not in env
    assert env["GIT_SSH_COMMAND"] == "ssh -i key"
    assert env["GIT_TERMINAL_PROMPT"] == "0"
    assert env["EXTRA"] == "1"


def test_run_times_out_as_a_git_command_error(git_repo: Path) -> None:
    with pytest.raises(GitCommandError, match="timed out"):
        git.run(["hash-object", "--stdin"], cwd=git_repo, input=None, timeout=0.000001)


def test_zsplit() -> None:
    assert git.zsplit("a\0b c\0\0") == ["a", "b c"]
    assert git.zsplit("") == []


def test_output_gives_the_exit_code_and_stdout_only(git_repo: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capfd: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "nowhere"))  # an outer repository's, as in a hook: ignored
    head = git.run(["rev-parse", "HEAD"], cwd=git_repo)[1]
    assert git.output(["rev-parse", "--verify", "HEAD"], git_repo, timeout=30) == (0, head.encode())
    assert git.output(["rev-parse", "--verify", "no-such-ref"], git_repo, timeout=30) == (128, b"")
    assert capfd.readouterr() == ("", "")  # stderr discarded, nothing leaks to this process's streams
    big = git.output(["-c", "alias.big=!head -c 300000 /dev/zero", "big"], git_repo, timeout=30)
    assert big == (0, bytes(300_000))  # more than a pipe holds: read while git writes


def test_output_kills_a_command_past_its_timeout(git_repo: Path) -> None:
    import time

    start = time.monotonic()
    assert git.output(["-c", "alias.slow=!sleep 30", "slow"], git_repo, timeout=0.5) == (-1, b"")
    assert time.monotonic() - start < 20


def test_output_of_a_folder_that_is_not_a_repository_is_a_failure(tmp_path: Path) -> None:
    assert git.output(["rev-parse", "--verify", "HEAD"], tmp_path / "missing", timeout=30)[0] not in (0, -1)
