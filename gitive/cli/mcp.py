"""``gitive mcp``: serve team memory to a coding agent over MCP (stdio); the SDK loads only here."""

from __future__ import annotations

from pathlib import Path

import typer


def mcp(
    repo: Path | None = typer.Option(None, "--repo", help="The repository to serve (default: the working "
                                                          "directory, where harnesses start the server)."),
    tools: bool = typer.Option(False, "--tools", help="Print the tools this server offers and exit."),
    as_json: bool = typer.Option(False, "--json", help="With --tools: print them as JSON, with input "
                                                       "schemas."),
) -> int:
    """Serve the team's memory to a coding agent over MCP on stdin/stdout.

    `gitive mcp --tools` lists the tools (none can approve, retract or change the roster). Harness
    configuration: docs/mcp.md.

    Example: gitive mcp --repo ~/src/api
    """
    if tools:
        from gitive.cli.output import emit_json
        from gitive.mcp.table import describe

        listed = describe()
        if as_json:
            emit_json(listed)
        for tool in [] if as_json else listed:
            first = tool["description"].split(". ")[0].rstrip(".")
            typer.echo(f"{tool['name']}{' (read-only)' if tool['read_only'] else ''}: {first}.")
        return 0
    from gitive.mcp.front import main as serve

    return serve(repo)
