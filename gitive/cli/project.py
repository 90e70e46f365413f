"""``gitive project``: who belongs to the current project, and confirming them."""

from __future__ import annotations

import typer

from gitive.cli.output import console, emit_json
from gitive.cli.person import passphrase_stdin, signer_if_any

app = typer.Typer(help="Project membership: who reviews and receives this project's lessons.\n\n"
                       "Example: gitive project confirm bob",
                  invoke_without_command=True)


@app.callback()
def show(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """List the project's owners, members and pending members.

    Example: gitive project --json
    """
    if ctx.invoked_subcommand:
        return 0
    from gitive.index import projects as project_index
    from gitive.index.refresh import fresh_index
    from gitive.team import projects
    from gitive.team.hive import open_hive

    hive = open_hive()
    pid = projects.project_id(hive.project)
    with fresh_index(hive) as (conn, _):
        people = project_index.people(conn, pid)
        confirmers = project_index.who_confirms(conn, pid)
    if as_json:
        emit_json({"project": pid, "label": projects.project_label(hive.project), "people": people,
                   "confirmed_by": confirmers})
        return 0
    console.print(f"Project {projects.project_label(hive.project)} ({pid[:12]})")
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
