"""Lessons ranked the moment a hook says what arrived: a prompt (prompt-time recall) or a command's error.

The socket's ``prepare`` op runs this in its own thread, with no service lock and a read-only index
connection, so a sync running meanwhile does not hold it up; the picks go into the session's spool, where
the waiting hook (or, if it gave up, the session's next one) takes them.
"""

from __future__ import annotations

from gitive.capture import locate, matching, prepared, sessions, spool
from gitive.core.clock import now_ms


def prepare(harness: str, session: str, hook: str, cwd: str | None, prompt: str | None = None,
            error: str | None = None) -> int:
    """Rank the lessons for what just arrived in ``session`` and leave the picks in its spool; how many.

    No service lock and a read-only index connection: a sync running meanwhile does not hold this up.
    """
    found = locate.find(cwd) if cwd else None
    conn = matching.connect(locate.index_path(found), scratch=True) if found else None
    if conn is None or found is None:
        return 0
    try:
        project = locate.project_id(found)
        shown = sessions.shown(harness, session)
        if prompt:
            from gitive.lessons import prompt_recall

            picks = prompt_recall.best(conn, prompt, project, shown, found.toplevel)
        elif error:
            picks = prepared.for_files(conn, [], error, project, shown, limit=1)
        else:
            picks = []
    finally:
        conn.close()
    sdir = spool.session_dir(harness, session)
    now = now_ms()
    for seq, pick in enumerate(picks):
        spool.put(sdir, {"id": f"lesson:{pick['id']}:{hook}:{now}", "kind": "lesson", "lesson": pick["id"],
                         "frame": pick["frame"], "due": now, "seq": seq})
    return len(picks)
