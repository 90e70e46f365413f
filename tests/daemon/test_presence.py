"""Presence: sessions built from the hook event log, published as metadata to ``refs/hive/presence/<machine>``
and read by teammates after a sync; credential paths and content never leave the machine; quiet sessions
are not live. In-process: the daemon's ``Service`` against real clones and a bare remote."""

from __future__ import annotations

import json
from pathlib import Path

from gitive.capture import events
from testing import live
from testing.lessons import reachable_blobs
from testing.machines import Machine

MINUTE = 60_000
CREDENTIALS = (".env", ".aws/credentials", "id_ed25519", ".git-credentials")


def test_session_from_hooks_published_and_listed_by_peer(pair: list[Machine], remote: Path) -> None:
    a, b = pair
    assert live.hook(a, "session-start", live.session_start(a, "sa")) == "{}"
    assert live.hook(a, "post-tool", live.edit(a, "sa", "src/app.py")) == "{}"
    assert live.hook(a, "post-tool", live.read(a, "sa", "README")) == "{}"
    live.publish_and_sync(a)

    snap = live.published_presence(remote, a)
    assert snap is not None
    assert (snap["machine"], snap["person"], snap["machine_name"]) == (a.id, "alice", "a")
    [session] = snap["sessions"]
    assert session["address"] == "alice/a-claude"
    assert (session["name"], session["harness"], session["repo_label"], session["branch"]) == (
        "a-claude", "claude", "a", "main")
    assert session["head"] == a.git("rev-parse", "HEAD").strip()
    assert session["modified"] == ["src/app.py"]
    assert session["files"] == ["src/app.py", "README"]  # most recent last
    assert session["turn"] == "busy"
    assert session["project"]  # the project id peers compare for overlap notices

    assert live.addresses(b.json("who")) == set()  # not fetched yet
    b.ok("sync")
    [row] = b.json("who")
    assert (row["address"], row["person"], row["machine"], row["live"]) == ("alice/a-claude", "alice", a.id, True)
    assert "alice/a-claude" in b.ok("who").out


def test_published_presence_holds_metadata_only(pair: list[Machine], remote: Path) -> None:
    a, _ = pair
    live.hook(a, "session-start", live.session_start(a, "sa"))
    prompt = {"session_id": "sa", "cwd": str(a.clone), "hook_event_name": "UserPromptSubmit",
              "prompt": "deploy with the password swordfish-1234"}
    live.hook(a, "prompt", prompt)
    call = live.edit(a, "sa", "src/app.py")
    call["tool_input"]["new_string"] = "SECRET_DIFF_LINE = 1"
    call["tool_response"]["stdout"] = "OUTPUT_OF_THE_TOOL"
    live.hook(a, "post-tool", call)
    live.publish_and_sync(a)

    raw = live.published_presence_bytes(remote, a)
    assert raw is not None and b"src/app.py" in raw
    for content in (b"swordfish", b"SECRET_DIFF_LINE", b"OUTPUT_OF_THE_TOOL", str(a.clone).encode()):
        assert content not in raw  # no prompt, diff, output or local path


def test_credential_paths_never_in_published_presence(pair: list[Machine], remote: Path) -> None:
    a, b = pair
    home = Path(a.clone).parent / "a-user-home"
    live.hook(a, "session-start", live.session_start(a, "sa"))
    edited = [".env", "config/.env.production", ".aws/credentials", str(home / ".aws" / "credentials"),
              str(home / ".ssh" / "id_ed25519"), "deploy/id_ed25519", ".git-credentials",
              str(home / ".git-credentials"), "src/app.py"]
    for path in edited:
        live.hook(a, "post-tool", live.edit(a, "sa", path))
        live.hook(a, "post-tool", live.edit(a, "sa", path, tool="Write"))
    live.hook(a, "post-tool", live.read(a, "sa", ".aws/credentials"))
    live.publish_and_sync(a)

    raw = live.published_presence_bytes(remote, a)
    assert raw is not None
    [session] = json.loads(raw)["sessions"]
    assert session["files"] == ["src/app.py"] and session["modified"] == ["src/app.py"]
    for name in CREDENTIALS:
        assert name.encode() not in raw
    # Nor anywhere else the remote holds (older presence snapshots, logs).
    for blob in reachable_blobs(remote).values():
        for name in CREDENTIALS:
            assert name.encode() not in blob
    # The teammate's view, and this machine's own, agree.
    b.ok("sync")
    [row] = b.json("who")
    assert row["files"] == ["src/app.py"]
    [mine] = a.json("who")
    assert mine["files"] == ["src/app.py"] and mine["modified"] == ["src/app.py"]


def test_sessions_quiet_for_30_minutes_are_not_live(pair: list[Machine]) -> None:
    a, b = pair
    now = live.now_ms()
    with live.on(a):
        for session, ago in (("old", 31 * MINUTE), ("recent", 29 * MINUTE)):
            events.append(events.make("session.start", harness="claude", session=session, cwd=str(a.clone),
                                      ts=now - ago - 1_000, vcs={"repository": str(a.clone)}))
            events.append(events.make("tool.completed", harness="claude", session=session, cwd=str(a.clone),
                                      ts=now - ago, vcs={"repository": str(a.clone)},
                                      file={"paths": ["src/app.py"], "op": "modify"}))
    # Only the session seen in the last 30 minutes exists at all on its own machine.
    assert [r["address"] for r in a.json("who", "--all")] == ["alice/a-claude"]
    live.publish_and_sync(a)
    b.ok("sync")
    assert live.addresses(b.json("who")) == {"alice/a-claude"}

    # Two minutes later the same snapshot says the session has gone quiet: listed with --all, not live.
    later = {"GITIVE_NOW_MS": str(now + 2 * MINUTE)}
    assert b.json("who", env=later) == []
    [quiet] = b.json("who", "--all", env=later)
    assert (quiet["address"], quiet["live"]) == ("alice/a-claude", False)
    assert "no live sessions" in b.ok("who", env=later).out
    # And on its own machine it is no longer collected.
    assert a.json("who", "--all", env=later) == []


def test_ended_session_is_not_listed(pair: list[Machine]) -> None:
    a, _ = pair
    live.hook(a, "session-start", live.session_start(a, "s1"))
    live.hook(a, "session-start", live.session_start(a, "s2"))
    assert live.addresses(a.json("who")) == {"alice/a-claude", "alice/a-claude-2"}
    end = {"session_id": "s1", "cwd": str(a.clone), "hook_event_name": "SessionEnd", "reason": "exit"}
    live.hook(a, "session-end", end)
    assert live.addresses(a.json("who")) == {"alice/a-claude-2"}


def test_session_names_are_sticky_and_unique_per_machine(pair: list[Machine]) -> None:
    a, _ = pair
    for session in ("s1", "s2", "s3"):
        live.hook(a, "session-start", live.session_start(a, session))
    first = {r["address"] for r in a.json("who")}
    assert first == {"alice/a-claude", "alice/a-claude-2", "alice/a-claude-3"}
    live.hook(a, "post-tool", live.edit(a, "s3", "src/app.py"))
    by_file = {r["address"] for r in a.json("who") if r["modified"] == ["src/app.py"]}
    assert by_file == {"alice/a-claude-3"}  # the third session kept its name across recomputations


def test_turn_follows_the_session(pair: list[Machine]) -> None:
    a, _ = pair
    live.hook(a, "session-start", live.session_start(a, "sa"))
    assert a.json("who")[0]["turn"] == "idle"
    live.hook(a, "post-tool", live.read(a, "sa"))
    assert a.json("who")[0]["turn"] == "busy"
    live.hook(a, "stop", live.stop(a, "sa"))
    assert a.json("who")[0]["turn"] == "idle"


def test_presence_of_a_machine_off_the_roster_is_ignored(pair: list[Machine], remote: Path) -> None:
    a, b = pair
    live.hook(a, "session-start", live.session_start(a, "sa"))
    live.publish_and_sync(a)
    # A snapshot copied under another machine's ref does not verify there (it is signed by a).
    tip = a.git("rev-parse", f"refs/hive/presence/{a.id}").strip()
    a.git("push", "--quiet", "origin", f"{tip}:refs/hive/presence/{'f' * 64}")
    b.ok("sync")
    assert [r["machine"] for r in b.json("who")] == [a.id]
