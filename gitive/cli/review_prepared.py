"""``gitive review prepared [TASK]``: the owner's answer to the anchor's drafts: approve, edit or skip."""

from __future__ import annotations

from typing import Any

import typer

from gitive.cli.output import console, emit_json
from gitive.cli.person import passphrase_stdin, signer_if_any


def _show(hive: Any, w: Any) -> None:
    from rich.markup import escape

    from gitive.anchor.prepared import reviewing, tasks

    task, draft = w.task, w.draft
    stat, tests = draft.get("stat") or {}, draft.get("tests") or {}
    console.rule(f"{tasks.branch_name(task)}  (task {task['id'][:12]}, attempt {draft['attempt']})")
    console.print(escape(task["brief"].strip()[:1500]))
    console.print(f"\nbase {draft['base']['branch']} at {draft['base']['commit'][:12]}; "
                  f"{stat.get('files', 0)} files, +{stat.get('insertions', 0)} -{stat.get('deletions', 0)}; "
                  f"diff {draft['diff_hash'][:16]}")
    if tests:
        console.print(f"tests: {escape(tests['command'])}: exit {tests['before']} before, {tests['after']} after")
    if draft.get("fixes"):
        console.print("fixes: " + escape(", ".join(draft["fixes"][:10])))
    console.print(escape(reviewing.show(hive, draft)), highlight=False, markup=False)


def _answer(hive: Any, conn: Any, w: Any, choice: str, note: str, edit: str | None, stdin: bool,
            asked: bool) -> dict[str, Any] | None:
    from gitive.anchor.prepared import reviewing

    reviewing.check(hive, conn, w.task)  # before the confirmation and the passphrase
    commit = edits = None
    if choice == "edit":
        commit, edits = reviewing.prepare_edit(hive, w.task, w.draft, edit or "HEAD")
    verb = {"approve": "approval", "edit": "approval of your edit", "skip": "skip"}[choice]
    if asked and not typer.confirm(f"Sign this {verb} as yourself?", default=False):
        console.print("nothing signed")
        return None
    signer = signer_if_any("to sign your review", stdin)
    if commit is not None:
        reviewing.push_edit(hive, w.draft, commit)
    done = reviewing.sign(hive, conn, w.task, w.draft, approved=choice != "skip",
                          note=note if choice != "skip" else f"skip{': ' + note if note else ''}",
                          signer=signer, edits=edits)
    out = {"task": w.task["id"], "answer": choice, "review": done}
    if commit is not None:
        out["lesson"] = reviewing.correction(hive, conn, w.task, w.draft, commit)
    return out


def prepared(
    task: str | None = typer.Argument(None, help="A task id (or prefix) or its hive/ branch; default: every draft "
                                                 "waiting for you."),
    approve: bool = typer.Option(False, "--approve", help="Approve the draft as it is (one task)."),
    edit: str | None = typer.Option(None, "--edit", help="Approve your own commit over the draft instead (one "
                                                         "task), e.g. --edit my-fix."),
    skip: bool = typer.Option(False, "--skip", help="Skip the draft (counted for your digest)."),
    note: str = typer.Option("", "--note", help="Why, for the record."),
    stdin: bool = passphrase_stdin(),
    as_json: bool = typer.Option(False, "--json", help="Print what was signed as JSON."),
) -> int:
    """Review the anchor's drafts at a terminal: see the diff, then \\[a]pprove, \\[e]dit (your own commit over
    the draft) or \\[s]kip. The review is signed with your person key and bound to the exact change and its base.

    Example: gitive review prepared 3f1c9a0b --approve --note "matches the bug report"
    """
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    given = _one_answer(task, approve=approve, edit=edit is not None, skip=skip)
    gate.require_person("reviewing prepared work", scripted=stdin)
    hive = open_hive()
    syncing.run(hive)
    done: list[dict[str, Any]] = []
    with fresh_index(hive) as (conn, _):
        found = _waiting(hive, conn, task)
        if not found:
            console.print("no drafts waiting for you")
            return 0
        for w in found:
            answer = _review_one(hive, conn, w, given, note, edit, stdin, as_json)
            if answer == "quit":
                break
            if answer:
                done.append(answer)
    syncing.run(hive)
    if as_json:
        emit_json({"answers": done})
    return 0


def _one_answer(task: str | None, **flags: bool) -> str | None:
    """The one answer given on the command line (``approve``, ``edit``, ``skip``), or None to ask for each."""
    from gitive.errors import GitiveError

    given = [c for c, on in flags.items() if on]
    if len(given) > 1:
        raise GitiveError("give one of --approve, --edit and --skip")
    if given and task is None:
        raise GitiveError(f"--{given[0]} answers one task: name it (`gitive review prepared` lists them)")
    return given[0] if given else None


def _waiting(hive: Any, conn: Any, task: str | None) -> list[Any]:
    """The drafts waiting for this person: the named task's, or every unanswered one."""
    from gitive.anchor.prepared import reviewing, tasks
    from gitive.errors import GitiveError
    from gitive.index import deciding

    person, _ = deciding.me_as_member(conn, hive.me)
    found = reviewing.waiting(conn, person, hive.project_id, everything=task is not None)
    if task is not None:
        wanted = tasks.resolve(conn, task)["id"]
        found = [w for w in found if w.task["id"] == wanted]
        if not found:
            raise GitiveError(f"task {wanted[:12]} has no draft waiting for review")
    return [w for w in found if task is not None or not w.answered]


def _review_one(hive: Any, conn: Any, w: Any, given: str | None, note: str, edit: str | None, stdin: bool,
                as_json: bool) -> dict[str, Any] | str | None:
    """Show one draft and sign the answer given or asked for: what was signed, None (later, or nothing
    signed) or ``"quit"``."""
    from gitive.anchor.prepared import reviewing

    reviewing.fetch(hive, w.draft)
    if not as_json:
        _show(hive, w)
    choice = given or _ask()
    if choice in ("quit", "later"):
        return "quit" if choice == "quit" else None
    commit = edit if given else (typer.prompt("your commit over the draft", default="HEAD")
                                 if choice == "edit" else None)
    answer = _answer(hive, conn, w, choice, note if given else _note(choice), commit, stdin, asked=not stdin)
    if answer and not as_json:
        console.print(f"{answer['answer']} signed for {w.task['id'][:12]}; the anchor sees it after "
                      "the next sync")
    return answer


def _ask() -> str:
    found = typer.prompt("[a]pprove, [e]dit, [s]kip, [l]ater, [q]uit", default="l").strip().lower()[:1]
    return {"a": "approve", "e": "edit", "s": "skip", "q": "quit"}.get(found, "later")


def _note(choice: str) -> str:
    return str(typer.prompt("why (for the record)" if choice == "skip" else "note", default=""))
