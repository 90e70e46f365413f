"""Several recipients per message, mail search (CLI and the library the MCP tool uses), and advisory file
claims: published in presence, shown by ``gitive who``, respected by overlap notices. In-process, three
machines around a bare remote."""

from __future__ import annotations

import pytest

from gitive.daemon import claims, mailbox
from gitive.daemon import db as daemon_db
from gitive.team.hive import open_hive
from testing import live
from testing.machines import Machine, one_line_error
from tests.daemon.test_mailbox import next_call, start_session


@pytest.fixture
def three(trio: list[Machine]) -> list[Machine]:
    """a, b and c, each with one live session editing ``src/app.py``, published and seen by all."""
    for m, session in zip(trio, ("sa", "sb", "sc"), strict=True):
        start_session(m, session)
        live.publish_and_sync(m)
    for m in trio:
        live.publish_and_sync(m)
    return trio


def test_one_message_reaches_several_sessions_once_each(three: list[Machine]) -> None:
    a, b, c = three
    sent = a.json("send", "bob/b-claude, carol/c-claude,bob/b-claude", "release at five?", "--from", "alice/a-claude")
    assert sorted(r["session"] for r in sent["recipients"]) == ["b-claude", "c-claude"]
    for m in (b, c):
        live.publish_and_sync(m)
        [(message, _session, state)] = live.inbox(m)
        assert (message, state) == (sent["id"], "queued")
    # an agent may name several sessions, never a group
    one_line_error(a.run("send", "bob/b-claude,carol/*", "x", "--from", "alice/a-claude"), "not a group")
    one_line_error(a.run("send", ",".join(["bob/b-claude"] * 21), "x", "--from", "alice/a-claude"), "at most 20")


def test_search_finds_received_and_sent_mail_and_nothing_else(three: list[Machine]) -> None:
    a, b, c = three
    b.json("send", "alice/a-claude", "the refresh token rotation broke staging", "--from", "bob/b-claude")
    c.json("send", "bob/b-claude", "the token rotation is carol's business with bob", "--from", "carol/c-claude")
    a.json("send", "bob/b-claude", "which rotation schedule did you pick?", "--from", "alice/a-claude")
    live.publish_and_sync(a)
    found = a.json("inbox", "--search", "rotation")
    assert sorted((m["direction"], m["from"]) for m in found) == [("received", "bob/b-claude"),
                                                                 ("sent", "alice/a-claude")]
    assert all("[rotation]" in m["snippet"] for m in found)  # the match is marked in the snippet
    assert a.json("inbox", "--search", "refresh stag")[0]["from"] == "bob/b-claude"  # words are prefixes
    assert a.json("inbox", "--search", "carol business") == []  # mail between others is not searched
    assert "no message matches" in a.ok("inbox", "--search", "nothing-like-this").out
    one_line_error(a.run("inbox", "--search", "  ()*  "), "say what to search for")
    # FTS syntax in the query is only words to it
    assert a.json("inbox", "--search", 'rotation" OR "carol') == []


def test_search_is_incremental(three: list[Machine]) -> None:
    a, b, _ = three
    b.json("send", "alice/a-claude", "first about pagination", "--from", "bob/b-claude")
    live.publish_and_sync(a)
    assert len(a.json("inbox", "--search", "pagination")) == 1
    b.json("send", "alice/a-claude", "second about pagination", "--from", "bob/b-claude")
    live.publish_and_sync(a)
    assert len(a.json("inbox", "--search", "pagination")) == 2
    with live.on(a), daemon_db.connect() as db:
        assert db.execute("SELECT count(*) FROM mail_fts").fetchone()[0] == 2  # nothing added twice


def test_a_claim_is_published_shown_and_respected_by_overlap_notices(three: list[Machine]) -> None:
    a, b, _ = three
    with live.on(a):
        hive = open_hive(a.clone)
        from gitive.mcp.claims import claim_files

        done = claim_files(a.clone, paths=["src/api.py", str(a.clone / "src/app.py")], minutes=20,
                           note="auth refactor")
    assert [c["path"] for c in done["claims"]] == ["src/api.py", "src/app.py"]
    assert done["claimed_by_others"] == []
    live.publish_and_sync(a)
    b.ok("sync")
    who = b.json("who")
    [row] = [r for r in who if r["address"] == "alice/a-claude"]
    assert [c["path"] for c in row["claims"]] == ["src/api.py", "src/app.py"]
    assert "claims src/api.py until" in b.ok("who").out
    # b edits the claimed file a has not touched yet: b is told, with the note
    assert "has claimed" not in live.hook(b, "post-tool", live.edit(b, "sb", "src/api.py"))  # not yet known
    live.publish_and_sync(b)
    with live.serving(b):
        context = next_call(b, "sb")
    assert context is not None and "has claimed src/api.py until" in context and "auth refactor" in context
    # b claiming a file a claimed is allowed (advisory) and says who holds it
    with live.on(b):
        from gitive.mcp.claims import claim_files

        theirs = claim_files(b.clone, paths=["src/api.py"], minutes=5)
    assert [(c["path"], c["by"]) for c in theirs["claimed_by_others"]] == [("src/api.py", "alice/a-claude")]
    # releasing takes it off presence
    with live.on(a):
        assert claim_files(a.clone, paths=["src/api.py", "src/app.py"], minutes=0)["claims"] == []
    live.publish_and_sync(a)
    b.ok("sync")
    [row] = [r for r in b.json("who") if r["address"] == "alice/a-claude"]
    assert row["claims"] == []
    assert hive.team_id == a.team_id


def test_claims_expire_and_refuse_bad_input(three: list[Machine]) -> None:
    a, *_ = three
    with live.on(a), daemon_db.connect() as db:
        held = claims.claim(db, "a-claude", ["src/x.py"], 1, now=1_000)
        assert [c["path"] for c in held] == ["src/x.py"]
        assert claims.held(db, "a-claude", now=1_000 + 60_001) == []
        for paths, minutes, words in ((["../etc/passwd"], 5, "path in the repository"), ([], 5, "which files"),
                                      (["a"] * 33, 5, "at most 32"), (["a"], 481, "1 to 480")):
            with pytest.raises(Exception, match=words):
                claims.claim(db, "a-claude", paths, minutes)
        assert claims.claim(db, "a-claude", [".env", "src/ok.py"], 5)[0]["path"] == "src/ok.py"  # never published


def test_search_library_reads_only_this_persons_mail(three: list[Machine]) -> None:
    a, b, c = three
    c.json("send", "bob/b-claude", "quarterly numbers", "--from", "carol/c-claude")
    live.publish_and_sync(a)
    with live.on(a):
        assert mailbox.search_for(open_hive(a.clone), "quarterly") == []
    live.publish_and_sync(b)
    with live.on(b):
        assert [m["from"] for m in mailbox.search_for(open_hive(b.clone), "quarterly")] == ["carol/c-claude"]
