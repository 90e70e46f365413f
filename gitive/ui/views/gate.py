"""Gate: the anchor's ledger as a timeline, interruptions per day against each person's budget, acted-on and
missed-item rates, and whether each person's gate is live or in shadow.

Everything comes from the gate's own readers: :func:`gitive.index.ledger.decisions` (what anchors signed,
metadata only: no item text), :func:`gitive.anchor.gate.prefs.all_current` (budgets, time zones),
:func:`gitive.anchor.gate.gestures.live_people` and :func:`gitive.anchor.gate.shadow.report`. A person's own marks
(`gitive digest mark`) stay on their machine, so the rates here count only what the ledger and the index show;
`gitive gate report` on that person's machine adds their marks.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from typing import Any

from gitive.anchor.gate import gestures, prefs, shadow
from gitive.anchor.gate.items import active_people
from gitive.anchor.gate.order import DELIVERING
from gitive.index import ledger as ledger_reads
from gitive.team.hive import Hive
from gitive.ui import charts
from gitive.ui.html import ago, badge, command, h, iso, short, stat, table
from gitive.ui.views import pending

DAYS = 14
SHOWN = 100
INTERRUPTING = tuple(b for b in DELIVERING if b != "note")  # floor, alarm, attention: what reaches a person now
ENABLE = ["gitive invite --anchor", "gitive anchor start"]
OWE = "gitive owe --when 'e.event.action == \"vcs.merged\" && e.vcs.branch == \"main\"' --do 'tell the team'"


def _days(p: prefs.Prefs, now: int) -> list[str]:
    """The person's last ``DAYS`` local dates, oldest first."""
    today = datetime.fromtimestamp(now / 1000, p.zone).date()
    return [(today - timedelta(days=n)).isoformat() for n in range(DAYS - 1, -1, -1)]


def _per_day(p: prefs.Prefs, decisions: list[dict[str, Any]], now: int) -> list[dict[str, Any]]:
    """Per local day: items that interrupted (or in shadow would have), attention among them, how many in shadow."""
    days = {d: {"day": d, "items": set(), "attention": set(), "shadow": set()} for d in _days(p, now)}
    for d in decisions:
        day = days.get(prefs.day_of(p, d["at"]))
        if day is None or d["branch"] not in INTERRUPTING:
            continue
        day["items"].add(d["item"])  # one item decided by two anchors interrupts once
        if d["branch"] == "attention":
            day["attention"].add(d["item"])
        if d["shadow"] and d["branch"] != "floor":
            day["shadow"].add(d["item"])
    return [{"day": v["day"], "interruptions": len(v["items"]), "attention": len(v["attention"]),
             "shadow": len(v["shadow"])} for v in days.values()]


def collect(hive: Hive, conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    anchors = ledger_reads.anchors(conn)
    if not ledger_reads.decisions(conn, limit=1):
        if not anchors:
            return pending.not_enabled("gate", "the team has no anchor, and the gate runs on the anchor", ENABLE, now)
        return pending.not_enabled("gate", "no anchor has decided anything yet (items come from obligations that "
                                   "fire, watchers and sessions' proposals)", [OWE, "gitive anchor status"], now)
    since = now - DAYS * 86_400_000
    recent = ledger_reads.decisions(conn, since=since)
    preferences = prefs.all_current(conn, hive.team_id)
    live = gestures.live_people(conn, hive.team_id)
    people = []
    for person in sorted(active_people(conn) | {d["person"] for d in recent}):
        p = preferences.get(person) or prefs.Prefs(person)
        mine = [d for d in recent if d["person"] == person]
        rates = shadow.report(conn, person, {}, since)
        people.append({"person": person, "live": live.get(person, (False, 0))[0],
                       "live_since": live.get(person, (False, 0))[1] or None,
                       "budget": p.budget, "tz": p.tz, "quiet": list(p.quiet) if p.quiet else None,
                       "alarms": p.alarms, "prefs_set": bool(p.ts), "per_day": _per_day(p, mine, now),
                       "decided": len(mine), "rates": rates})
    titles = ledger_reads.item_records(conn, sorted({d["item"] for d in recent[:SHOWN]}))
    for d in recent[:SHOWN]:  # the item's title from its local record (the ledger itself holds no text)
        record = titles.get(d["item"])
        d["title"] = ledger_reads.title_or_why(record)[0]
        d["sealed"] = d["title"] is None and bool((record or {}).get("sealed"))
    branches: dict[str, int] = {}
    for d in recent:
        branches[d["branch"]] = branches.get(d["branch"], 0) + 1
    return {"view": "gate", "enabled": True, "anchors": anchors, "days": DAYS, "since": since,
            "decisions": recent[:SHOWN], "total": len(recent), "branches": branches, "people": people, "now": now}


def _rate(value: int | None, of: int) -> str:
    return f"{value / 10:.0f}% of {of}" if value is not None else '<span class="muted">none yet</span>'


def _person_row(p: dict[str, Any], now: int) -> list[str]:
    r = p["rates"]
    mode = badge("live") + f' <span class="muted">since {ago(p["live_since"], now)}</span>' if p["live"] \
        else badge("shadow") + ' <span class="muted">only floors are sent</span>'
    quiet = f'quiet {h("–".join(p["quiet"]))}' if p["quiet"] else "no quiet hours"
    today = p["per_day"][-1]
    return [f"<strong>{h(p['person'])}</strong>", mode,
            h(f"{today['attention']} of {p['budget']}") + f' <span class="muted">({h(p["tz"])}, {quiet}'
            + (", alarms on" if p["alarms"] else "") + ")</span>",
            h(p["decided"]), _rate(r["acted_on_permille"], r["would_deliver"]),
            _rate(r["missed_permille"], r["held_silenced_digested"])]


def _chart(p: dict[str, Any]) -> str:
    bars = [charts.Bar(d["day"][5:], d["interruptions"], f"{d['attention']} attention"
                       + (f", {d['shadow']} only in shadow" if d["shadow"] else "")) for d in p["per_day"]]
    return charts.bars(f"interruptions-{p['person']}", f"{p['person']}: interruptions per day, last {DAYS} days "
                       f"(budget {p['budget']} attention items a day"
                       + ("" if p["live"] else "; in shadow, would-be interruptions") + ")",
                       "interruptions", bars, limit=p["budget"], limit_label=f"budget {p['budget']}")


def _title(d: dict[str, Any]) -> str:
    if d.get("title"):
        return f'<br><span class="title">{h(d["title"])}</span>'
    if d.get("sealed"):  # say so, not nothing: an anchor's title is sealed to its person's machines
        return f'<br><span class="title muted">title sealed to {h(d["person"])}\'s machines</span>'
    return ""


def _decision_row(d: dict[str, Any], now: int) -> list[str]:
    budget = d.get("budget")
    spent = f' <span class="muted">{budget["used"]}/{budget["of"]}</span>' if budget else ""
    until = f'<br><span class="muted">until {h(iso(d["until"])[11:16])} UTC</span>' if d.get("until") else ""
    return [ago(d["at"], now), f"<strong>{h(d['person'])}</strong>", badge(d["branch"]) + spent + until,
            badge("shadow") if d["shadow"] else badge("live"),
            f'<code>{h(short(d["item"]))}</code>' + _title(d),
            h(d.get("rule") or "") + (f' <span class="muted">({h(d["urgency"])})</span>' if d.get("urgency") else ""),
            command(f"gitive why {short(d['item'])}")]


def render(data: dict[str, Any]) -> str:
    if not data["enabled"]:
        return pending.render_not_enabled("Gate", data)
    now, people = data["now"], data["people"]
    delivered = sum(n for b, n in data["branches"].items() if b in INTERRUPTING)
    out = ["<h1>Gate</h1>", '<div class="stats">', stat(f"decisions, {data['days']} days", data["total"]),
           stat("interrupting", delivered, "warn" if delivered else ""),
           stat("held, digested or silenced", data["total"] - delivered),
           stat("people live", sum(1 for p in people if p["live"]), "live"),
           stat("in shadow", sum(1 for p in people if not p["live"])), "</div>"]
    out.append('<section id="people"><h2>People</h2><p class="muted">A gate in shadow decides and records, and sends '
               "only floors; its person goes live at a terminal (<code>gitive gate live</code>) once the missed-item "
               "rate suits them. Rates here count what the ledger and the index show; a person's own marks "
               "(<code>gitive digest mark</code>) stay on their machine, where <code>gitive gate report</code> "
               "adds them.</p>")
    out.append(table("Each person's gate", ("person", "gate", "attention today (budget)", "decisions",
                                            "acted on (of delivered)", "missed (of held, digested, silenced)"),
                     [_person_row(p, now) for p in people], cls="rows gate-people",
                     row_attrs=[f'tabindex="0" data-person="{h(p["person"])}"' for p in people]))
    out.append("</section>")
    out.append('<section id="interruptions"><h2>Interruptions per day</h2>')
    out.extend(_chart(p) for p in people if p["decided"])
    out.append("</section>")
    out.append('<section id="ledger"><h2>Ledger</h2>')
    points = [charts.Mark(d["person"], d["at"], d["branch"], f"{iso(d['at'])} {d['branch']}: {short(d['item'])} "
                          f"{'(shadow)' if d['shadow'] else ''}") for d in data["decisions"]]
    out.append(charts.marks("ledger-timeline", f"Gate decisions, last {data['days']} days", points, data["since"],
                            now))
    shown = len(data["decisions"])
    caption = "Decisions anchors signed, newest first (the ledger holds no item text: titles come from the item records)"
    if shown < data["total"]:
        caption += f"; the newest {shown} of {data['total']}"
    out.append(table(caption, ("when", "person", "branch", "mode", "item", "rule", "why, at a terminal"),
                     [_decision_row(d, now) for d in data["decisions"]], cls="rows ledger",
                     row_attrs=[f'tabindex="0" data-item="{h(d["item"])}"' for d in data["decisions"]]))
    out.append("</section>")
    return "".join(out)
