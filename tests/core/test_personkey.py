"""Person keys: encrypted under a passphrase (argon2id + secretbox) or held by a real ssh-agent."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.core import gesture, personkey, sshagent
from gitive.core.keys import verify
from gitive.errors import GitiveError, KeyFileError

PASS = "a long enough passphrase"


def _create(path: Path, passphrase: str = PASS) -> personkey.KeyFile:
    return personkey.create(passphrase, personkey.MINIMUM, path)


def test_a_created_key_is_encrypted_mode_0600_and_records_its_kdf(tmp_path: Path) -> None:
    path = tmp_path / "person.key"
    made = _create(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    data = json.loads(path.read_text())
    assert (data["kind"], data["kdf"]["name"]) == ("passphrase", "argon2id")
    assert (data["kdf"]["opslimit"], data["kdf"]["memlimit"]) == (personkey.MINIMUM.opslimit,
                                                                  personkey.MINIMUM.memlimit)
    signer = personkey.unlock(personkey.load(path), PASS)
    assert signer.public == made.public == data["public"]
    assert signer.public not in path.read_text().replace(data["public"], "")  # only the public half in clear
    assert verify(signer.public, b"m", signer.sign(b"m").hex())
    assert "LocalSigner" in repr(signer) and data["box"] not in repr(signer)


def test_a_test_home_creates_keys_at_the_minimum_cost_by_default(tmp_path: Path) -> None:
    """The suite runs with GITIVE_TEST_KDF=minimum (testing/fixtures.py); the real default is
    tests/core/test_personkey_cost.py's."""
    made = personkey.create(PASS, path=tmp_path / "person.key")
    assert made.limits == personkey.MINIMUM


@settings(max_examples=20)
@given(guess=st.text(max_size=40))
def test_no_other_passphrase_opens_the_key(tmp_path_factory: pytest.TempPathFactory, guess: str) -> None:
    path = tmp_path_factory.mktemp("key") / "person.key"
    _create(path)
    if guess != PASS:
        with pytest.raises(personkey.WrongPassphrase):
            personkey.unlock(personkey.load(path), guess)


@pytest.mark.parametrize(("passphrase", "said"), [
    ("short", "at least 12"), ("elevenchars", "at least 12"),
    ("password1234", "very common password"), ("qwertyuiopasdf", "too easy to guess"),
    ("aaaaaaaaaaaaaaaa", "Repeats"), ("hunter2hunter2", "too easy to guess")])
def test_a_short_or_guessable_passphrase_is_refused_and_nothing_is_written(tmp_path: Path, passphrase: str,
                                                                           said: str) -> None:
    path = tmp_path / "person.key"
    with pytest.raises(GitiveError, match=said) as caught:
        _create(path, passphrase)
    assert passphrase not in str(caught.value) and "\n" not in str(caught.value)
    assert not path.exists()


def test_an_existing_key_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "person.key"
    before = _create(path).public
    with pytest.raises(KeyFileError, match="already exists"):
        _create(path, "another passphrase")
    assert personkey.load(path).public == before


def test_a_key_readable_by_others_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "person.key"
    _create(path)
    path.chmod(0o644)
    with pytest.raises(KeyFileError, match="chmod 600"):
        personkey.load(path)


@pytest.mark.parametrize("text", ["", "{}", "not json", json.dumps({"format": "gitive-person-key", "version": 9}),
                                  json.dumps({"format": "gitive-person-key", "version": 1, "kind": "passphrase",
                                              "public": "ab" * 32})])
def test_a_damaged_key_file_is_a_clear_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "person.key"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(KeyFileError, match="person key"):
        personkey.load(path)


def test_changing_the_passphrase_keeps_the_key_and_raises_the_cost(tmp_path: Path) -> None:
    path = tmp_path / "person.key"
    before = _create(path)
    with pytest.raises(personkey.WrongPassphrase):
        personkey.change_passphrase("not the passphrase", "a new passphrase!", path=path)
    after = personkey.change_passphrase(PASS, "a new passphrase!", path=path)
    assert after.public == before.public
    assert after.limits == personkey.MINIMUM  # a test home's floor; a real home's is MODERATE
    with pytest.raises(GitiveError, match="too easy to guess"):
        personkey.change_passphrase("a new passphrase!", "password12345", path=path)
    with pytest.raises(personkey.WrongPassphrase):
        personkey.unlock(personkey.load(path), PASS)
    assert personkey.unlock(personkey.load(path), "a new passphrase!").public == before.public


def test_export_then_import_on_another_home_gives_the_same_key(tmp_path: Path) -> None:
    first, second = tmp_path / "one" / "person.key", tmp_path / "two" / "person.key"
    made = _create(first)
    text = personkey.export_text(first)
    assert PASS not in text
    assert personkey.import_text(text, second).public == made.public
    assert personkey.unlock(personkey.load(second), PASS).public == made.public
    assert personkey.import_text(text, second).public == made.public  # again: nothing changes
    other = tmp_path / "three" / "person.key"
    _create(other)
    with pytest.raises(KeyFileError, match="another person key"):
        personkey.import_text(text, other)


# --- ssh-agent, for real -----------------------------------------------------------------------------------

class Agent(NamedTuple):
    socket: str
    public: str
    answer: Path  # what the person "clicks": 0 allows, 1 declines
    asked: Path  # one line per confirmation the agent asked for


def _public_of(pub_file: Path) -> str:
    import base64

    blob = base64.b64decode(pub_file.read_text().split()[1])
    return blob[-32:].hex()


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[Agent]:
    """A real ssh-agent holding an ed25519 key added with ``ssh-add -c``; its SSH_ASKPASS script stands in
    for the person's click on the confirmation dialog."""
    if not (shutil.which("ssh-agent") and shutil.which("ssh-add") and shutil.which("ssh-keygen")):
        pytest.skip("OpenSSH client tools are not installed")
    answer, asked, askpass = tmp_path / "answer", tmp_path / "asked", tmp_path / "askpass"
    answer.write_text("0")
    askpass.write_text(f'#!/bin/sh\necho "$SSH_ASKPASS_PROMPT $*" >> {asked}\nexit $(cat {answer})\n')
    askpass.chmod(0o755)
    sock = str(tmp_path / "agent.sock")
    env = {**os.environ, "SSH_ASKPASS": str(askpass), "SSH_ASKPASS_REQUIRE": "force", "DISPLAY": ":0"}
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", sock], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.02)
        key = tmp_path / "id_ed25519"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "alice person key", "-f", str(key)],
                       check=True)
        subprocess.run(["ssh-add", "-q", "-c", str(key)], env={**env, "SSH_AUTH_SOCK": sock}, check=True,
                       capture_output=True)
        yield Agent(sock, _public_of(key.with_suffix(".pub")), answer, asked)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_agent_lists_its_ed25519_key(agent: Agent) -> None:
    assert sshagent.identities(agent.socket) == [sshagent.Identity(agent.public, "alice person key")]


def test_an_agent_key_signs_only_after_the_person_confirms(agent: Agent, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", agent.socket)
    path = tmp_path / "person.key"
    personkey.use_agent_key(agent.public, "alice person key", path)
    assert "box" not in json.loads(path.read_text())  # nothing secret is stored
    signer = personkey.unlock(personkey.load(path))
    record = {"type": "review", "about": "ab" * 32, "approver": "alice", "approved": True, "note": ""}
    signed = gesture.sign(signer, "7e" * 16, "cd" * 32, record)
    assert gesture.key_of("7e" * 16, "cd" * 32, signed) == agent.public
    assert agent.asked.read_text().count("confirm") == 1  # the agent asked the person once
    agent.answer.write_text("1")  # the person declines
    with pytest.raises(sshagent.AgentError, match="declined"):
        gesture.sign(signer, "7e" * 16, "cd" * 32, record)


def test_a_key_the_agent_does_not_hold_is_a_clear_error(agent: Agent, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSH_AUTH_SOCK", agent.socket)
    path = tmp_path / "person.key"
    personkey.use_agent_key("ab" * 32, "", path)
    with pytest.raises(sshagent.AgentError, match="ssh-add -c"):
        personkey.unlock(personkey.load(path))


def test_no_agent_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    with pytest.raises(sshagent.AgentError, match="SSH_AUTH_SOCK"):
        sshagent.identities()
    with pytest.raises(sshagent.AgentError, match="cannot talk"):
        sshagent.identities(str(tmp_path / "no-such-socket"))
