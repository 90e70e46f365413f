"""``gitive standing list|create|revoke``: standing approvals, a person's decisions at a terminal."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import typer

from gitive.cli.output import console, emit_json
from gitive.cli.person import passphrase_stdin, signer_if_any

app = typer.Typer(help="Standing approvals: a kind of prepared change the anchor may land without asking, inside "
                       "a perimeter, for at most 30 days.\n\nExample: gitive standing list",
                  no_args_is_help=True)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


@app.command("list")
def listing(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Every standing approval: active, expired, suspended (and why), revoked, or refused by readers (and why).

    Example: gitive standing list --json
    """
    from gitive.anchor.prepared import standing
    from gitive.core.clock import now_ms
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        found = standing.all_approvals(conn, hive.team_id, now_ms())
    if as_json:
        emit_json({"standing": found})
        return 0
    if not found:
        console.print("no standing approvals")
    for a in found:
        why = a["problem"] or (a["ended"] or {}).get("reason") or ""
        p = a["perimeter"]
        console.print(f"{a['id'][:12]}  {a['status']:<9} {a['kind']} by {a['sponsor']}, expires {_when(a['expires'])}"
                      f"{': ' + why if why else ''}\n              paths {', '.join(p['paths'])}; changes "
                      f"{', '.join(p['changes']) or 'any'}; at most {p['max_lines']} lines; checks "
                      f"{', '.join(p['checks']) or 'none'}")
    return 0


@app.command("create")
def create(
    kind: str = typer.Option(..., "--kind", help="The kind of task it covers, e.g. dep-bump-patch."),
    path: list[str] = typer.Option(..., "--path", help="A glob every changed path must match (repeatable): "
                                                       "poetry.lock, requirements/*.txt, src/**/*.py."),
    change: list[str] = typer.Option([], "--change", help="A change type every file's change must be "
                                                          "(repeatable): version-lines, additions, text."),
    max_lines: int = typer.Option(20, "--max-lines", help="Lines added plus removed, at most."),
    check: list[str] = typer.Option([], "--check", help="A command that must pass on the draft and after it "
                                                        "lands (repeatable)."),
    days: int = typer.Option(14, "--days", help="It expires after this many days (at most 30)."),
    stdin: bool = passphrase_stdin(),
    as_json: bool = typer.Option(False, "--json", help="Print the record as JSON."),
) -> int:
    """Grant a standing approval (a person at a terminal, signed with your person key).

    Example: gitive standing create --kind dep-bump-patch --path poetry.lock --change version-lines --days 14
    """
    from gitive.anchor.prepared import standing
    from gitive.core.clock import now_ms
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    gate.require_person("granting a standing approval", scripted=stdin)
    perimeter = standing.Perimeter(tuple(path), tuple(change), max_lines, tuple(check))
    hive = open_hive()
    syncing.run(hive)  # the record it is earned from is the anchor's: fetch it first
    with fresh_index(hive) as (conn, _):
        problem = standing.perimeter_problem(perimeter.record())
        if problem:
            from gitive.errors import GitiveError

            raise GitiveError(f"this perimeter cannot be granted: {problem}")
        if not stdin and not typer.confirm(f"Let the anchor land {kind} changes inside this perimeter for {days} "
                                           "days without asking you?", default=False):
            console.print("nothing signed")
            return 0
        done = standing.create(hive, conn, kind=kind, perimeter=perimeter, days=days,
                               signer=signer_if_any("to sign a standing approval", stdin), now=now_ms())
    syncing.run(hive)
    _done(done, as_json, f"standing approval {done['id'][:12]} for {kind}, until {_when(done['expires'])}")
    return 0


@app.command("revoke")
def revoke(
    ident: str = typer.Argument(..., help="The standing approval's id (or a prefix of at least 4)."),
    reason: str = typer.Option("", "--reason", help="Why, for the record."),
    stdin: bool = passphrase_stdin(),
    as_json: bool = typer.Option(False, "--json", help="Print the record as JSON."),
) -> int:
    """Revoke a standing approval at once (its sponsor or an admin, signed with your person key).

    Example: gitive standing revoke 3f1c9a0b --reason "the lockfile format changed"
    """
    from gitive.anchor.prepared import standing
    from gitive.core.clock import now_ms
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    gate.require_person("revoking a standing approval", scripted=stdin)
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        done = standing.revoke(hive, conn, ident, reason, signer_if_any("to sign the revocation", stdin), now_ms())
    syncing.run(hive)
    _done(done, as_json, f"revoked {done['standing'][:12]}")
    return 0


def _done(record: dict[str, Any], as_json: bool, line: str) -> None:
    if as_json:
        emit_json({"record": record})
    else:
        console.print(f"{line}; `gitive sync` shares it (done now if the remote was reachable)")


@app.command("outside")
def outside(
    add: list[str] = typer.Option([], "--add", help="A path glob to add to this project's Outside tier "
                                                    "(repeatable; an admin, with a gesture)."),
    stdin: bool = passphrase_stdin(),
    as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
) -> int:
    """The team's own Outside paths for this project: never changed by the anchor, whatever is approved.

    Without --add, list the records and whether each counts. Paths only grow.

    Example: gitive standing outside --add 'deploy/**' --add 'infra/*.tf'
    """
    from gitive.anchor.prepared import outside_paths
    from gitive.core.clock import now_ms
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    hive = open_hive()
    if add:
        gate.require_person("adding Outside paths", scripted=stdin)
        with fresh_index(hive) as (conn, _):
            done = outside_paths.add(hive, conn, list(add), signer_if_any("to sign Outside paths", stdin), now_ms())
        syncing.run(hive)
        _done(done, as_json, f"Outside for this project now also: {', '.join(done['paths'])}")
        return 0
    with fresh_index(hive) as (conn, _):
        found = outside_paths.all_records(conn, hive.team_id)
    if as_json:
        emit_json({"outside": found})
        return 0
    if not found:
        console.print("no Outside paths recorded by the team (the built-in CI, settings and CODEOWNERS list holds)")
    for r in found:
        state = "counts" if r["counted"] else f"not counted: {r['problem']}"
        console.print(f"{r['person']}  {r['repo'][:12]}  {', '.join(map(str, r.get('paths') or []))}  ({state})")
    return 0
