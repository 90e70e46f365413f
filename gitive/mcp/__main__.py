"""``python -m gitive.mcp [--repo PATH]``: the MCP server without the CLI (what ``gitive mcp`` runs)."""

from __future__ import annotations

import argparse


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gitive.mcp", description="Serve gitive's team memory "
                                     "to a coding agent over MCP (stdio).")
    parser.add_argument("--repo", default=None, help="The repository (default: the working directory).")
    args = parser.parse_args(argv)
    from gitive.mcp.front import main as serve

    return serve(args.repo)


if __name__ == "__main__":
    raise SystemExit(main())
