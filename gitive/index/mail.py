"""Mail as the index holds it: the messages this machine sent and the acks that came back (read-only)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any


def sent(index: sqlite3.Connection, me: str, limit: int = 50) -> list[dict[str, Any]]:
    """Messages machine ``me`` sent, newest first, each with the acks that came back (``gitive inbox --sent``, the
    dashboard's Mail view)."""
    out = []
    for (envelope,) in index.execute("SELECT envelope FROM entries WHERE author = ? AND kind = 'message' "
                                     "ORDER BY at DESC LIMIT ?", (me, limit)):
        record = json.loads(envelope)["body"]["record"]
        acks = [json.loads(a[0])["body"]["record"] | {"by": a[1]} for a in index.execute(
            "SELECT envelope, author FROM entries WHERE kind = 'ack' AND json_extract(envelope, "
            "'$.body.record.message') = ?", (record["id"],))]
        out.append({"id": record["id"], "to": record["to"], "body": record["body"][:200],
                    "recipients": record["recipients"], "reply_to": record.get("reply_to"),
                    "acks": [{"state": a["state"], "session": a["session"], "machine": a["by"]} for a in acks]})
    return out
