"""Real Claude Code under load with the product's own hook budget (no ``GITIVE_HOOK_BUDGET_MS``): the rest of
the rig gives hooks 3 s so its claims are about the harness, these sessions check the budget users get.

On a machine with 2 busy processes per core the interpreter alone can take 200 ms before gitive's code runs;
the budget counts from gitive's start and SessionStart gets most of the harness's 5 s timeout, so the card and
the edited file's lesson reach the model in every session.
"""

from __future__ import annotations

from testing.harness import claude
from testing.harness.claims import CARD_HEAD, Claims, first_with
from testing.harness.script import Call, Script, Text
from testing.harness.server import ModelServer
from testing.harness.team import Team, install
from testing.load import cpu_load

SESSIONS = 3


def test_the_card_and_the_edit_lesson_arrive_at_the_default_budget_under_load(team: Team, model: ModelServer,
                                                                              claude_bin: object) -> None:
    install(team.alice, "claude")
    path = str(team.alice.clone / "src/app/settings.py")
    settings, card = team.lesson("settings"), team.card()
    seen: list[tuple[bool, bool, str]] = []
    with cpu_load(per_core=2, seconds=900) as load:
        for n in range(SESSIONS):
            old, new = ("# src/app/settings.py", "# settings") if n % 2 == 0 else ("# settings", "# src/app/settings.py")
            model.script = Script([Call("Edit", {"file_path": path, "old_string": old, "new_string": new}),
                                   Text("done")])
            run = claude.session(model, team.alice.clone, team.harness_home("claude"), team.alice.home,
                                 "Tidy the header comment of the settings module.", budget=None)
            views = run.views()
            first = views[0].joined() if views else ""
            # The card follows the files in play: after the first session's edit, the next sessions' cards
            # hold the edited file's lesson in place of the oldest of the five newest (and then the edit
            # brings nothing new). So: the head and five lessons in the first request, and the edited
            # file's lesson by the request after the edit at the latest.
            has_card = CARD_HEAD in first and first.count("<team-memory id=") >= 5 and card[0].text in first
            at = first_with(views, settings.text)
            seen.append((has_card, at is not None and at <= 1 and (n > 0 or at == 1),
                         f"exit {run.code}, {run.seconds:.1f} s, {len(views)} requests"))
    claims = Claims(run, "load" if load.count else "idle")
    cards, edits = sum(c for c, _, _ in seen), sum(e for _, e, _ in seen)
    detail = "; ".join(d for _, _, d in seen)
    claims.check(f"the card is in the first request ({cards} of {SESSIONS})", cards == SESSIONS, detail)
    claims.check(f"the edited file's lesson reaches the model by the request after the edit ({edits} of {SESSIONS})",
                 edits == SESSIONS, detail)
    claims.verify()
