"""``gitive anchor run|start|stop|status``: the team's always-on member that evaluates obligations."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import typer

from gitive.cli.output import console, emit_json

app = typer.Typer(help="The anchor: fetches, evaluates obligations and queues what fired (no model runs).\n\n"
                       "Example: gitive anchor run --once", no_args_is_help=True)

_INTERVAL = typer.Option(None, "--interval", min=1.0, help="Seconds between ticks (default: anchor.yaml, or 30).")


def _repo() -> str:
    from gitive.store.repo import open_repo, workdir

    return str(workdir(open_repo()))


def _when(ms: int | None) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if ms else "never"


@app.command("run")
def run(interval: float | None = _INTERVAL,
        once: bool = typer.Option(False, "--once", help="Run one tick and exit."),
        as_json: bool = typer.Option(False, "--json", help="With --once: print the tick's report as JSON.")) -> int:
    """Run the anchor's tick in the foreground (Ctrl-C stops it); only on the anchor machine.

    Example: gitive anchor run --once --json
    """
    from gitive.anchor.runner import run as run_anchor
    from gitive.anchor.telling import describe

    say = None if as_json else (lambda line: console.print(line))
    reports = run_anchor(_repo(), interval=interval, once=once, say=say)
    if once and reports:
        if as_json:
            emit_json(reports[0].as_dict())
        elif describe(reports[0]) is None:
            console.print(f"idle tick ({reports[0].ms} ms): nothing new")
    return 0


@app.command("start")
def start(interval: float | None = _INTERVAL,
          as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Start the anchor in the background for this $GITIVE_HOME and repository.

    Example: gitive anchor start --interval 30
    """
    from gitive.anchor import control
    from gitive.anchor.runner import require_anchor
    from gitive.team.hive import open_hive

    repo = _repo()
    require_anchor(open_hive(repo))
    pid = control.start(repo, interval)
    if as_json:
        emit_json({"pid": pid})
    else:
        console.print(f"anchor started (pid {pid}); `gitive anchor status` shows its queue")
    return 0


@app.command("stop")
def stop(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> int:
    """Stop the background anchor.

    Example: gitive anchor stop
    """
    from gitive.anchor import control

    pid = control.stop()
    if as_json:
        emit_json({"stopped": pid})
    else:
        console.print(f"anchor stopped (pid {pid})" if pid else "no anchor was running")
    return 0


def _item(item: dict[str, Any]) -> str:
    late = f" [bold]late[/]: due {_when(item['due'])}, fired {_when(item['fired'])}" if item["late"] else \
        f" fired {_when(item['fired'])}"
    to = f" → {item['to']}" if item["to"] else ""
    return f"  {item['kind']:<18} {item['obligation'][:12]} {item['owner']}{to}: {item['action']}{late}"


def _print_prepared(prepared: dict[str, Any]) -> None:
    from gitive.anchor.telling import PREPARED_WORDS

    counts = prepared.get("counts") or {}
    shown = ", ".join(f"{n} {state}" for state, n in sorted(counts.items())) or "none yet"
    console.print(f"prepared work: {shown} (`gitive review prepared` reviews a draft)")
    for t in prepared.get("tasks") or []:
        console.print(f"  {t['task'][:12]} {t['branch'] or ''}: {PREPARED_WORDS.get(t['state'], t['state'])} "
                      f"{_when(t['at'])}" + (f" — {t['title']}" if t.get("title") else ""))


@app.command("status")
def status(as_json: bool = typer.Option(False, "--json", help="Print as JSON."),
           limit: int = typer.Option(50, "--limit", min=1, help="Queued items shown.")) -> int:
    """Whether the anchor runs, its last tick, the candidate items queued for the gate, and sources' problems.

    Example: gitive anchor status --json
    """
    from gitive.anchor import control
    from gitive.team.hive import open_hive

    found = control.status(open_hive(), limit)
    if as_json:
        emit_json(found)
        return 0
    run_ = found["run"]
    state = f"running (pid {found['pid']})" if found["running"] else "not running"
    console.print(f"anchor {state}; last tick {_when(run_ and run_['last_tick'])}"
                  + (f", {run_['ticks']} ticks since {_when(run_['started'])}" if run_ else ""))
    report = (run_ or {}).get("last_report") or {}
    for remote, why in (report.get("unreachable") or {}).items():
        console.print(f"  [red]unreachable[/] {remote}: {why}")
    for p in found["problems"]:
        console.print(f"  [red]problem[/] {p['source']}: {p['detail']} (since {_when(p['first_seen'])}, "
                      f"{p['count']}×)")
    gate = found.get("gate") or {}
    decided = ", ".join(f"{n} {branch}" for branch, n in sorted((gate.get("decided") or {}).items())) or "none yet"
    console.print(f"gate: decisions {decided}; {gate.get('held', 0)} held for quiet hours, "
                  f"{gate.get('waiting', 0)} waiting (`gitive why ITEM` explains one)")
    _print_prepared(found.get("prepared") or {})
    console.print(f"{found.get('queued', 0)} item(s) queued for the gate; obligation items it received:")
    for item in found["queue"]:
        console.print(_item(item) + (f"  [dim]{item['state']}[/]" if item.get("state") != "queued" else ""))
    return 0
