"""``gitive ui``: the read-only dashboard in the browser."""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer


def ui(
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Port on 127.0.0.1 (default: a free one)."),
    open_: bool = typer.Option(False, "--open", help="Open the dashboard in your browser."),
    as_json: bool = typer.Option(False, "--json", help="Print the address as one JSON line (for scripts)."),
) -> int:
    """Serve a read-only dashboard of the team, its memory and its health on 127.0.0.1 until Ctrl-C.

    The address carries a random token made for this run: anyone with it can read what you can, so share it
    with nobody. Views: Team, Memory, Obligations, Gate, Health; each is also JSON with
    `Accept: application/json`. Nothing on the page can approve, send or change anything.

    Example: gitive ui --open
    """
    from gitive.ui.server import Address, serve

    def ready(address: Address) -> None:
        if as_json:
            typer.echo(json.dumps({"url": address.url, "port": address.port, "pid": os.getpid()}))
        else:
            typer.echo(f"gitive ui: {address.url}")
            typer.echo("# read-only; the token is for this run only; Ctrl-C stops it", err=True)

    return serve(Path.cwd(), port, open_browser=open_, ready=ready)
