"""The ``gitive`` console script: answer what needs no CLI framework before importing one, else run the CLI.

``--version`` and a sync that a running daemon answers (or that has nothing to do) import only the standard
library, and a bare ``gitive mcp`` (what harnesses run) starts the server without the CLI framework;
everything else goes to :func:`gitive.cli.main.run`, which loads only the invoked command's module.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from gitive import __version__

        sys.stdout.write(f"gitive {__version__}\n")
        sys.exit(0)
    if argv == ["mcp"]:  # how harnesses start the server: straight to it, the SDK's import is cost enough
        from gitive.mcp.server import serve

        try:
            serve(None)
        except KeyboardInterrupt:
            sys.exit(130)
        sys.exit(0)
    if argv[:1] == ["sync"]:
        from gitive.cli.fastsync import try_noop

        try:
            fast = try_noop(argv)
        except Exception:  # the fast path is an optimisation: any surprise falls back to the full command
            fast = None
        if fast is not None:
            sys.exit(fast)
    from gitive.cli.main import run

    sys.exit(run())
