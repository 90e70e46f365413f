"""``gitive server``: guard a bare repository that serves as a team's hive remote."""

from __future__ import annotations

from pathlib import Path

import typer

app = typer.Typer(
    help="Guard a bare repository that serves as a hive remote (run these on the server).\n\n"
         "Example: gitive server install-hook /srv/git/acme.git --team 3f1c9a0b5d7e2f4a6c8e0b1d3f5a7c9e",
    no_args_is_help=True,
)


@app.command("install-hook")
def install_hook(
    path: Path = typer.Argument(..., help="The server's bare repository, e.g. /srv/git/acme.git."),
    team: str | None = typer.Option(
        None, "--team", help="The team id (`gitive team --json` on a member's machine). Without it the "
                             "guard learns it from the founder's first push with `-o hive-team=<id>`."),
    anchor: list[str] = typer.Option([], "--anchor", help="The anchor option (repeatable, the anchor machines' "
                                                         "ids): refs/heads/hive/* take only the anchor's signed "
                                                         "drafts, and no other branch takes a commit carrying "
                                                         "the anchor's identity."),
) -> int:
    """Install the pre-receive guard that refuses unsigned, mis-signed or rewritten hive refs.

    A pre-receive hook already there is kept as pre-receive.legacy and run first.

    Example: gitive server install-hook /srv/git/acme.git --team 3f1c9a0b5d7e2f4a6c8e0b1d3f5a7c9e
    """
    from gitive.store import serverhook

    result = serverhook.install(path, team, anchor or None)
    typer.echo(f"installed the gitive guard at {result.hook}")
    if result.legacy:
        typer.echo(f"the existing hook is kept at {result.legacy} and runs first")
    if result.team_id:
        typer.echo(f"team id: {result.team_id}")
    if anchor:
        typer.echo(f"anchor option on: refs/heads/hive/* take only drafts signed by {', '.join(a[:12] for a in anchor)}")
    else:
        typer.echo("no team id yet: hive refs are refused until the founder pushes with "
                   "`-o hive-team=<id>` or you rerun this with --team")
    return 0


@app.command("uninstall-hook")
def uninstall_hook(
    path: Path = typer.Argument(..., help="The bare repository the guard was installed in."),
) -> int:
    """Remove the pre-receive guard and put back the hook it replaced, if any.

    Example: gitive server uninstall-hook /srv/git/acme.git
    """
    from gitive.store import serverhook

    if serverhook.uninstall(path):
        typer.echo(f"removed the gitive guard from {path}")
    else:
        typer.echo(f"no gitive guard is installed in {path}")
    return 0
