"""``gitive daemon start|stop|status|run``: the watcher that keeps presence and delivers messages."""

from __future__ import annotations

import datetime as dt

import typer

from gitive.cli.output import console, emit_json

app = typer.Typer(help="The local daemon: presence, sync on an interval, message delivery.\n\n"
                       "Example: gitive daemon start --interval 30", no_args_is_help=True)

_INTERVAL = typer.Option(30.0, "--interval", min=1.0, help="Seconds between syncs (default 30).")


@app.command("start")
def start(interval: float = _INTERVAL, as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Start the daemon in the background for this $GITIVE_HOME (one per home).

    Example: gitive daemon start
    """
    from gitive.daemon import control
    from gitive.store.repo import open_repo, workdir

    try:
        repo = str(workdir(open_repo()))
    except Exception:  # started outside a repository: it still serves the repositories sessions work in
        repo = None
    pid = control.start(interval, repo)
    if as_json:
        emit_json({"pid": pid})
    else:
        console.print(f"daemon started (pid {pid}); `gitive daemon status` shows what it does")
    return 0


@app.command("stop")
def stop(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Stop the daemon.

    Example: gitive daemon stop
    """
    from gitive.daemon import control

    pid = control.stop()
    if as_json:
        emit_json({"stopped": pid})
    else:
        console.print(f"daemon stopped (pid {pid})" if pid else "no daemon was running")
    return 0


@app.command("status")
def status(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Say whether the daemon runs, what it serves, and when each team last synced (and any back-off).

    Exits 1 when it does not run.

    Example: gitive daemon status --json
    """
    from gitive.daemon import control

    found = control.status()
    if as_json:
        emit_json(found)
        return 0 if found["running"] else 1
    if not found["running"]:
        console.print("daemon not running" + (" (stale socket left by a crash)" if found.get("stale_socket") else "")
                      + "; `gitive daemon start` starts it")
        return 1
    console.print(f"daemon running (pid {found['pid']}), sync every {found['interval']:g} s")
    for repo in found.get("repos", []):
        console.print(f"  serves {repo}")
    for store, state in (found.get("hives") or {}).items():
        last = state.get("last_sync")
        when = dt.datetime.fromtimestamp(last / 1000, dt.UTC).strftime("%H:%M:%S") if last else "never"
        line = f"  {store}: last sync {when}"
        if state.get("unreachable"):
            line += f"; unreachable, retrying in {state.get('backoff_s', 0):.0f} s: " + \
                "; ".join(state["unreachable"].values())
        console.print(line)
    return 0


@app.command("run")
def run(interval: float = _INTERVAL) -> int:
    """Run the daemon in the foreground (what a service manager starts).

    Example: gitive daemon run --interval 10
    """
    from gitive.daemon.runner import run as run_daemon
    from gitive.store.repo import open_repo, workdir

    try:
        repo = str(workdir(open_repo()))
    except Exception:
        repo = None
    return run_daemon(interval, repo)
