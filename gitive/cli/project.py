"""``gitive project``: who belongs to the current project, and confirming them."""

from __future__ import annotations

import typer

from gitive.cli.output import console, emit_json
from gitive.cli.person import passphrase_stdin, signer_if_any

app = typer.Typer(help="Project membership: who reviews and receives this project's lessons, and keeping a "
                       "project's identity when its remote moves.\n\n"
                       "Example: gitive project confirm bob",
                  invoke_without_command=True)


@app.callback()
def show(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """List the project's owners, members and pending members.

    Example: gitive project --json
    """
    if ctx.invoked_subcommand:
        return 0
    from gitive.index import project_links
    from gitive.index import projects as project_index
    from gitive.index.refresh import fresh_index
    from gitive.team import projects
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        pid = hive.project_id
        people = project_index.people(conn, pid)
        confirmers = project_index.who_confirms(conn, pid)
        names = project_links.names(conn, hive.team_id, pid)
        moved = project_links.moved_from(hive)
    if as_json:
        emit_json({"project": pid, "label": projects.project_label(hive.project), "people": people,
                   "confirmed_by": confirmers, "also_known_as": [n["to"] for n in names],
                   "moved_from": moved[0] if moved else None})
        return 0
    console.print(f"Project {projects.project_label(hive.project)} ({pid[:12]})")
    for n in names:
        console.print(f"  also known as {n['label'] or '?'} ({n['to'][:12]}), linked by {n['person']}")
    if moved:
        console.print(f"[yellow]This repository's remote changed[/]: it was {moved[1] or 'project'} "
                      f"({moved[0][:12]}). Its lessons, owners and members stay with that id until an admin runs "
                      "`gitive project move`; `gitive project move --keep-new` starts afresh instead.")
    by = f" by {', '.join(confirmers)}" if confirmers else " by an admin"
    for person, info in sorted(people.items()):
        status = ("confirmed" if info["confirmed"]
                  else f"[yellow]pending[/] (`gitive project confirm {person}`{by})")
        console.print(f"  {person:<16} {info['role']:<7} {status}")
    console.print("Membership decides review authority and routing; anyone who can read the repository can "
                  "read its project lessons.")
    return 0


@app.command("confirm")
def confirm(
    person: str = typer.Argument(..., help="The person to confirm."),
    owner: bool = typer.Option(False, "--owner", help="Make them an owner too."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Confirm a person as a member (or owner) of this project; its owners and the team's admins only.

    Signed with your person key: a confirmation decides whose reviews count for this project's lessons.

    Example: gitive project confirm bob
    """
    from gitive.index.membership import confirm as do_confirm
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    gate.require_person("confirming a project member", scripted=stdin)
    hive = open_hive()
    what = "an owner" if owner else "a member"
    if not stdin and not typer.confirm(f"Confirm {person} as {what} of this project, signed as yourself?",
                                       default=False):
        console.print("nothing signed")
        return 0
    with fresh_index(hive) as (conn, _):
        signer = signer_if_any(f"to confirm {person}", stdin)
        do_confirm(hive, conn, person, owner, signer)
    console.print(f"confirmed {person}{' as owner' if owner else ''}; `gitive sync` shares it")
    return 0


@app.command("move")
def move(
    old: str = typer.Option("", "--from", help="The project id this repository had before its remote changed "
                                               "(default: the one gitive saw last here)."),
    keep_new: bool = typer.Option(False, "--keep-new", help="Do not link: this repository is a new project "
                                                           "(forgets the old id here; signs nothing)."),
    as_json: bool = typer.Option(False, "--json", help="Print the record written as JSON."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Keep this project's lessons, owners and members after its remote URL changed; team admins only.

    Signs a link from the old project id to the id of the current remote with your person key: every reader
    then reads this repository as the old project. Run it after `git remote set-url` (a repository moved to
    another host, or renamed).

    Example: gitive project move
    """
    from gitive.core.clock import now_ms
    from gitive.errors import GitiveError
    from gitive.index import project_links
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    hive = open_hive()
    if keep_new:
        (hive.common_dir / "gitive" / "project-moved").unlink(missing_ok=True)
        console.print(f"this repository is project {hive.project_id[:12]} from now on; nothing was signed")
        return 0
    with fresh_index(hive) as (conn, _):
        moved = project_links.moved_from(hive)
        old = old.strip() or (moved[0] if moved else "")
        if not old:
            raise GitiveError("gitive saw no other id for this repository; give the old one with --from ID")
        project_links.check_id(old)
        gate.require_person("linking a moved project", scripted=stdin)
        if not stdin and not typer.confirm(f"Link project {old[:12]} to this repository's remote, signed as "
                                           "yourself?", default=False):
            console.print("nothing signed")
            return 0
        signer = signer_if_any("to link a moved project", stdin)
        done = project_links.link(hive, conn, old, signer, now_ms())
    if as_json:
        emit_json({"record": done})
        return 0
    console.print(f"linked: this repository reads as project {old[:12]} again; `gitive sync` shares it")
    return 0
