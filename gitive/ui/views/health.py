"""Health: `gitive doctor`'s findings, the sync history with its latency, and quarantined or rolled-back logs."""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import Any

from gitive.index import activity, doctor, queries, sync_history
from gitive.team.hive import Hive
from gitive.ui import charts
from gitive.ui.html import ago, badge, empty, h, short, stat, table

ROUNDS = 200
SHOWN = 20


def _index_written(hive: Hive) -> int | None:
    times = [p.stat().st_mtime_ns // 1_000_000 for p in (hive.index_path, hive.index_path.with_name(
        hive.index_path.name + "-wal")) if p.exists()]
    return max(times) if times else None


def collect(hive: Hive, conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    rounds = sync_history.read(hive, ROUNDS)
    return {"view": "health", "problems": doctor.diagnose(hive, conn),
            "quarantined": activity.quarantined_logs(conn),
            "rollbacks": [p for p in queries.problems(conn) if p["kind"] == "rollback"],
            "sync": {"rounds": rounds, "last": rounds[-1] if rounds else None},
            "index": queries.counts(conn) | {"written": _index_written(hive)}, "now": now}


def _round_row(r: dict[str, Any], now: int) -> list[str]:
    fetched = sum((r.get("fetched") or {}).values())
    trouble = "; ".join(f"{k}: {v}" for k, v in (r.get("unreachable") or {}).items())
    if r.get("rejected"):
        trouble = f"{r['rejected']} push(es) refused" + (f"; {trouble}" if trouble else "")
    lat = r.get("latency")
    return [ago(r["at"], now), h(f"{r.get('ms', 0)} ms"), h(fetched), h(r.get("received", 0)), h(r.get("pushed", 0)),
            h(f"{lat['p50'] / 1000:.1f} s (n={lat['n']})") if lat else '<span class="muted">–</span>',
            badge("ok") if r.get("ok") else badge("failed", "bad") + f" {h(trouble)}"]


def _latency_chart(rounds: list[dict[str, Any]]) -> str:
    with_latency = [r for r in rounds if r.get("latency")][-40:]
    bars = [charts.Bar(dt.datetime.fromtimestamp(r["at"] / 1000, dt.UTC).strftime("%H:%M"),
                       r["latency"]["p50"] / 1000, f"max {r['latency']['max'] / 1000:.1f} s, {r['latency']['n']} entries")
            for r in with_latency]
    return charts.bars("sync-latency", "Sync latency: age of teammates' entries on arrival (median per round)",
                       "s", bars)


def render(data: dict[str, Any]) -> str:
    now, problems, sync = data["now"], data["problems"], data["sync"]
    last = sync["last"]
    out = ["<h1>Health</h1>", '<div class="stats">',
           stat("doctor findings", len(problems), "bad" if problems else "ok"),
           stat("quarantined logs", len(data["quarantined"]), "bad" if data["quarantined"] else ""),
           stat("entries indexed", data["index"]["entries"]), stat("logs", data["index"]["logs"]), "</div>"]
    out.append('<section id="doctor"><h2>Doctor</h2>')
    if problems:
        rows = [[badge(p["kind"], "bad"), h(p["where"]) + (f" seq {h(p['seq'])}" if p.get("seq") else ""),
                 h(p["detail"]), h(p["hint"])] for p in problems]
        out.append(table("What `gitive doctor` finds", ("problem", "where", "detail", "what to do"), rows,
                         cls="rows problems", row_attrs=['tabindex="0"'] * len(rows)))
    else:
        out.append('<p class="callout ok">No problems found: signatures, sequences, refspecs and repository '
                   "health all check out.</p>")
    out.append("</section>")
    out.append('<section id="logs"><h2>Quarantined and rolled-back logs</h2>')
    rows = [[h(q["person"] or "?"), h(f"{q['machine_name'] or ''} {short(q['author'], 8)}"), h(q["log"]),
             h(f"quarantined from seq {q['from_seq']} (equivocation)")] for q in data["quarantined"]]
    rows += [[h("?"), h(short(p["author"], 8)), h(p["log"] or ""), h(f"rolled back by {p['source']}: {p['detail']}")]
             for p in data["rollbacks"]]
    out.append(table("Logs not fully used", ("person", "machine", "log", "why"), rows, cls="rows") if rows else
               '<p class="muted">None: every log is used in full.</p>')
    out.append("</section>")
    out.append('<section id="sync"><h2>Sync</h2>')
    if last:
        out.append(f"<p>Last sync {ago(last['at'], now)}, "
                   + ("ok." if last.get("ok") else "<strong>with failures</strong> (see below).")
                   + f" Index last written {ago(data['index']['written'], now)}.</p>")
        out.append(_latency_chart(sync["rounds"]))
        shown = sync["rounds"][-SHOWN:][::-1]
        out.append(table("Recent sync rounds, newest first", ("when", "took", "refs moved", "entries in",
                                                               "refs pushed", "latency (median)", "result"),
                         [_round_row(r, now) for r in shown], cls="rows rounds"))
    else:
        out.append(empty("No sync recorded yet", [
            "Each `gitive sync` (and each round of the daemon) is recorded here with what moved and how long "
            "teammates' entries took to arrive."], ["gitive sync", "gitive daemon start"]))
    out.append("</section>")
    return "".join(out)
