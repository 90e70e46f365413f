"""Entry point: the Typer app, its command groups, and the one error handler for all of them."""

from __future__ import annotations

import io
import os
import platform
import sys
import traceback
from pathlib import Path

import typer
from typer.exceptions import TyperException

from gitive import __version__
from gitive.cli import failures
from gitive.errors import GitiveError, clip_words

app = typer.Typer(
    name="gitive",
    help="Shared, signed memory and presence for a team's coding agents, stored in git.\n\n"
         "Start: `gitive init --person alice` in your repository, then `gitive invite` and, on a "
         "teammate's clone, `gitive join CODE --person bob`.\n\n"
         "Example: gitive sync && gitive lessons search \"why do the payment tests flake\"",
    no_args_is_help=True,
    add_completion=True,  # `gitive --install-completion` (bash, zsh, fish, PowerShell): Typer's own
    pretty_exceptions_enable=False,
)


# Each command module, and the top-level commands it adds. A command loads only its own module (and what that
# imports), so `gitive team` never pays for the MCP server or the daemon; `--help` and an unknown name load all.
_MODULES: dict[str, tuple[str, ...]] = {
    "team": ("init", "invite", "join", "attach", "team"),
    "install": ("install", "uninstall", "status"),
    "live": ("who", "send", "inbox", "held", "release", "drop"),
    "mcp": ("mcp",),
    "daemon": ("daemon",),
    "sync": ("sync",),
    "log": ("log",),
    "export": ("export",),
    "doctor": ("doctor",),
    "retract": ("retract", "gc"),
    "lessons": ("lessons",),
    "review": ("review",),
    "project": ("project",),
    "person": ("person",),
    "index": ("index",),
    "server": ("server",),
    "ui": ("ui",),
    "learn": ("learn",),
    "skills": ("skills",),
    "owe": ("owe", "owed", "obligation"),
    "anchor": ("anchor",),
    "routing": ("routing",),
    "gate": ("prefs", "why", "digest", "gate"),
    "prepared": ("hand", "handoff", "standing"),
    "needs": ("next",),
}
# modules that are one Typer group, named like the module
_GROUPS = {"daemon", "lessons", "review", "project", "person", "index", "server", "skills", "anchor", "routing"}
_registered: set[str] = set()


def _add(module_name: str) -> None:
    import importlib

    module = importlib.import_module(f"gitive.cli.{module_name}")
    if module_name in _GROUPS:
        app.add_typer(module.app, name=module_name)
    elif module_name in ("mcp", "ui"):  # one command each, named like the module
        app.command(module_name)(getattr(module, module_name))
    else:
        module.register(app)


def _register(command: str | None = None) -> None:
    """Add the module that holds ``command`` to the app, or every module when ``command`` is None or unknown."""
    owner = next((m for m, names in _MODULES.items() if command in names), None)
    for module_name in [owner] if owner else list(_MODULES):
        if module_name not in _registered:
            _registered.add(module_name)
            _add(module_name)


def _command_name(argv: list[str]) -> str | None:
    """The command ``argv`` names (its first word), or None for bare options such as ``--help``."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def _version(value: bool) -> None:
    if value:
        typer.echo(f"gitive {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                 help="Print the version and exit."),
) -> None:
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit(0)


def _crash_log(exc: BaseException) -> Path:
    from gitive.core.home import ensure_home

    path = ensure_home() / "logs" / f"crash-{os.getpid()}.log"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        f"gitive {__version__}, Python {platform.python_version()}, {platform.platform()}\n"
        f"argv: {sys.argv}\n\n{''.join(traceback.format_exception(exc))}"
    )
    return path


_shown: set[str] = set()


def _notice(line: str) -> None:
    """Print a standing notice (removed machine, person keys to create) once per process, on stderr."""
    if line not in _shown:
        _shown.add(line)
        print(f"gitive: {line}", file=sys.stderr)
def _announce_team() -> None:
    """On a machine in several teams, say once on stderr which team this command acts for."""
    from gitive.team import hive, registry

    said: set[str] = set()

    def announce(opened: hive.Hive) -> None:
        if said:
            return
        teams = registry.load()
        if len(teams) > 1:
            said.add(opened.team_id)
            name = (teams.get(opened.team_id) or {}).get("name") or "?"
            print(f"team: {name} ({opened.team_id[:12]})", file=sys.stderr)

    hive.on_open(announce)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code: 0 ok, 1 a gitive error, 2 usage, 3 a bug, 130 interrupted."""
    from gitive.core import notices

    command = _command_name(sys.argv[1:] if argv is None else argv)
    # A shell asking for completions (Typer's _GITIVE_COMPLETE) must see every command, not only the first word's.
    _register(None if os.environ.get("_GITIVE_COMPLETE") else command)
    _shown.clear()
    notices.listen(_notice)
    if command not in ("mcp", "daemon", "init", "join", "attach", None):  # these name the team themselves
        _announce_team()
    try:
        return _run(argv)
    finally:
        from gitive.team import hive

        hive.on_open(None)


# The Click command Typer builds from ``app``, per set of registered modules: building it inspects every
# command's signature (tens of milliseconds), and a process that runs the CLI more than once (the test suite runs
# it in-process thousands of times) would pay that on every call. Registration only ever adds modules.
_commands: dict[frozenset[str], typer.core.TyperGroup] = {}


def _command() -> typer.core.TyperGroup:
    key = frozenset(_registered)
    command = _commands.get(key)
    if command is None:
        command = _commands[key] = typer.main.get_command(app)
    return command


def _run(argv: list[str] | None) -> int:
    try:
        result = _command().main(args=argv, prog_name="gitive", standalone_mode=False)
    except typer.Exit as exc:
        return exc.exit_code
    except TyperException as exc:  # usage errors: typer bundles its own click, whose exceptions derive from it
        shown = io.StringIO()
        show = getattr(exc, "show", None)
        if show:
            show(file=shown)
        else:
            print(f"gitive: {exc.format_message()}", file=shown)
        sys.stderr.write(clip_words(shown.getvalue()))  # a 100 KB argument is quoted back in 80 characters
        return exc.exit_code
    except (KeyboardInterrupt, EOFError, typer.Abort):
        print("interrupted", file=sys.stderr)
        return 130
    except GitiveError as exc:
        said = failures.explain(exc) or str(exc)  # git's "No space left on device", say
        if said not in _shown:  # the same words as a notice already shown: one line is enough
            print(f"gitive: {clip_words(said)}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: keep the details, show one line
        said = failures.explain(exc)
        if said is not None:  # the disk or the file system, not a bug: one line, exit 1
            print(f"gitive: {said}", file=sys.stderr)
            return 1
        path = _crash_log(exc)
        print(clip_words(f"gitive: internal error ({type(exc).__name__}: {exc}); details in {path}"), file=sys.stderr)
        return 3
    return result if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run())
