"""Task-start recall: a question worded as the task being started, expanded with the session's own context read
from a real checkout (its branch, the files changed in the work tree and on the branch, its commit subjects)
and the file names in the prompt."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitive.index.refresh import fresh_index
from gitive.lessons import recall, recall_context
from gitive.lessons.propose import propose
from gitive.lessons.review import review
from gitive.store.repo import open_repo
from gitive.team.hive import Hive, open_hive
from gitive.team.projects import project_id
from testing import fixtures, people


@pytest.fixture
def hive(bare_remote: Path, make_clone: Callable[[str | Path, str], Path], monkeypatch: pytest.MonkeyPatch) -> Hive:
    clone = make_clone(bare_remote, "alice")
    for path in ("dispatch/integrations/outbound.py", "dispatch/notify/sms.py", "dispatch/orders/models.py"):
        fixtures.commit_file(clone, path, f"# {path}\n")
    fixtures.run_git(["push", "--quiet", "origin", "main"], cwd=clone)
    monkeypatch.chdir(clone)
    assert people.run_deciding(["init", "--person", "alice"]) == 0
    return open_hive(clone)


def _add(hive: Hive, text: str, applicability: str, path: str) -> str:
    with fresh_index(hive) as (conn, _):
        made = propose(hive, conn, kind="Gotcha", text=text, applicability=applicability, evidence=[f"file:{path}"])
        review(hive, conn, made.id, approved=True, note="", signer=people.person_key())
    return made.id


def _find(hive: Hive, query: str, **kwargs: Any) -> list[str]:
    with fresh_index(hive) as (conn, _):
        return [r["id"] for r in recall.search(conn, query, project=project_id(hive.project), semantic=None,
                                               **kwargs)]


def _lessons(hive: Hive) -> tuple[str, str]:
    backoff = _add(hive, "Status callbacks to merchants back off exponentially with jitter and stop on 4xx; fixed "
                   "retries kept a recovering server down.", "Sending or retrying callbacks to merchants.",
                   "dispatch/integrations/outbound.py")
    sms = _add(hive, "SMS tasks are delivered again after a worker restart: log each send and skip repeats.",
               "Any task that texts a customer.", "dispatch/notify/sms.py")
    _add(hive, "Money is stored as integer cents.", "Adding price fields.", "dispatch/orders/models.py")
    return backoff, sms


def test_the_branch_and_changed_files_of_the_checkout_find_the_lesson(hive: Hive) -> None:
    backoff, _ = _lessons(hive)
    clone = Path(hive.project.workdir)
    fixtures.run_git(["checkout", "--quiet", "-b", "feature/FL-812-merchant-callback-backoff"], cwd=clone)
    fixtures.commit_file(clone, "dispatch/integrations/outbound.py", "# retries\n", message="FL-812: wip callbacks")
    (clone / "dispatch/integrations/outbound.py").write_text("# retries, edited\n")
    context = recall_context.from_repo(open_repo(clone))
    assert context is not None
    assert context.branch == "feature/FL-812-merchant-callback-backoff"
    assert context.changed == ("dispatch/integrations/outbound.py",)
    assert context.commits == ("FL-812: wip callbacks",)
    assert recall_context.phrasing(context) == "merchant callback backoff callbacks"  # no ticket ids, no "wip"
    question = "implement the thing from the ticket"
    assert backoff not in _find(hive, question)[:1]
    assert _find(hive, question, context=context)[:1] == [backoff]


def test_context_is_used_only_for_a_task_and_prompt_file_names_always(hive: Hive) -> None:
    backoff, sms = _lessons(hive)
    context = recall_context.SessionContext("feature/merchant-callback-backoff", ("dispatch/integrations/outbound.py",))
    symptom = "customers got the same text twice after a restart"
    assert _find(hive, symptom, context=context)[:1] == [sms]  # a symptom is not expanded with the branch
    assert _find(hive, "something is off in dispatch/notify/sms.py")[:1] == [sms]  # a file named in the prompt
    assert recall_context.prompt_files("see dispatch/notify/sms.py and settings.py, not https://x.test/a.py") == [
        "dispatch/notify/sms.py", "settings.py"]
    assert recall_context.branch_words("main") == "" and recall_context.branch_words("fix/JIRA-7_sms-dupes") == "sms dupes"
    assert backoff in _find(hive, "add the new thing", context=context)[:1]


def test_a_checkout_on_main_gives_no_branch_words_or_commits(hive: Hive) -> None:
    context = recall_context.from_repo(open_repo(Path(hive.project.workdir)))
    assert context is not None and context.commits == () and recall_context.branch_words(context.branch) == ""
