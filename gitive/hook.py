"""``gitive-hook <harness> <event>``: record the event, then answer with what this session should see.

The entry point stands on the top floor, beside the CLI: it drives capture's adapters, event log and spool,
and (without a daemon) recall's prompt ranking, which ``capture`` itself may not import.

The hot path imports only the standard library (pygit2, Typer and mcp would cost 85 to 660 ms). Whatever goes
wrong (a bad payload, no index, a slow or stopped daemon, a lock someone holds), the answer is the harness's
no-opinion reply and exit 0, within one deadline (:mod:`gitive.capture.deadline`, counted from when this code
starts): a telemetry or recall failure must never become a control decision for an agent, nor hold one up.

With a daemon running, the answer was prepared before the call (:mod:`gitive.capture.spool`): the card and
each cited file's lessons per repository, and the session's due messages, notices and ranked lessons as one
file each. The call reads those files, claims what fits by renaming it, writes its reply and acknowledges by
renaming again: file I/O only. At a prompt (or a failed command) it also tells the daemon what arrived, which
ranks the lessons for it while the call records its event, and waits for that a little while (what comes
later goes at the next call). Without a daemon the call computes the same answers from the index itself.

A teammate's text goes only into a context channel and only whole: lessons and queued items are packed into
the harness's cap, an item that does not fit waits for the next call (and then goes first), and only what the
reply carries is acknowledged, after the reply is written. Whatever could not be carried is recorded with its
reason (:mod:`gitive.capture.deliveries`) once the reply is out.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from gitive.capture import daemon_client, spool
from gitive.capture.adapters import ADAPTERS, EVENTS
from gitive.capture.adapters.base import NO_OPINION, Adapter, fits
from gitive.capture.deadline import Deadline
from gitive.capture.deliveries import Book

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from gitive.capture import locate

MAX_STDIN = 8 * 1024 * 1024
SEPARATOR = "\n\n"
PREPARE_WAIT_S = {"prompt": 1.0, "post-tool-failure": 0.4}  # how long a call waits for the daemon's ranking
_HEXISH = re.compile(r"\b[0-9a-f]{10,64}\b")


class Carried:
    """What a reply carries from the spool, to acknowledge once it is written (or put back if it is not)."""

    __slots__ = ("book", "claims", "consumed", "lessons", "mail", "read", "sdir")

    def __init__(self, sdir: Path | None, book: Book) -> None:
        self.sdir, self.book = sdir, book
        self.lessons: list[dict[str, Any]] = []  # taken from the session's state (owed or chosen) into the reply
        self.claims: list[Path] = []  # claimed and in the reply
        self.consumed: list[Path] = []  # claimed, not shown (a lesson already shown): done without printing
        self.mail = False  # a message or notice among them: the daemon is told at once
        self.read = False  # the session's last call delivered mail and it took another turn: it was read


def _connect(found: locate.Located | None, deadline: Deadline, book: Book, scratch: bool = False
             ) -> sqlite3.Connection | None:
    """A read-only index connection whose queries stop at the deadline (None: no index, or out of time)."""
    from gitive.capture import locate, matching

    if found is None:
        return None
    if deadline.expired():
        book.miss("deadline", "the budget was spent before the index could be read")
        return None
    conn = matching.connect(locate.index_path(found), scratch)
    if conn is not None:
        conn.execute(f"PRAGMA busy_timeout = {max(0, int(deadline.left() * 1000))}")
        conn.set_progress_handler(deadline.expired, 1000)  # a query past the deadline is interrupted
    return conn


def _computed(kind: str, event: dict[str, Any], payload: dict[str, Any], found: locate.Located | None,
              shown: set[str], deadline: Deadline, book: Book) -> tuple[list[dict[str, Any]], str]:
    """Lessons (and, at session start, the owed lines) computed from the index in this call."""
    import sqlite3

    from gitive.capture import locate, prepared

    conn = _connect(found, deadline, book, scratch=kind == "prompt")  # recall reads word counts in temp
    if conn is None or found is None:
        return [], ""
    project = locate.project_id(found)
    session = event.get("session") or {}
    try:
        if kind == "session-start":
            files = prepared.recent_files(session.get("id"), session.get("working_directory"), deadline)
            lessons = [c for c in prepared.card(conn, files, project, prepared.CARD_LESSONS + len(shown))
                       if c["id"] not in shown][:prepared.CARD_LESSONS]
            return lessons, prepared.owed_block(conn, files)
        if kind == "prompt":
            from gitive.lessons import prompt_recall

            text = str((event.get("prompt") or {}).get("text") or "")
            return prompt_recall.best(conn, text, project, shown, found.toplevel, dense=False), ""
        files, error = _tool_match(event)
        return (prepared.for_files(conn, files, error, project, shown) if files or error else []), ""
    except sqlite3.Error as exc:
        book.miss("index", f"no lessons this time: the index query failed or ran out of time ({exc})")
        return [], ""
    finally:
        conn.close()


def _tool_match(event: dict[str, Any]) -> tuple[list[str], str | None]:
    """The files a tool call touched, and its error text when it failed."""
    files = (event.get("file") or {}).get("paths", [])
    failed = (event.get("command") or {}).get("exit_code") not in (None, 0)
    return files, ((event.get("output") or {}).get("text", "") if failed else None)


def _prepared(kind: str, event: dict[str, Any], found: locate.Located, shown: set[str]
              ) -> tuple[list[dict[str, Any]], str] | None:
    """Lessons the daemon prepared for this moment; None when it prepared nothing for this repository."""
    if kind == "session-start":
        card = spool.card(found.toplevel)
        if card is None:
            return None
        lessons = [c for c in card["lessons"] if isinstance(c, dict) and c.get("id") not in shown]
        return lessons[:5], str(card.get("owed") or "")
    files, _ = _tool_match(event)
    if not files:
        return [], ""
    matches = spool.file_matches(found.toplevel, files)
    if matches is None or (len(matches) < len(files) and not spool.files_complete(found.toplevel)):
        return None
    hits = sorted((h for found_ in matches.values() for h in found_ if h["id"] not in shown),
                  key=lambda h: -float(h.get("score") or 0))
    return hits[:1], ""


def _lessons(kind: str, event: dict[str, Any], payload: dict[str, Any], found: locate.Located | None,
             shown: set[str], alive: bool, ranked: bool | None, deadline: Deadline, book: Book
             ) -> tuple[list[dict[str, Any]], str, str]:
    """The lessons this moment calls for, the card's owed lines, and where they came from ("prepared" by the
    daemon, "computed" here): prepared when a daemon is there, else computed. ``ranked``: the daemon said it
    ranked this call's prompt or error (the picks come through the spool), False when it did not in time
    (then this call ranks them itself), None when it was not asked."""
    if found is None or kind not in ("session-start", "prompt", "post-tool", "post-tool-failure"):
        return [], "", "none"
    if ranked and kind == "prompt":
        return [], "", "none"
    if alive and kind != "prompt" and ranked is not False:
        ready = _prepared(kind, event, found, shown)
        if ready is not None:
            return (*ready, "prepared")
    return (*_computed(kind, event, payload, found, shown, deadline, book), "computed")


def _pack(head: str | None, frames: list[str], cap: int) -> tuple[str, int]:
    """``head`` and as many whole ``frames`` as fit ``cap`` bytes, in order; and how many were taken."""
    text, taken = head or "", 0
    for frame in frames:
        candidate = f"{text}\n{frame}" if text else frame
        if not fits(candidate, cap):
            break
        text, taken = candidate, taken + 1
    return (text if taken else ""), taken


def _ask_prepare(adapter: Adapter, kind: str, session: str, cwd: str | None, what: dict[str, Any],
                 deadline: Deadline) -> daemon_client.Call | None:
    """Tell the daemon what just arrived (the prompt, a command's error) so it ranks the lessons for it and
    leaves them in this session's spool; the reply says it is done."""
    wait = min(PREPARE_WAIT_S.get(kind, 0.4), max(0.0, deadline.left()))
    return daemon_client.ask({"op": "prepare", "harness": adapter.name, "session": session, "hook": kind,
                              "cwd": cwd, "until": deadline.wall_ms(), **what}, budget=wait, deadline=deadline)


def _wait_prepared(call: daemon_client.Call | None, deadline: Deadline, book: Book) -> bool:
    """Wait for the daemon's ranking; false when it did not say it was done in time (recorded: what it
    ranks later goes at the next call, and this call ranks them itself if time is left)."""
    reply = daemon_client.answer(call, deadline)
    if reply is not None and reply.get("ok"):
        return True
    book.miss("prepare-late" if call is not None else "prepare-unreachable",
              "the daemon had not ranked the lessons for this call in time (it was busy or stopped); this call "
              "ranked them itself" if call is not None else
              "the daemon did not take the request; this call ranked the lessons itself")
    return False


def _cited(text: str, shown: set[str]) -> set[str]:
    return {lesson for token in _HEXISH.findall(text) for lesson in shown if lesson.startswith(token)}


def _citation_text(kind: str, payload: dict[str, Any], event: dict[str, Any]) -> str:
    parts = [json.dumps((event.get("tool") or {}), default=str), json.dumps(payload.get("tool_input"), default=str)]
    if kind == "stop" and isinstance(payload.get("last_assistant_message"), str):
        parts.append(payload["last_assistant_message"][-65536:])  # the transcript may not hold this turn yet
    transcript = payload.get("transcript_path")
    if kind in ("stop", "session-end") and isinstance(transcript, str):
        try:
            with open(transcript, "rb") as fh:
                fh.seek(0, 2)
                fh.seek(max(0, fh.tell() - 65536))
                parts.append(fh.read().decode("utf-8", "replace"))
        except OSError:
            pass
    return "\n".join(parts)


def _record_citations(state: dict[str, Any], kind: str, payload: dict[str, Any], event: dict[str, Any],
                      harness: str, session: str | None, cwd: str | None) -> set[str]:
    from gitive.capture import events

    shown = set(state["shown"])
    cited = _cited(_citation_text(kind, payload, event), shown) - set(state.get("cited", []))
    for lesson in sorted(cited):
        events.append(events.make("lesson.cited", harness=harness, session=session, cwd=cwd,
                                  lesson={"id": lesson}))
    state["cited"] = sorted(set(state.get("cited", [])) | cited)
    return shown


class Taken:
    """What one pass over the spool took: frames, the lesson ids among them, the names left for later."""

    __slots__ = ("deferred", "lessons", "texts", "used")

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.lessons: list[str] = []
        self.deferred: list[str] = []
        self.used = 0


def _spooled(adapter: Adapter, kind: str, carried: Carried, lessons_ok: bool, shown: set[str], room: int,
             only: set[str] | None = None, skip: frozenset[str] | set[str] = frozenset()) -> Taken:
    """Claim, oldest first, the spooled items this reply can carry whole within ``room`` bytes (``only``:
    just those names; ``skip``: not those). A lesson needs the session's memory of what it saw
    (``lessons_ok``); mail needs a mail channel."""
    taken, sdir = Taken(), carried.sdir
    if sdir is None or kind not in adapter.context:
        return taken
    for name, item in spool.ready(sdir):
        if (only is not None and name not in only) or name in skip:
            continue
        is_lesson = item.get("kind") == "lesson"
        if (is_lesson and not lessons_ok) or (not is_lesson and kind not in adapter.mail):
            continue
        if is_lesson and item.get("lesson") in shown | set(taken.lessons):
            if (claimed := spool.claim(sdir, name)) is not None:
                carried.consumed.append(claimed)  # shown already (the card had it): done, not shown twice
            continue
        size = len(item["frame"].encode("utf-8", "surrogatepass")) + (len(SEPARATOR) if taken.texts else 0)
        if taken.deferred or taken.used + size > room:
            taken.deferred.append(name)  # whole or not at all, and in order
            continue
        if (claimed := spool.claim(sdir, name)) is None:
            continue  # another hook of this session took it first
        carried.claims.append(claimed)
        taken.texts.append(item["frame"])
        taken.used += size
        if is_lesson:
            taken.lessons.append(str(item.get("lesson")))
        else:
            carried.mail = True
    return taken


def _injected(harness: str, session: str | None, cwd: str | None, kind: str, lessons: list[tuple[str, str]]
              ) -> None:
    """One event per lesson shown, saying how it was chosen: ``prepared`` (the daemon's card or file matches),
    ``computed`` (by this call, from the index), ``daemon`` (ranked by the daemon for this session)."""
    from gitive.capture import events

    for lesson, via in lessons:
        events.append(events.make("team.lesson.injected", harness=harness, session=session, cwd=cwd,
                                  lesson={"id": lesson}, delivery={"tier": "turn", "hook": kind, "via": via}))


def handle(harness: str, kind: str, payload: dict[str, Any], deadline: Deadline | None = None
           ) -> tuple[str, Carried | None]:
    """Record one hook call; return what to print and what it carries from the spool (to acknowledge once
    it is printed). Never raises on a bad payload (the caller guards anyway)."""
    deadline = deadline or Deadline(age=0, start=_now(), event=kind)
    adapter = ADAPTERS[harness]
    asked, cwd = adapter.session_key(payload), adapter.cwd_key(payload)
    alive = spool.daemon_alive()
    prompt = payload.get("prompt") or payload.get("user_prompt")
    ranks = alive and bool(asked) and kind == "prompt" and kind in adapter.context and isinstance(prompt, str)
    call = _ask_prepare(adapter, kind, asked, cwd, {"prompt": prompt}, deadline) if ranks else None

    from gitive.capture import events, locate, normalize

    found = locate.find(cwd) if cwd else None
    event = events.append(normalize.event_for(adapter, kind, payload, found.toplevel if found else None))
    session = (event.get("session") or {}).get("id")
    book = Book(harness, session, cwd, kind)
    _, error = _tool_match(event) if kind in ("post-tool", "post-tool-failure") else ([], None)
    if alive and asked and error and found is not None and kind in adapter.context:
        ranks = True
        call = _ask_prepare(adapter, "post-tool-failure", asked, cwd, {"error": error[-4000:]}, deadline)
    carried = Carried(spool.session_dir(harness, asked) if asked else None, book)
    context = _compose(adapter, kind, payload, event, found, alive, (call, ranks), carried, deadline)
    out = adapter.reply(kind, context or None, payload)
    return out, carried


def _now() -> float:
    import time

    return time.monotonic()


def _compose(adapter: Adapter, kind: str, payload: dict[str, Any], event: dict[str, Any],
             found: locate.Located | None, alive: bool, ranking: tuple[daemon_client.Call | None, bool],
             carried: Carried, deadline: Deadline) -> str:
    """The reply's context, within the harness's cap, each piece whole: first what earlier calls had no room
    for (their lessons and owed lines, kept in the session's state, then their spooled items), then this
    moment's lessons (the card's head and owed lines at session start), then what else the
    spool holds for the session, oldest first."""
    from gitive.capture import sessions

    harness, book = adapter.name, carried.book
    session, cwd = (event.get("session") or {}).get("id"), adapter.cwd_key(payload)
    # Before taking the session's state: another hook of the session need not wait for this.
    ranked = _wait_prepared(ranking[0], deadline, book) if ranking[1] else None
    with sessions.state(harness, session or "-", deadline) as state:
        if state is None:
            book.miss("session-locked", "another hook of this session holds its state (stopped or slow): no "
                      "lessons this call, queued messages still go")
        if carried.sdir is not None and kind in adapter.context:
            book.reclaimed(spool.reclaim(carried.sdir))
        shown = _record_citations(state, kind, payload, event, harness, session, cwd) if state is not None \
            else set()
        owing = [o for o in (state or {}).get("owed") or [] if isinstance(o, dict) and o.get("id") not in shown]
        channel = kind in adapter.context
        owed_text, owed_taken = _owed(owing, channel, adapter.cap, book)
        owed_ids = {str(o.get("id")) for o in owing if o.get("id")}
        left = adapter.cap - _size(owed_text)
        late = set((state or {}).get("deferred") or [])
        early = _spooled(adapter, kind, carried, state is not None, shown | owed_ids, left, only=late) if late \
            else Taken()
        lessons, owed_here, via = ([], "", "none") if state is None or kind not in adapter.context else \
            _lessons(kind, event, payload, found, shown | owed_ids, alive, ranked, deadline, book)
        cap = left - early.used - (len(SEPARATOR) if early.used else 0)
        head = prepared_head() if kind == "session-start" else None
        text, taken = _pack(head, [c["frame"] for c in lessons], cap)
        chosen = [c["id"] for c in lessons[:taken]]
        dropped = [{"id": c["id"], "frame": c["frame"], "via": via} for c in lessons[taken:]]
        if dropped and head and not taken:  # the card's head goes with its lessons
            dropped[0]["frame"] = f"{head}\n{dropped[0]['frame']}"
        if owed_here and fits(joined := SEPARATOR.join(t for t in (text, owed_here) if t), cap):
            text = joined
        elif owed_here:
            dropped.append({"id": "", "frame": owed_here, "via": via})
        if dropped:  # owed to the session: its next calls carry them first, until shown
            book.miss("no-room", f"{len(dropped)} item(s) (lessons, owed lines) did not fit the {cap} bytes "
                      "left in this reply after the items it owed first; the next call carries them first")
        room = cap - _size(text)
        rest = _spooled(adapter, kind, carried, state is not None, shown | owed_ids | set(chosen) |
                        set(early.lessons), room, skip=late)
        from_spool = early.lessons + rest.lessons
        late_ones = [(str(o["id"]), str(o.get("via") or "computed")) for o in owing[:owed_taken] if o.get("id")]
        _injected(harness, session, cwd, kind, [*late_ones, *((c, via) for c in chosen),
                                                *((c, "daemon") for c in from_spool)])
        book.deferred(len(early.deferred) + len(rest.deferred) + (len(owing) - owed_taken if channel else 0),
                      room - rest.used)
        if state is not None:
            state["deferred"] = early.deferred + rest.deferred
            state["shown"] = sorted(shown | set(chosen) | set(from_spool) | {i for i, _ in late_ones})
            if session:  # a session without an id has no next call to carry them
                state["owed"] = owing[owed_taken:] + dropped
                carried.lessons = owing[:owed_taken] + [{"id": c["id"], "frame": c["frame"], "via": via}
                                                        for c in lessons[:taken]]
                if head and taken:  # the card's head goes with its lessons, if they come back
                    first = carried.lessons[owed_taken]
                    first["frame"] = f"{head}\n{first['frame']}"
            carried.read = bool(state.get("mail_out"))
            state["mail_out"] = carried.mail
    return SEPARATOR.join([t for t in (owed_text, *early.texts, text, *rest.texts) if t])


def _size(text: str) -> int:
    """Bytes ``text`` takes in a reply, with the separator after it."""
    return len(text.encode("utf-8", "surrogatepass")) + len(SEPARATOR) if text else 0


def _owed(owing: list[dict[str, Any]], channel: bool, cap: int, book: Book) -> tuple[str, int]:
    """What earlier calls had no room for, first in line: as many whole items as fit ``cap``, in order, and
    how many. An item larger than any reply is given up (recorded), else it would block the line forever."""
    if not channel:
        return "", 0
    for item in [o for o in owing if not fits(str(o.get("frame") or ""), cap)]:
        owing.remove(item)
        book.miss("too-large", f"an item of {len(str(item.get('frame') or ''))} characters can never fit this "
                  f"harness's {cap}-byte reply; given up")
    return _pack(None, [str(o.get("frame") or "") for o in owing], cap)


def prepared_head() -> str:
    from gitive.capture import prepared

    return prepared.CARD_HEAD


def acknowledge(carried: Carried | None, deadline: Deadline, written: bool = True) -> None:
    """After the reply is written: hand what it carried to the daemon as delivered (or, when it could not
    be written, back to the queue), then record what went wrong in this call."""
    if carried is None:
        return
    if carried.sdir is not None:
        for claimed in carried.consumed:
            spool.ack(carried.sdir, claimed)
        for claimed in carried.claims:
            if written:
                spool.ack(carried.sdir, claimed)
            else:
                spool.release(carried.sdir, claimed)
        if not written and carried.claims:
            carried.book.miss("reply-unwritten", "the harness closed the pipe before the reply was written; "
                              f"{len(carried.claims)} item(s) queued again")
        if written and (carried.mail or carried.read):  # booked now, not at the daemon's next round
            daemon_client.notify({"op": "spooled", "harness": carried.book.harness, "read": carried.read,
                                  "session": carried.book.session}, budget=max(0.0, deadline.final()))
    if not written and carried.lessons:
        _owe_again(carried, deadline)
    carried.book.flush()


def _owe_again(carried: Carried, deadline: Deadline) -> None:
    """The reply was not written: the lessons it took from the session's state are owed again, first."""
    from gitive.capture import sessions

    book = carried.book
    with sessions.state(book.harness, book.session or "-", deadline) as state:
        if state is not None:
            back = {str(o.get("id")) for o in carried.lessons if o.get("id")}
            state["shown"] = sorted(set(state["shown"]) - back)
            state["owed"] = carried.lessons + [o for o in state.get("owed") or [] if o.get("id") not in back]
    book.miss("reply-unwritten", f"the harness closed the pipe; {len(carried.lessons)} lesson(s) "
              + ("owed again" if state is not None else "lost: the session's state was locked"))


def respond(argv: list[str], stdin: Any, deadline: Deadline | None) -> tuple[str, Carried | None]:
    harness, kind = [*argv, "", ""][:2]
    adapter = ADAPTERS.get(harness)
    if adapter is None or kind not in EVENTS:
        print(f"gitive-hook: unknown harness or event {harness!r} {kind!r}", file=sys.stderr)
        return NO_OPINION, None
    try:
        from gitive.capture import normalize

        raw = stdin.buffer.read(MAX_STDIN) if hasattr(stdin, "buffer") else stdin.read(MAX_STDIN)
        payload = normalize.parse_payload(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass"))
        if not isinstance(payload, dict):
            return NO_OPINION, None
        return handle(harness, kind, payload, deadline or Deadline(event=kind))
    except Exception as exc:  # fail open: report on stderr, answer no-opinion
        print(f"gitive-hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return NO_OPINION, None


def run(argv: list[str], stdin: Any, deadline: Deadline | None = None) -> str:
    """One hook call in this process (the deadline starts now, not at process start); returns the reply."""
    if len(argv) >= 2 and argv[0] == "git":
        from gitive.capture import githooks

        githooks.main(argv[1], argv[2:], stdin.read() if argv[1] == "post-rewrite" else "")
        return ""
    kind = argv[1] if len(argv) > 1 else None
    deadline = deadline or Deadline(age=0, start=_now(), event=kind)
    out, carried = respond(argv, stdin, deadline)
    acknowledge(carried, deadline)
    return out


def main() -> None:
    argv = sys.argv[1:]
    deadline = Deadline(event=argv[1] if len(argv) > 1 else None)
    out, carried = "", None
    try:
        if argv[:1] == ["git"]:
            out = run(argv, sys.stdin)
        else:
            out, carried = respond(argv, sys.stdin, deadline)
    except BaseException as exc:  # even SystemExit or KeyboardInterrupt: answer and exit 0
        print(f"gitive-hook: {type(exc).__name__}", file=sys.stderr)
        out = NO_OPINION if argv[:1] != ["git"] else ""
    written = False
    try:
        if out:
            sys.stdout.write(out + "\n")
        sys.stdout.flush()
        written = True
    except BaseException:  # a harness that closed the pipe: nothing was delivered, nothing acknowledged
        pass
    try:
        acknowledge(carried, deadline, written)
        sys.stderr.flush()
    except BaseException:
        pass
    if argv[:1] == ["git"]:
        sys.exit(0)
    os._exit(0)  # skip interpreter teardown: the harness is waiting for the exit


if __name__ == "__main__":
    main()
