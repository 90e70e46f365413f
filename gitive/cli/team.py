"""``gitive init``, ``invite``, ``join`` and ``team``: founding and growing the roster."""

from __future__ import annotations

import sqlite3
from typing import Any

import typer

from gitive.cli.output import console, emit_json, short
from gitive.cli.person import ask_signer, ensure_key, passphrase_stdin, signer_if_any

team_app = typer.Typer(help="List the team's persons and machines; remove one, change a role, or migrate a team "
                            "founded before person keys.\n\nExample: gitive team --json", no_args_is_help=False)


def register(app: typer.Typer) -> None:
    app.command("init")(init)
    app.command("invite")(invite)
    app.command("join")(join)
    app.command("attach")(attach)
    app.add_typer(team_app, name="team")


def init(
    person: str = typer.Option(..., "--person", help="Your name in the team: a-z, 0-9 and -, e.g. alice."),
    machine: str | None = typer.Option(None, "--machine", help="This machine's name (default: hostname)."),
    name: str | None = typer.Option(None, "--name", help="The team's display name (default: the repo's)."),
    team_remote: str | None = typer.Option(
        None, "--team-remote", help="Keep roster, mail and team lessons in this separate git repository."),
    email: list[str] = typer.Option([], "--email", help="Extra git author emails of yours (repeatable)."),
    ssh_agent: str | None = typer.Option(None, "--ssh-agent", help="Use this ssh-agent ed25519 key as your "
                                         "person key (see `gitive person init --help`)."),
    stdin: bool = passphrase_stdin(),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Found a team in the current repository (you become its founder and first admin).

    Creates your person key first (a passphrase, asked twice) unless this home has one: it signs your
    decisions, and an agent on this machine cannot use it without the passphrase.

    Example: gitive init --person alice
    """
    from gitive.enrolment import ops
    from gitive.index.membership import ensure_member
    from gitive.index.refresh import fresh_index
    from gitive.store.repo import workdir
    from gitive.team.hive import open_hive

    machine_name = machine or ops.default_machine_name()
    team_name = name or workdir(ops.check_found(None, person, machine_name, team_remote)).name  # before any key is made
    signer, key_created = ensure_key(stdin, ssh_agent)
    done = ops.found(None, person, machine_name, team_name, team_remote, email, signer=signer)
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        ensure_member(hive, conn, signer)  # the founder owns the project the team was founded in
    if as_json:
        emit_json(done._asdict())
        return 0
    console.print(f"Founded team [bold]{team_name}[/] ({done.team_id}) with {person} as founder.")
    if done.key_created:
        console.print("Created this machine's key (mode 0600).")
    if key_created:
        console.print(f"Created your person key {short(signer.public)} (mode 0600); `gitive person export` "
                      "copies it to your other machines.")
    console.print(f"Team store: {done.store}; syncing with: {', '.join(done.remotes) or 'no remote'}.")
    for where in done.unchecked:
        console.print(f"[yellow]could not reach {where} to check that it holds no team yet[/]; if it does, "
                      "teammates should `gitive join` it instead")
    if not done.remotes:
        console.print("[yellow]This repository has no remote, so no teammate can see the team yet:[/] add one "
                      "(`git remote add origin URL`), then `gitive sync` and `gitive invite`.")
        return 0
    console.print("Everyone who can read this repository's remote can read what gitive stores there.")
    console.print("Next: `gitive sync` to publish, then `gitive invite` to add a teammate.")
    return 0


def invite(
    reusable: bool = typer.Option(False, "--reusable", help="Let the code admit several machines."),
    days: float = typer.Option(7.0, "--days", min=0.01, help="Days until the invite expires."),
    person: str | None = typer.Option(None, "--person", help="Only admit a machine of this person."),
    anchor: bool = typer.Option(False, "--anchor", help="Admit the team's anchor machine (admins only); it joins "
                                                        "as the person `anchor`. See docs/anchor.md."),
    no_push: bool = typer.Option(False, "--no-push", help="Write the invite but do not sync it now."),
    stdin: bool = passphrase_stdin(),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Print an invite code that admits a new machine, even while you are offline.

    The code is a secret: send it privately. Only its hash is stored in the team's refs. An invite is a
    decision: it asks for your person key's passphrase.

    Example: gitive invite --days 2   (an anchor: gitive invite --anchor)
    """
    from gitive.enrolment import anchors, ops
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    if anchor and (person or reusable):
        raise typer.BadParameter("--anchor admits one anchor machine: leave out --person and --reusable")
    hive = open_hive()
    ops.require_remote(hive, "nobody could redeem an invite")
    with fresh_index(hive) as (conn, _):
        if anchor:
            anchors.invite_anchor(hive, conn, dry_run=True)
        else:
            ops.create_invite(hive, conn, reusable=reusable, ttl_ms=1, person=person, dry_run=True)
        gate.require_person("inviting a machine", scripted=stdin)
        signer = signer_if_any("to sign the invite", stdin)
        if anchor:
            code, record = anchors.invite_anchor(hive, conn, ttl_ms=int(days * 86_400_000), signer=signer)
        else:
            code, record = ops.create_invite(hive, conn, reusable=reusable, ttl_ms=int(days * 86_400_000),
                                             person=person, signer=signer)
    report = None if no_push else syncing.run(hive)
    if as_json:
        emit_json({"code": code, "invite": record, "sync": report.as_dict() if report else None})
        return 0
    typer.echo(code)
    kind = "anchor" if anchor else "reusable" if reusable else "one-time"
    who = "--person anchor" if anchor else "--person NAME"
    typer.echo(f"# {kind} invite, expires in {days:g} days; on the new machine, in a clone of this "
               f"repository: gitive join CODE {who}", err=True)
    if report and not report.ok:
        typer.echo("# the invite is not on the remote yet: run `gitive sync` before you go offline", err=True)
    return 0


def join(
    code: str | None = typer.Argument(None, help="The invite code from `gitive invite` (none: attach this clone "
                                               "to a team this machine is already in)."),
    person: str | None = typer.Option(None, "--person", help="Your name in the team: a-z, 0-9 and -, e.g. bob "
                                                             "(an anchor invite needs none: it is `anchor`)."),
    machine: str | None = typer.Option(None, "--machine", help="This machine's name (default: hostname)."),
    team_remote: str | None = typer.Option(None, "--team-remote", help="The team's separate store, if any."),
    ssh_agent: str | None = typer.Option(None, "--ssh-agent", help="Use this ssh-agent ed25519 key as your "
                                         "person key (see `gitive person init --help`)."),
    stdin: bool = passphrase_stdin(),
    team: str | None = typer.Option(None, "--team", help="Without a code: the team (name or id) to attach to."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Join a team with an invite code, in a clone of the team's repository.

    Creates your person key (a passphrase, asked twice) unless this home has one; for your second machine,
    first `gitive person import` the key exported from your first.

    On a machine that is already in the team, run it without a code (or run `gitive attach`) to add another
    clone, of any repository: no invite is needed.

    Example: gitive join gitive-mfrgg... --person bob
    """
    from gitive.enrolment import ops
    from gitive.enrolment.join import join as do_join
    from gitive.errors import GitiveError

    if code is None:
        if person or team_remote:
            raise GitiveError("without a code, join attaches this clone to a team this machine is already in: "
                              "drop --person/--team-remote, or pass the invite code")
        return attach(team=team, source=None, as_json=as_json)
    done = do_join(None, code, person, machine or ops.default_machine_name(), team_remote,
                   person_key=lambda: ensure_key(stdin, ssh_agent)[0])  # made once the invite checks out
    if as_json:
        emit_json({"team_id": done.team_id, "machine": done.machine, "person": done.person,
                   "key_created": done.key_created, "sync": done.report.as_dict()})
        return 0
    console.print(f"Joined team {done.team_id} as {done.person} (machine {short(done.machine)}).")
    for remote, ref, why in done.report.rejected:
        console.print(f"[red]push to {remote} refused {ref}: {why}[/]")
    return 0


def attach(
    team: str | None = typer.Option(None, "--team", help="The team (name or id prefix) when this machine is in "
                                                         "several."),
    source: str | None = typer.Option(None, "--from", help="A clone that is already in the team (to find it "
                                                           "without --team)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Add this clone, of any repository, to a team this machine already belongs to (no invite needed).

    The clone shares the team's roster, mail and team lessons with the machine's other clones; its project
    lessons stay in it and travel with its own remotes. Project membership is proposed as when you join.

    Example: gitive attach --team acme
    """
    from gitive.enrolment.join import attach as do_attach

    done = do_attach(None, team, source)
    if as_json:
        emit_json({"team": {"id": done.team_id, "name": done.team_name}, "machine": done.machine,
                   "person": done.person, "store": done.store, "project_role": done.project_role,
                   "sync": done.report.as_dict()})
        return 0 if done.report.ok else 1
    console.print(f"Attached this clone to team [bold]{done.team_name or '?'}[/] ({done.team_id}) as "
                  f"{done.person} (machine {short(done.machine)}); team store: {done.store}.")
    if done.project_role:
        console.print(f"Proposed you as {done.project_role} of this project; its owner or a team admin confirms "
                      f"it at a terminal with `gitive project confirm {done.person}` (`--owner` to make you its "
                      "owner).")
    _print_sync_problems(done.report)
    return 0 if done.report.ok else 1


def _print_sync_problems(report: Any) -> None:
    from gitive.index.sync import NO_REMOTE

    if report.no_remote:
        console.print(f"[yellow]{NO_REMOTE}[/]")
    for remote, ref, why in report.rejected:
        console.print(f"[red]push to {remote} refused {ref}: {why}[/]")
    for remote, why in report.unreachable.items():
        console.print(f"[red]{remote}[/]: {why}")


@team_app.callback(invoke_without_command=True)
def team_list(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the roster as JSON."),
) -> int:
    """List persons, their machines, roles and status, and who has no registered person key yet.

    Example: gitive team --json
    """
    if ctx.invoked_subcommand:
        return 0
    from gitive.index import queries
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        members = queries.members(conn)
        name = _team_name(conn, hive.founder)
        keyed = {r[0] for r in conn.execute("SELECT DISTINCT person FROM person_keys")}
    for m in members:
        m["person_key"] = m["person"] in keyed
    if as_json:
        emit_json({"team_id": hive.team_id, "name": name, "founder": hive.founder, "members": members})
        return 0
    console.print(f"Team [bold]{name}[/] ({hive.team_id})")
    for m in members:
        status = "active" if m["active"] else "[red]removed[/]"
        role = f" {m['role']}" if m["role"] != "member" else ""
        founder = " founder" if m["machine"] == hive.founder else ""
        key = "" if m["person_key"] or not m["active"] else " [yellow](no person key)[/]"
        console.print(f"  {m['person']:<16} {m['name']:<20} {short(m['machine'])}  {status}{role}{founder}{key}")
    return 0


def _team_name(conn: sqlite3.Connection, founder: str) -> str:
    from gitive.index import queries

    teams = queries.verified_entries(conn, log="roster", kind="team", author=founder)
    return teams[-1]["record"]["name"] if teams else "?"


@team_app.command("remove")
def team_remove(
    who: str = typer.Argument(..., help="A person (all their machines), person/machine, or a machine id."),
    no_push: bool = typer.Option(False, "--no-push", help="Sign the removal but do not sync it now."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Remove a person or one machine from the team (signed with your person key; replicated at the next sync).

    Only an admin removes another person's machines; anyone may remove their own ("leave"). The removal
    records the machine's log heads: whatever it writes later is refused by every reader.

    Example: gitive team remove bob/old-laptop
    """
    from gitive.enrolment import ops
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        ops.remove(hive, conn, who, dry_run=True)
        gate.require_person("removing a machine", scripted=stdin)
        signer = signer_if_any(f"to remove {who}", stdin)
        removed = ops.remove(hive, conn, who, signer)
    for m in removed:
        console.print(f"Removed {m['person']}/{m['name']} ({short(m['machine'])}).")
    if not no_push:
        syncing.run(hive)
    return 0


@team_app.command("role")
def team_role(
    person: str = typer.Argument(..., help="The person whose role changes."),
    role: str = typer.Argument(..., help="admin or member."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Make a person an admin, or a member again (admins only; the last admin stays).

    Example: gitive team role bob admin
    """
    from gitive.enrolment import decisions
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    gate.require_person("changing a role", scripted=stdin)
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        signer = signer_if_any(f"to make {person} {role}", stdin)
        changed = decisions.set_role(hive, conn, person, role, signer)
    console.print(f"{person} is now {role}" + ("" if changed else " (nothing changed)"))
    if changed:
        syncing.run(hive)
    return 0


@team_app.command("migrate")
def team_migrate(
    stdin: bool = passphrase_stdin(),
    as_json: bool = typer.Option(False, "--json", help="Print the migration point as JSON."),
) -> int:
    """Require person keys for every decision from now on, in a team founded before they existed (admins).

    Decisions written up to now stay valid without a gesture; later ones count only when signed with the
    deciding person's registered key. Check first that everyone registered one (`gitive team`).

    Example: gitive team migrate
    """
    from gitive.enrolment import decisions
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.lessons import gate
    from gitive.team.hive import open_hive

    gate.require_person("migrating the team", scripted=stdin)
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        missing = decisions.without_key(conn)
        signer = ask_signer("to migrate the team", stdin)
        heads = decisions.migrate(hive, conn, signer)
    report = syncing.run(hive)
    if as_json:
        emit_json({"heads": heads, "without_key": missing, "sync": report.as_dict()})
        return 0
    console.print("Migrated: decisions now need a person key's gesture.")
    if missing:
        console.print(f"[yellow]No person key registered yet for: {', '.join(missing)}[/]; their decisions "
                      "do not count until they run `gitive person init`.")
    return 0
