"""Entry point: the Typer app, its command groups, and the one error handler for all of them."""

from __future__ import annotations

import os
import platform
import sys
import traceback
from pathlib import Path

import typer
from typer.exceptions import TyperException

from gitive import __version__
from gitive.errors import GitiveError

app = typer.Typer(
    name="gitive",
    help="Shared, signed memory and presence for a team's coding agents, stored in git.\n\n"
         "Start: `gitive init --person alice` in your repository, then `gitive invite` and, on a "
         "teammate's clone, `gitive join CODE --person bob`.\n\n"
         "Example: gitive sync && gitive lessons search \"why do the payment tests flake\"",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


_registered = False


def _register() -> None:
    global _registered
    if _registered:
        return
    _registered = True
    from gitive.cli import anchor as anchor_cli
    from gitive.cli import (
        daemon,
        doctor,
        index,
        learn,
        lessons,
        live,
        log,
        owe,
        project,
        retract,
        review,
        server,
        skills,
        sync,
        team,
        ui,
    )
    from gitive.cli import gate as gate_cli
    from gitive.cli import install as install_cli
    from gitive.cli import mcp as mcp_cli
    from gitive.cli import routing as routing_cli

    team.register(app)
    install_cli.register(app)
    live.register(app)
    app.command("mcp")(mcp_cli.mcp)
    app.add_typer(daemon.app, name="daemon")
    sync.register(app)
    log.register(app)
    doctor.register(app)
    retract.register(app)
    app.add_typer(lessons.app, name="lessons")
    app.add_typer(review.app, name="review")
    app.add_typer(project.app, name="project")
    app.add_typer(index.app, name="index")
    app.add_typer(server.app, name="server")
    app.command("ui")(ui.ui)
    learn.register(app)
    app.add_typer(skills.app, name="skills")
    owe.register(app)
    app.add_typer(anchor_cli.app, name="anchor")
    app.add_typer(routing_cli.app, name="routing")
    gate_cli.register(app)


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


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return the exit code: 0 ok, 1 a gitive error, 2 usage, 3 a bug, 130 interrupted."""
    _register()
    try:
        result = app(args=argv, prog_name="gitive", standalone_mode=False)
    except typer.Exit as exc:
        return exc.exit_code
    except TyperException as exc:  # usage errors: typer bundles its own click, whose exceptions derive from it
        show = getattr(exc, "show", None)
        if show:
            show()
        else:
            print(f"gitive: {exc.format_message()}", file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, EOFError, typer.Abort):
        print("interrupted", file=sys.stderr)
        return 130
    except GitiveError as exc:
        print(f"gitive: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # a bug: keep the details, show one line
        path = _crash_log(exc)
        print(f"gitive: internal error ({type(exc).__name__}: {exc}); details in {path}", file=sys.stderr)
        return 3
    return result if isinstance(result, int) else 0


def main() -> None:
    sys.exit(run())
