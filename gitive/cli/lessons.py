"""``gitive lessons``: propose, list, show, search and supersede lessons."""

from __future__ import annotations

import sys

import typer

from gitive.cli import render
from gitive.cli.output import console, emit_json

app = typer.Typer(help="Lessons the team's agents learned: propose, list, show, search, supersede.\n\n"
                       "Example: gitive lessons search \"flaky payments test\" --files tests/test_pay.py",
                  no_args_is_help=True)

_KIND_HELP = "Convention, Correction, Gotcha, Decision, Routing or Preference."
_SEALED_HELP = ("Project scope: encrypt the lesson to the team's machines, for a project repository more public "
                "than the team (default: git config hive.sealed). Personal lessons are always sealed.")
_SYMPTOM_HELP = ("How the problem shows up (repeatable, at most 8): an error line, or a question this lesson "
                 "answers, worded as someone stuck would ask it.")


def _propose(kind: str, text: str, applicability: str, evidence: list[str], tags: list[str], scope: str,
             quote: str | None, speaker: str | None, about: str | None, supersedes: str | None,
             session: str | None, as_json: bool, symptoms: list[str] | None = None,
             sealed: bool | None = None) -> int:
    from gitive.daemon import outbound
    from gitive.daemon.own_sessions import session_label
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog
    from gitive.lessons.propose import make_quote, propose
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        old = catalog.resolve_id(conn, supersedes) if supersedes else None
        if session:
            session = session_label(hive, session)
        asked = {"kind": kind, "text": text, "applicability": applicability, "quote": make_quote(quote, speaker, about),
                 "evidence": list(evidence), "tags": list(tags), "scope": scope, "supersedes": old,
                 "session": session, "symptoms": list(symptoms or []), "sealed": sealed}
        if not sys.stderr.isatty():  # an agent or a script: outbound screening, as for `gitive send --from`
            outbound.screen_proposal(hive, session, asked)
        done = propose(hive, conn, **asked)
    if as_json:
        emit_json(done._asdict())
        return 0
    typer.echo(done.id)
    note = "proposed" if done.created else "already proposed (identical lesson)"
    typer.echo(f"# {note}; {done.scope} scope: readable by {done.audience}", err=True)
    if done.hearsay:
        typer.echo("# stored as hearsay: the quote's speaker is not the person it is about", err=True)
    typer.echo("# it is used once a person reviews it: `gitive review`", err=True)
    return 0


@app.command("propose")
def propose_cmd(
    kind: str = typer.Option(..., "--kind", help=_KIND_HELP),
    text: str = typer.Option(..., "--text", help="The lesson, at most 1,200 characters."),
    evidence: list[str] = typer.Option([], "--evidence", "-e",
                                       help="commit:REV, file:PATH[@REV], event:ID, message:ID or approval:ID."),
    applicability: str = typer.Option("", "--applicability", help="When it applies."),
    tag: list[str] = typer.Option([], "--tag", help="A tag (repeatable)."),
    scope: str = typer.Option("project", "--scope", help="personal, project or team."),
    sealed: bool | None = typer.Option(None, "--sealed/--no-sealed", help=_SEALED_HELP),
    quote: str | None = typer.Option(None, "--quote", help="The words a person said (Preference, Decision)."),
    speaker: str | None = typer.Option(None, "--speaker", help="Who said the quoted words."),
    about: str | None = typer.Option(None, "--about", help="Whom the quote is about, if not the speaker."),
    session: str | None = typer.Option(None, "--session", help="Proposing session's address, e.g. alice/api."),
    symptom: list[str] = typer.Option([], "--symptom", help=_SYMPTOM_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Propose a lesson (agents may; only a person can make it verified). Prints its id.

    Example: gitive lessons propose --kind Gotcha --text "Run make gen after editing api.proto"
    --evidence file:api.proto --evidence commit:HEAD --symptom "ImportError: cannot import name 'OrderV2'"

    Sealed (readable by the team's machines only): gitive lessons propose --sealed --kind Gotcha ...
    """
    return _propose(kind, text, applicability, evidence, tag, scope, quote, speaker, about, None, session, as_json,
                    symptom, sealed)


@app.command("supersede")
def supersede_cmd(
    old: str = typer.Argument(..., help="The id (or a prefix) of the lesson this one replaces."),
    kind: str = typer.Option(..., "--kind", help=_KIND_HELP),
    text: str = typer.Option(..., "--text", help="The new lesson text."),
    evidence: list[str] = typer.Option([], "--evidence", "-e", help="Evidence, as for propose."),
    applicability: str = typer.Option("", "--applicability", help="When it applies."),
    tag: list[str] = typer.Option([], "--tag", help="A tag (repeatable)."),
    scope: str = typer.Option("project", "--scope", help="personal, project or team."),
    sealed: bool | None = typer.Option(None, "--sealed/--no-sealed", help=_SEALED_HELP),
    quote: str | None = typer.Option(None, "--quote", help="The words a person said."),
    speaker: str | None = typer.Option(None, "--speaker", help="Who said them."),
    symptom: list[str] = typer.Option([], "--symptom", help=_SYMPTOM_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Propose a lesson that replaces another; the old one is superseded once the new one is verified.

    Example: gitive lessons supersede 3f1c9a0b --kind Convention --text "Use ruff, not flake8" -e file:pyproject.toml
    """
    return _propose(kind, text, applicability, evidence, tag, scope, quote, speaker, None, old, None, as_json,
                    symptom, sealed)


@app.command("list")
def list_cmd(
    state: list[str] = typer.Option([], "--state", help="Only these states (repeatable): proposed, held, "
                                                         "verified, rejected, superseded, retracted."),
    scope: str | None = typer.Option(None, "--scope", help="Only this scope."),
    limit: int = typer.Option(100, "--limit", min=1, help="At most this many."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """List lessons, newest first.

    Example: gitive lessons list --state proposed --state held
    """
    from gitive.errors import GitiveError
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog
    from gitive.team.hive import open_hive

    bad = [s for s in state if s not in catalog.STATES]
    if bad:
        raise GitiveError(f"unknown state {bad[0]!r}; use {', '.join(catalog.STATES)}")
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        found = catalog.listing(conn, states=tuple(state) or None, scope=scope, limit=limit)
    if as_json:
        emit_json(found)
    elif not found:
        console.print("no lessons")
    for lesson in [] if as_json else found:
        render.line(lesson)
    return 0


@app.command("show")
def show_cmd(
    lesson: str = typer.Argument(..., help="A lesson id or unambiguous prefix."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """Show one lesson: text, state, provenance, evidence (stale files flagged), history.

    Example: gitive lessons show 3f1c9a0b
    """
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog, evidence
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        found = catalog.get(conn, catalog.resolve_id(conn, lesson))
    found["stale"] = evidence.stale(hive.project, found["evidence"])
    if as_json:
        emit_json(found)
    else:
        render.full(found)
    return 0


@app.command("search")
def search_cmd(
    query: str = typer.Argument("", help="What you are looking for, in your own words."),
    files: list[str] = typer.Option([], "--files", help="Files you are working on (repeatable)."),
    proposed: bool = typer.Option(False, "--proposed", help="Include lessons not reviewed yet (labelled)."),
    rephrase: list[str] = typer.Option([], "--rephrase", help="Another wording of the question (repeatable, "
                                                               "up to 4); the rankings are fused."),
    limit: int = typer.Option(10, "--limit", min=1, max=100, help="At most this many."),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """Find the lessons most relevant to a question and the files in play (verified ones only by default).

    Example: gitive lessons search "tests hang on CI" --files tests/conftest.py --rephrase "pytest never exits"
    """
    from gitive.index.refresh import fresh_index
    from gitive.lessons import semantic
    from gitive.lessons.recall import search
    from gitive.team.hive import open_hive

    hive = open_hive()
    dense = semantic.for_repo(hive.project)
    with fresh_index(hive) as (conn, _):
        found = search(conn, query, files=files, project=hive.project_id,
                       include_proposed=proposed, limit=limit, repo=hive.project, rephrasings=rephrase,
                       semantic=dense)
    if dense is not None and dense.problem:
        typer.echo(f"# {dense.problem}", err=True)
    if as_json:
        emit_json(found)
    elif not found:
        console.print("no matching lessons" + ("" if proposed else " (verified only; --proposed for more)"))
    for lesson in [] if as_json else found:
        render.line(lesson)
    return 0
