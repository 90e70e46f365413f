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

    Tools: search_memory, get_lesson, get_memory_context, propose_lesson, list_team, who_knows, send_message,
    check_inbox, search_mail, claim_files. None can approve, retract or change the roster. Harness
    configuration: docs/mcp.md.

    Example: gitive mcp --repo ~/src/api
    """
    if tools:
        from gitive.cli.output import emit_json
        from gitive.mcp.server import describe

        listed = describe(repo)
        if as_json:
            emit_json(listed)
        for tool in [] if as_json else listed:
            first = " ".join(tool["description"].split()).split(". ")[0].rstrip(".")
            typer.echo(f"{tool['name']}{' (read-only)' if tool['read_only'] else ''}: {first}.")
        return 0
    from gitive.mcp.server import serve

    serve(repo)
    return 0
