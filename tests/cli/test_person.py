"""``gitive person`` and the person key at ``init``/``join``, as a person at a terminal runs them."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from gitive.core import personkey
from testing import people
from testing.lessons import as_person
from testing.machines import Fleet, Machine, one_line_error

NEW = "New passphrase for your person key"
AGAIN = "The same passphrase again"
SECRET = "my own long passphrase"


def test_init_at_a_terminal_asks_the_new_passphrase_twice(fleet: Fleet, bare_remote: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(personkey.TEST_KDF)  # a real person's terminal: the real cost
    alice = fleet.machine("laptop", bare_remote)
    code, out = as_person(alice, "init", "--person", "alice", answers=[
        (NEW, "password1234\n"),  # too easy to guess: refused at once, asked again
        (NEW, SECRET + "\n"), (AGAIN, "a typo in it\n"),  # the two differ: asked again
        (NEW, SECRET + "\n"), (AGAIN, SECRET + "\n")])
    assert code == 0, out
    assert "differ" in out and "Created your person key" in out
    path = alice.home / "person.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "very common password" in out
    assert personkey.load(path).limits == personkey.MODERATE  # a real person's key: the default cost
    shown = alice.json("person")
    assert (shown["person"], shown["registered"], shown["kind"]) == ("alice", True, "passphrase")
    assert SECRET not in path.read_text()


def test_init_with_a_short_passphrase_writes_nothing(fleet: Fleet, bare_remote: Path) -> None:
    alice = fleet.machine("laptop", bare_remote)
    code, out = as_person(alice, "init", "--person", "alice", answers=[(NEW, "short\n"), (NEW, "qwertyuiopasdf\n"),
                                                                       (NEW, "still short\n")])
    assert code == 1 and "at least 12" in out and "too easy to guess" in out, out
    assert not (alice.home / "person.key").exists()
    assert "hive.team" not in alice.config()


def test_init_without_a_terminal_or_flag_is_refused_before_anything_is_made(fleet: Fleet, bare_remote: Path) -> None:
    alice = fleet.machine("laptop", bare_remote)
    one_line_error(alice.run("init", "--person", "alice"), "typed at a terminal")
    assert not (alice.home / "person.key").exists() and "hive.team" not in alice.config()


def test_person_passwd_changes_the_passphrase_not_the_key(alice: Machine) -> None:
    before = alice.json("person")["key"]
    one_line_error(alice.run("person", "passwd", "--passphrase-stdin", stdin="wrong one\nnew passphrase\n"),
                   "wrong passphrase")
    alice.ok("person", "passwd", "--passphrase-stdin", stdin=f"{people.PASSPHRASE}\nthe new passphrase\n")
    assert alice.json("person")["key"] == before
    old = alice.run("invite", "--passphrase-stdin", stdin=people.PASSPHRASE + "\n")
    one_line_error(old, "wrong passphrase")  # the old one no longer opens it
    assert alice.run("invite", "--passphrase-stdin", stdin="the new passphrase\n").code == 0


def test_a_second_machine_joins_with_the_exported_key(fleet: Fleet, bare_remote: Path, tmp_path: Path,
                                                      pair: list[Machine]) -> None:
    alice, bob = pair
    exported = tmp_path / "bob.person-key"
    bob.ok("person", "export", str(exported))
    assert stat.S_IMODE(exported.stat().st_mode) == 0o600
    laptop = fleet.machine("bob-laptop", bare_remote)
    code = fleet.invite(bob)
    refused = laptop.run("join", code, "--person", "bob", "--machine", "bob-laptop", "--passphrase-stdin",
                         stdin="a new passphrase\n")
    one_line_error(refused, "person export")
    assert not (laptop.home / "person.key").exists()  # refused before a key was made for nothing
    assert "hive.team" not in laptop.config()
    one_line_error(laptop.run("person", "import", str(exported), "--passphrase-stdin", stdin="a guess\n"),
                   "wrong passphrase")
    laptop.ok("person", "import", str(exported), "--passphrase-stdin", stdin=people.PASSPHRASE + "\n")
    laptop.decided("join", code, "--person", "bob", "--machine", "bob-laptop")
    alice.ok("sync")
    machines = {m["name"]: m["active"] for m in alice.json("team")["members"] if m["person"] == "bob"}
    assert machines == {"desk": True, "bob-laptop": True}
    assert laptop.json("person")["registered"] is True


def test_person_with_no_key_says_how_to_make_one(fleet: Fleet, bare_remote: Path) -> None:
    alice = fleet.machine("laptop", bare_remote)
    assert "gitive person init" in alice.ok("person").out
