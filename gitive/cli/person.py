"""``gitive person``: your person key (create, show, register, change passphrase, export, import), and the
passphrase prompt every decision command uses.

A decision (review, retraction, roster change, invite, project confirmation, release) is signed with the
person key, unlocked by the passphrase typed at a terminal. ``--passphrase-stdin`` reads it from the first
line of standard input instead, for scripts and test suites: anyone who can read that input can decide as you.
The passphrase is never read from an environment variable, because agents inherit the environment.
"""

from __future__ import annotations

import getpass
import sys
from pathlib import Path

import typer

from gitive.cli.output import console, emit_json, short
from gitive.core.lazy import OnFirstUse
from gitive.errors import GitiveError

personkey = OnFirstUse("gitive.core.personkey")  # PyNaCl loads only when a key is used

app = typer.Typer(help="Your person key: the key that signs your decisions, kept under a passphrase or in "
                       "ssh-agent.\n\nExample: gitive person init", invoke_without_command=True)

ATTEMPTS = 3
STDIN_HELP = ("Read the passphrase from the first line of stdin (scripts, CI): anyone who can read that "
              "input can decide as you.")


def passphrase_stdin() -> bool:
    return typer.Option(False, "--passphrase-stdin", help=STDIN_HELP)  # type: ignore[no-any-return]


def _typed(prompt: str) -> str:
    """A passphrase typed at this process's terminal (``/dev/tty``, echo off), never read from a pipe.

    Raises:
        NotAPerson: there is no terminal to type it at.
    """
    import os

    from gitive.lessons.gate import NotAPerson

    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        raise NotAPerson("a passphrase must be typed at a terminal; run this in your own terminal, or pass "
                         "--passphrase-stdin in a script") from None
    return getpass.getpass(prompt)


def _stdin_line() -> str:
    line = sys.stdin.readline()
    if not line:
        raise GitiveError("--passphrase-stdin: standard input is empty; nothing was signed")
    return line.rstrip("\r\n")


def ask_signer(purpose: str, scripted: bool) -> personkey.Signer:
    """Unlock this home's person key for one command: three tries at the terminal, one from stdin.

    Raises:
        KeyFileError: no person key here.
        WrongPassphrase: the passphrase did not open it.
    """
    keyfile = personkey.load()
    if keyfile.kind == "ssh-agent":
        console.print("ssh-agent will ask you to confirm each signature.")
        return personkey.unlock(keyfile)
    if scripted:
        return personkey.unlock(keyfile, _stdin_line())
    for attempt in range(ATTEMPTS):
        try:
            return personkey.unlock(keyfile, _typed(f"Passphrase of your person key ({purpose}): "))
        except personkey.WrongPassphrase:
            if attempt == ATTEMPTS - 1:
                raise
            typer.echo("wrong passphrase, try again", err=True)
    raise AssertionError("unreachable")


def signer_if_any(purpose: str, scripted: bool) -> personkey.Signer | None:
    """The unlocked person key, or None when this home has none (a v1 team may still decide without)."""
    return ask_signer(purpose, scripted) if personkey.exists() else None


def person_gesture(purpose: str, scripted: bool) -> None:
    """A person's gesture for a decision that writes no record (releasing held mail): the person key must
    open (and, in ssh-agent, its confirmation be given).

    Raises:
        NotAllowed: no person key here while the team requires one.
    """
    import os

    if personkey.exists():
        ask_signer(purpose, scripted).sign(b"gitive/local-gesture/" + os.urandom(16))
        return
    from gitive.enrolment import decisions
    from gitive.errors import NotAllowed

    if decisions.gestures_required_here():
        raise NotAllowed("this decision needs your person key: create it with `gitive person init` (or "
                         "`gitive person import` the one from your other machine)")


def new_passphrase(scripted: bool) -> str:
    """A new passphrase: typed twice at the terminal (one too short or too easy to guess is refused at once
    and asked again), or the first line of stdin (checked where it is used)."""
    if scripted:
        return _stdin_line()
    problem = "the passphrases did not match; nothing was written"
    for _ in range(ATTEMPTS):
        first = _typed(f"New passphrase for your person key (at least {personkey.MIN_PASSPHRASE} "
                                "characters; a few uncommon words): ")
        try:
            personkey.check_passphrase(first)
        except GitiveError as exc:  # said at once, not after typing it twice
            problem = str(exc)
            typer.echo(f"{problem.removesuffix('; nothing was written').removesuffix(' Nothing was written')}; "
                       "try again", err=True)
            continue
        if first == _typed("The same passphrase again: "):
            return first
        problem = "the passphrases did not match; nothing was written"
        typer.echo("the two passphrases differ, try again", err=True)
    raise GitiveError(problem)


def ensure_key(scripted: bool, agent_key: str | None = None) -> tuple[personkey.Signer, bool]:
    """This home's person key, unlocked: the existing one, or a new one (passphrase asked twice, or the
    ssh-agent key ``agent_key``). The flag says it was created."""
    if personkey.exists():
        return ask_signer("to sign your entry", scripted), False
    if agent_key is not None:
        personkey.use_agent_key(*_agent_identity(agent_key))
        return personkey.unlock(personkey.load()), True
    passphrase = new_passphrase(scripted)
    keyfile = personkey.create(passphrase)
    return personkey.unlock(keyfile, passphrase), True


def _agent_identity(wanted: str) -> tuple[str, str]:
    from gitive.core import sshagent

    found = sshagent.identities()
    if not found:
        raise GitiveError("ssh-agent holds no ed25519 key: add one with `ssh-add -c ~/.ssh/id_ed25519`")
    matches = [i for i in found if not wanted or i.public.startswith(wanted.lower()) or i.comment == wanted]
    if len(matches) != 1:
        listing = "; ".join(f"{i.public[:16]} {i.comment}" for i in found)
        raise GitiveError(f"say which ssh-agent key to use with --ssh-agent KEY (a public key prefix or its "
                          f"comment); the agent holds: {listing}")
    return matches[0].public, matches[0].comment


@app.callback()
def show(ctx: typer.Context, as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Show this home's person key and whether the current team has it registered for you.

    Example: gitive person
    """
    if ctx.invoked_subcommand:
        return 0
    from gitive.enrolment import decisions as standing

    found = standing.person_status()
    if as_json:
        emit_json(found)
        return 0
    if not found["key"]:
        console.print("No person key in this home: `gitive person init` creates one, `gitive person import` "
                      "takes the one from your other machine.")
        return 0
    console.print(f"Person key {short(found['key'])} ({found['kind']}) at {found['path']}")
    if found["team"]:
        state = "registered" if found["registered"] else "[yellow]not registered[/] (`gitive person register`)"
        console.print(f"  in team {found['team']} as {found['person']}: {state}")
    return 0


@app.command("init")
def init(
    ssh_agent: str | None = typer.Option(None, "--ssh-agent", help="Use this ed25519 key from ssh-agent "
                                         "(public key prefix or comment; '' for the only one) instead of a "
                                         "passphrase. Add it with `ssh-add -c` so the agent asks you each time."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Create your person key (asks for a passphrase twice) and register it in the current team, if any.

    Example: gitive person init
    """
    from gitive.enrolment import decisions as standing

    if personkey.exists():
        raise GitiveError(f"a person key already exists at {personkey.key_path()}; `gitive person` shows it")
    signer, _ = ensure_key(stdin, ssh_agent)
    console.print(f"Created your person key {short(signer.public)} at {personkey.key_path()} (mode 0600).")
    registered = standing.register_here(signer)
    if registered is not None:
        console.print(registered)
    return 0


@app.command("register")
def register(
    endorse_with: Path | None = typer.Option(None, "--endorse-with", help="A person key file (your previous "
                                             "key, or an admin's) whose passphrase vouches for the new key."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Register this home's person key in the current team (a signed `person-key` record).

    Example: gitive person register
    """
    from gitive.enrolment import decisions as standing

    signer = ask_signer("to register it", stdin)
    endorser = None
    if endorse_with is not None:
        keyfile = personkey.load(endorse_with)
        endorser = personkey.unlock(keyfile, _stdin_line() if stdin else _typed(
            f"Passphrase of the endorsing key {short(keyfile.public)}: "))
    console.print(standing.register_here(signer, endorser, required=True) or "")
    return 0


@app.command("passwd")
def passwd(stdin: bool = typer.Option(False, "--passphrase-stdin", help="Read the old then the new passphrase "
                                      "from the first two lines of stdin.")) -> int:
    """Change the passphrase of your person key (the key, and every signature made with it, stays the same).

    Example: gitive person passwd
    """
    old = _stdin_line() if stdin else _typed("Current passphrase: ")
    personkey.change_passphrase(old, new_passphrase(stdin))
    console.print("Passphrase changed.")
    return 0


@app.command("export")
def export(path: Path | None = typer.Argument(None, help="Write the key here (default: print it).")) -> int:
    """Export your person key, still encrypted, for `gitive person import` on your other machine.

    Example: gitive person export /media/usb/alice.person-key
    """
    text = personkey.export_text()
    if path is None:
        typer.echo(text, nl=False)
        return 0
    if path.exists():
        raise GitiveError(f"{path} exists; choose another file")
    path.write_text(text)
    path.chmod(0o600)
    console.print(f"Exported your person key to {path} (mode 0600); it still needs your passphrase.")
    return 0


@app.command("import")
def import_(
    path: Path = typer.Argument(..., help="A file from `gitive person export` ('-' reads stdin)."),
    stdin: bool = passphrase_stdin(),
) -> int:
    """Install your person key from your other machine; asks for its passphrase to check it opens.

    Example: gitive person import /media/usb/alice.person-key
    """
    text = sys.stdin.read() if str(path) == "-" else path.read_text()
    keyfile = personkey._parse(text, str(path))
    if keyfile.kind == "passphrase":
        personkey.unlock(keyfile, _stdin_line() if stdin else _typed("Passphrase of that key: "))
    personkey.import_text(text)
    console.print(f"Installed person key {short(keyfile.public)} at {personkey.key_path()}.")
    return 0
