"""What counts as a miss, with real ``gitive-hook`` processes and alice's real daemon.

benchmarks/hook.py once reported "lesson in 27/30" with no ``delivery.missed`` for the other three and read it
as silent drops. They were not: those rounds edited files that only proposed (unreviewed) lessons cite, which
are owed nothing. Here a file only a proposed lesson cites is edited next to one a verified lesson cites: the
first brings nothing and records nothing, and the count (``testing.deliveries``) calls it "nothing due", not a
miss; the second brings its lesson. A due item that neither arrives nor is recorded is counted silent.
"""

from __future__ import annotations

from testing import live
from testing.deliveries import Tally, cited_by_verified, recorded
from testing.harness.team import Team

ONLY_PROPOSED = "README.md"


def test_an_edit_of_a_file_only_proposed_lessons_cite_is_owed_nothing_and_counted_so(team: Team) -> None:
    team.bob.ok("lessons", "propose", "--kind", "Gotcha", "--text", "README.md is generated; edit docs/ instead.",
                "-e", f"file:{ONLY_PROPOSED}")
    team.bob.ok("sync")
    team.alice.ok("sync")
    settings = team.lesson("settings")
    cited = cited_by_verified(team.alice.clone / ".git" / "gitive" / "index.sqlite")
    assert settings.file in cited and ONLY_PROPOSED not in cited
    tally = Tally("lesson for the edited file")
    with live.real_daemon(team.alice, interval=1):
        for session, path in (("due-1", settings.file), ("none-1", ONLY_PROPOSED)):
            live.hook_process(team.alice, "session-start", live.session_start(team.alice, session))
            run = live.hook_process(team.alice, "post-tool", live.edit(team.alice, session, path))
            assert run.code == 0, run.err
            misses = recorded(team.alice.home, session)
            tally.add(session, path in cited, "<team-memory " in run.out, misses)
            if path == settings.file:
                assert settings.short in run.out, run.out
            else:
                assert "<team-memory " not in run.out and not misses, (run.out, misses)
    assert (tally.delivered, tally.not_due, tally.silent, tally.unexpected) == (1, 1, 0, 0), tally.line()
    assert tally.ok


def test_a_due_item_neither_delivered_nor_recorded_is_counted_silent() -> None:
    tally = Tally("queued message")
    tally.add("round 0", True, True, [])
    tally.add("round 1", True, False, [{"action": "delivery.missed", "reason": "session-locked"}])
    tally.add("round 2", True, False, [])
    assert (tally.delivered, tally.recorded, tally.silent) == (1, 1, 1)
    assert not tally.ok and "SILENT in round 2" in tally.line() and "session-locked 1" in tally.line()
    tally.silent, tally.silent_rounds = 0, []
    assert not tally.ok  # the recorded miss must still be made good within two calls
    tally.late = 1
    assert tally.ok
