"""The gate's order, branch by branch (table-driven), and property tests that try to break its rules."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.anchor.gate import items
from gitive.anchor.gate.items import Candidate
from gitive.anchor.gate.order import Context, decide
from gitive.anchor.gate.prefs import Prefs, quiet_end
from gitive.anchor.gate.urgency import Facts

NOON = int(datetime(2026, 12, 1, 12, 0, tzinfo=UTC).timestamp() * 1000)
HOUR = 3_600_000
OB = "a" * 64


def cand(kind: str = "obligation.fired", source: str = "obligation", subject: str = "s", title: str = "TITLE-TEXT",
         about: tuple[dict[str, str], ...] = ({"kind": "obligation", "id": OB},)) -> Candidate:
    c = items.make({"kind": source, "ref": "r"}, kind, subject, "bob", title, NOON, about=list(about))
    return c


def ctx(prefs: Prefs | None = None, live: bool = True, obligation: dict | None = None, seen: str | None = None,
        used: tuple[int, int] = (0, 0), watch: dict | None = None, now: int = NOON,
        waiting: set[str] | None = None) -> Context:
    obs = {OB: obligation} if obligation else {}
    facts = Facts(obs, waiting or set(), watch or {})
    return Context(now, {"bob": prefs or Prefs("bob")}, {"bob": live}, facts,
                   lambda c, p: (seen, f"duplicate of {seen[:12]}") if seen else None, lambda p, d, s: used)


DUE = {"id": OB, "state": "open", "deadline": NOON - HOUR, "to": "alice"}  # passed, someone waits: alarm
SOON = {"id": OB, "state": "open", "deadline": NOON + HOUR, "to": None}  # attention
CALM = {"id": OB, "state": "open", "deadline": None, "to": None}  # info
QUIET = Prefs("bob", quiet=("11:00", "13:00"))
ALARMS = Prefs("bob", alarms=True)
SECURITY = {"security": True, "_event": "e1"}
MUTED = Prefs("bob", muted_kinds=("obligation",))

TABLE = [
    # (what, candidate kwargs, context kwargs, branch, delivered)
    ("security watcher: floor, even in shadow and quiet, muted, duplicate, over budget",
     {"kind": "watch.scan.security", "source": "watcher"},
     {"prefs": replace(QUIET, muted_sources=("watcher",)), "live": False, "seen": "b" * 64, "used": (99, 99),
      "watch": "SEC"}, "floor", True),
    ("screening finding: floor", {"kind": "security.screening", "source": "screening"}, {"live": False}, "floor", True),
    ("muted kind: preference", {}, {"prefs": MUTED, "obligation": DUE}, "preference", False),
    ("muted before duplicate", {}, {"prefs": MUTED, "seen": "b" * 64}, "preference", False),
    ("same fingerprint seen: duplicate", {}, {"seen": "b" * 64, "obligation": DUE, "prefs": ALARMS}, "duplicate",
     False),
    ("duplicate even at night", {}, {"seen": "b" * 64, "prefs": QUIET}, "duplicate", False),
    ("alarm with alarms on: through quiet hours, no budget",
     {}, {"obligation": DUE, "prefs": replace(QUIET, alarms=True), "used": (99, 99)}, "alarm", True),
    ("alarm with alarms off, quiet: hold", {}, {"obligation": DUE, "prefs": QUIET}, "hold", False),
    ("alarm with alarms off, not quiet: digest", {}, {"obligation": DUE}, "digest", False),
    ("attention in quiet hours: hold", {}, {"obligation": SOON, "prefs": QUIET}, "hold", False),
    ("info in quiet hours: hold", {}, {"obligation": CALM, "prefs": QUIET}, "hold", False),
    ("attention within budget: attention", {}, {"obligation": SOON}, "attention", True),
    ("attention in shadow: recorded, not sent", {}, {"obligation": SOON, "live": False}, "attention", False),
    ("attention, budget spent: digest", {}, {"obligation": SOON, "used": (6, 0)}, "digest", False),
    ("attention, source share spent: digest", {}, {"obligation": SOON, "used": (2, 2)}, "digest", False),
    ("info: digest", {}, {"obligation": CALM}, "digest", False),
    ("a digest note: note", {"kind": "digest", "source": "digest", "about": ()}, {"prefs": QUIET}, "note", True),
    ("a digest note in shadow: not sent", {"kind": "digest", "source": "digest", "about": ()}, {"live": False},
     "note", False),
]


@pytest.mark.parametrize(("what", "ckw", "xkw", "branch", "delivered"), TABLE, ids=[t[0] for t in TABLE])
def test_every_branch_in_the_reference_order(what: str, ckw: dict, xkw: dict, branch: str, delivered: bool) -> None:
    c = cand(**ckw)
    if xkw.get("watch") == "SEC":
        xkw = xkw | {"watch": {c.id: SECURITY}}
    d = decide(c, "bob", ctx(**xkw))
    assert (d.branch, d.delivered) == (branch, delivered), d.rule
    record = d.record()
    assert record["branch"] == branch and record["item"] == c.id and "TITLE-TEXT" not in str(record)


def test_hold_until_is_the_end_of_quiet_hours_in_the_persons_zone() -> None:
    berlin = Prefs("bob", quiet=("22:00", "07:00"), tz="Europe/Berlin")
    late = int(datetime(2026, 12, 1, 22, 30, tzinfo=UTC).timestamp() * 1000)  # 23:30 in Berlin
    assert quiet_end(berlin, late) == int(datetime(2026, 12, 2, 6, 0, tzinfo=UTC).timestamp() * 1000)
    assert quiet_end(berlin, NOON) is None
    d = decide(cand(), "bob", ctx(prefs=berlin, obligation=SOON, now=late))
    assert d.branch == "hold" and d.until == quiet_end(berlin, late)


def test_attention_is_shown_by_its_bounded_deferral_and_spends_one_unit() -> None:
    d = decide(cand(), "bob", ctx(obligation=SOON, used=(3, 1)))
    assert d.until == NOON + 10 * 60_000 and d.budget == {"used": 4, "of": 6, "source_used": 2, "source_of": 2}
    assert d.because == [{"rule": "deadline-within-24h", "kind": "obligation", "id": OB}]


# --- properties ------------------------------------------------------------------------------------------------

texts = st.text(max_size=300)
prefs_st = st.builds(
    Prefs, st.just("bob"), budget=st.integers(0, 20), alarms=st.booleans(),
    muted_sources=st.lists(st.sampled_from(["watcher", "screening", "session", "obligation", "watcher:r"]),
                           max_size=3).map(tuple),
    muted_kinds=st.lists(st.sampled_from(["watch", "security", "obligation", "digest", "proposed"]),
                         max_size=3).map(tuple),
    quiet=st.one_of(st.none(), st.tuples(st.sampled_from(["00:00", "11:30", "22:00"]),
                                         st.sampled_from(["06:00", "12:30", "23:59"]))
                    .filter(lambda q: q[0] != q[1])),
    share=st.integers(1, 1000))
obligations = st.sampled_from([DUE, SOON, CALM, None])


@settings(max_examples=150, deadline=None)
@given(title=texts, kind=texts, subject=texts, ob=obligations, p=prefs_st, live=st.booleans())
def test_no_item_text_changes_urgency(title: str, kind: str, subject: str, ob: dict | None, p: Prefs,
                                      live: bool) -> None:
    """The same records with any wording (title, claimed kind, subject) get the same urgency and branch."""
    base = cand(kind="proposed", source="session", title="a calm note", subject="x")
    worded = Candidate(base.id, base.fingerprint, base.source, kind or "proposed", subject, base.owner,
                       items.cut_title(title or "x"), base.about, base.created)
    one = decide(base, "bob", ctx(prefs=replace(p, muted_kinds=()), live=live, obligation=ob))
    two = decide(worded, "bob", ctx(prefs=replace(p, muted_kinds=()), live=live, obligation=ob))
    assert (one.urgency, one.because, one.branch) == (two.urgency, two.because, two.branch)
    assert one.branch != "floor"  # a session's proposal is never a floor, whatever it says


@settings(max_examples=150, deadline=None)
@given(p=prefs_st, live=st.booleans(), seen=st.booleans(), used=st.tuples(st.integers(0, 50), st.integers(0, 50)),
       now=st.integers(NOON - 24 * HOUR, NOON + 24 * HOUR), screening=st.booleans())
def test_floors_pass_every_preference_quiet_hour_budget_and_shadow(p: Prefs, live: bool, seen: bool,
                                                                   used: tuple[int, int], now: int,
                                                                   screening: bool) -> None:
    c = cand(kind="security.screening", source="screening") if screening else \
        cand(kind="watch.scan.security", source="watcher")
    d = decide(c, "bob", ctx(prefs=p, live=live, seen="b" * 64 if seen else None, used=used, now=now,
                             watch={c.id: SECURITY}))
    assert d.branch == "floor" and d.delivered and "inbox" in d.channel


@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_a_proposal_cannot_claim_a_floor(data: st.DataObject) -> None:
    """A session's item named like a security finding, with any watch data, stays a session item."""
    kind = data.draw(st.sampled_from(["security.screening", "watch.scan.security", "security", "floor"]))
    c = cand(kind=kind, source="session")
    d = decide(c, "bob", ctx(watch={c.id: SECURITY}, obligation=CALM))
    assert d.branch != "floor"


def test_screening_rules_load_once_and_again_when_a_rule_file_changes(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.anchor.gate import floors

    monkeypatch.setenv("GITIVE_HOME", str(tmp_path))
    entry = {"record": {"body": "please run the flamingo protocol now", "from": "bob/s1", "from_person": False}}
    assert floors.screen_messages([entry]) == []
    from gitive.daemon.screening import load_rules

    first = load_rules()
    again = load_rules()  # nothing changed: read, not parsed, compiled and checked again
    assert first and all(a is b for a, b in zip(again, first, strict=True))
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "flamingo.yaml").write_text(
        "id: local/flamingo\ntitle: the flamingo word\nseverity: hold\ncondition: m.lower.matches('flamingo')\n"
        "examples:\n  match:\n    - flamingo now\n  no_match:\n    - a heron\n")
    assert floors.screen_messages([entry]) == [(entry, ["local/flamingo"])]
