"""``gitive export``: the verified records this machine reads, as JSON Lines a tool can take, and nothing
else (not a forger's entry, not a retracted lesson's text); a bad argument or destination writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from testing.lessons import confirmed, propose
from testing.machines import Machine, one_line_error

RETRACT_PROMPT = "Retract"


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_export_writes_verified_records_with_lesson_state_and_text(founder: Machine, tmp_path: Path) -> None:
    kept = propose(founder, "Regenerate the client after editing api.proto")
    gone = propose(founder, "Run the linter twice")
    waiting = propose(founder, "Pin protoc to 25.1")
    confirmed(founder, "review", "approve", kept)
    confirmed(founder, "retract", gone, "--reason", "wrong", prompt=RETRACT_PROMPT)
    lines = _lines(founder.ok("export").out)
    assert all(line["v"] == 1 and line["person"] == "alice" for line in lines)
    lessons = {line["record"]["id"]: line["lesson"] for line in lines if line["kind"] == "lesson"}
    assert lessons[kept]["state"] == "verified" and lessons[kept]["text"].startswith("Regenerate the client")
    assert lessons[waiting]["state"] == "proposed"
    assert lessons[gone] == {"state": "retracted", "reviewer": None}  # no text once retracted
    kinds = {line["kind"] for line in lines}
    assert {"lesson", "review", "tombstone"} <= kinds and not kinds & {"member", "invite", "message"}
    assert [line["at"] for line in lines] == sorted(line["at"] for line in lines)
    only = _lines(founder.ok("export", "--kind", "review").out)
    assert [line["record"]["about"] for line in only] == [kept]
    assert founder.ok("export", "--since", "2099-01-01").out == ""
    assert len(_lines(founder.ok("export", "--since", "1d").out)) == len(lines)


def test_a_strangers_entry_is_not_exported(founder: Machine) -> None:
    """A ref that arrived by fetch, signed by a key the roster never admitted: refused on ingest, so not exported."""
    from nacl.signing import SigningKey

    from gitive.core.keys import machine_id
    from gitive.store import refs
    from testing import hostile

    stranger = SigningKey.generate()
    who = machine_id(stranger)
    record = {"type": "team", "name": "a stranger's note", "founder": who}
    body = {"v": 2, "author": who, "log": "team", "scope": {"team": True}, "seq": 1, "at": 1, "record": record}
    commit = hostile.forged_entry(founder.repo, stranger, founder.team_id, body, None)
    founder.repo.references.create(f"refs/hive-remotes/origin/logs/{who}/team", commit)
    exported = _lines(founder.ok("export", "--kind", "team").out)
    assert exported and all(line["author"] != who for line in exported)
    assert refs.tip(founder.repo, f"refs/hive-remotes/origin/logs/{who}/team") == commit  # it was there to read


def test_export_to_a_file_is_whole_or_not_at_all(founder: Machine, tmp_path: Path) -> None:
    propose(founder, "Regenerate the client after editing api.proto")
    out = tmp_path / "records.jsonl"
    done = founder.ok("export", "--out", str(out))
    assert "exported 1 record(s)" in done.err and len(_lines(out.read_text())) == 1
    one_line_error(founder.run("export", "--kind", "lessons"), "no record kind 'lessons'", "known:")
    one_line_error(founder.run("export", "--since", "yesterday"), "is not a time")
    missing = tmp_path / "no" / "such" / "dir" / "x.jsonl"
    one_line_error(founder.run("export", "--out", str(missing)), "cannot write", "nothing was written")
    assert not missing.parent.exists() and not list(tmp_path.glob(".*.tmp"))
