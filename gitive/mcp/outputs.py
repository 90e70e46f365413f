"""What each tool returns, as the ``outputSchema`` it declares (MCP 2025-06-18 and later).

The server checks every structured result against its tool's schema before it answers (a result that does not
conform is an error, never sent as if it did), and the conformance test checks the results of real calls with
the ``jsonschema`` library, so these declarations cannot drift from the data. Fields are required unless named
optional; clients ignore fields they do not know, so a schema may list fewer than a result carries.
"""

from __future__ import annotations

from gitive.mcp.schema import Schema, listing, nullable, shape

STRINGS = listing("string")
PAGE = {"offset": "integer", "next_offset": "integer|null"}  # null: this is the last page

LESSON = shape(
    ("score", "reasons"),
    id="string", kind="string", state="string", verified="boolean", scope="string", author="string",
    reviewer="string|null", age_days="number", label="string|null", text="string", applicability="string",
    tags=STRINGS, files=STRINGS, stale=STRINGS, frame="string|null", score="number|null", reasons=STRINGS)

SEARCH = shape(query="string", rephrasings=STRINGS, files=STRINGS, include_proposed="boolean",
               results=listing(LESSON), note="string", **PAGE)

EVIDENCE = shape(("path",), kind="string", ref="string", path="string")
REVIEW = shape(approver="string", approved="boolean", note="string", edited="boolean")
QUOTE = nullable(shape(("about",), speaker="string", words="string", about="string"))
LESSON_FULL = {**LESSON, "properties": {
    **LESSON["properties"], **shape(
        evidence=listing(EVIDENCE), session="string|null", hearsay="boolean", quote=QUOTE,
        reviews=listing(REVIEW), supersedes="string|null", superseded_by="string|null",
        retraction=nullable(shape(reason="string")))["properties"]},
    "required": [*LESSON["required"], "evidence", "session", "hearsay", "quote", "reviews", "supersedes",
                 "superseded_by", "retraction"]}

CONTEXT = shape(task="string", files=STRINGS, card="string", lessons=listing(LESSON),
                more=listing(shape(id="string", summary="string")))

PROPOSED = shape(id="string", created="boolean", state={"type": "string", "enum": ["proposed"]},
                 verified="boolean", scope="string", audience="string", hearsay="boolean", message="string")

SESSION = shape(("in_this_repo", "repo", "branch", "turn", "doing"),
                session="string", harness="string", machine="string", last_seen_minutes_ago="integer",
                files=STRINGS, in_this_repo="boolean", repo="string|null", branch="string|null",
                turn="string|null", doing="string|null")
MACHINE = shape(name="string", machine="string", role="string", active="boolean")
TEAM = shape(people=listing(shape(person="string", you="boolean", active="boolean", machines=listing(MACHINE),
                                  sessions=listing(SESSION))),
             total="integer", note="string", **PAGE)

REASON = shape(("lessons",), kind={"type": "string", "enum": ["commits", "sessions", "wrote", "reviewed"]},
               count="integer", detail="string", lessons=STRINGS)
WHO = shape(query="string", files=STRINGS, files_from={"type": "string", "enum": ["given", "lessons", "none"]},
            people=listing(shape(person="string", you="boolean", score="number", reasons=listing(REASON),
                                 sessions=listing(SESSION))),
            others=listing(shape(email="string", commits="integer")), since_days="integer", note="string",
            routing="string", **PAGE)

EVALUATION = shape(value={"type": "string", "enum": ["satisfied", "unsatisfied", "unverifiable"]},
                   reason="string|null")
OBLIGATION = shape(id="string", owner="string|null", to="string|null", action="string|null",
                   condition="string|null", status="string", evaluation=EVALUATION, deadline="integer|null",
                   expires="integer|null", files=STRINGS,
                   fired=nullable(shape(at="integer", late="boolean", due="integer|null")))
OWED = shape(obligations=listing(OBLIGATION), total="integer", anchors="integer", note="string", **PAGE)
OWE = shape(id="string", created="boolean", owner="string", to="string|null", expires="integer",
            deadline="integer|null", files=STRINGS, note="string")

HEALTH = {"type": "string", "enum": ["complete", "empty", "unavailable"]}


def _section(items: Schema) -> Schema:
    return shape(("reason",), health=HEALTH, reason="string", total="integer", items=listing(items))


CARD = shape(session="string", files=STRINGS, card="string", sections=shape(
    lessons=_section(shape(id="string", kind="string", reviewer="string", text="string", reasons=STRINGS)),
    sessions=_section(shape(session="string", files=STRINGS, turn="string|null")),
    decisions=_section(shape(id="string", approver="string", approved_at="integer|null", text="string")),
    obligations=_section(OBLIGATION)))

SENT = shape(id="string", recipients=STRINGS, note="string", **{"from": "string"})
INBOX = shape(session="string", messages=listing(shape(id="string", state="string", frame="string",
                                                      **{"from": "string"})),
              marked_read=STRINGS, total="integer", note="string", **PAGE)
MAIL = shape(messages=listing(shape(("state",), id="string", direction="string", to="string",
                                    at="integer", snippet="string", state="string|null", **{"from": "string"})),
             note="string", **PAGE)

CLAIM = shape(("note",), path="string", until="integer", note="string")
CLAIMS = shape(session="string", claims=listing(CLAIM),
               claimed_by_others=listing(shape(("note",), path="string", by="string", until="integer",
                                               note="string")),
               note="string")

ITEM = shape(id="string", owner="string", owner_reason="string", fingerprint="string", title="string",
             note="string")

ALL: dict[str, Schema] = {
    "search_memory": SEARCH, "get_lesson": LESSON_FULL, "get_memory_context": CONTEXT,
    "propose_lesson": PROPOSED, "list_team": TEAM, "who_knows": WHO, "owe": OWE, "owed": OWED,
    "context_for": CARD, "send_message": SENT, "check_inbox": INBOX, "search_mail": MAIL,
    "claim_files": CLAIMS, "propose_item": ITEM,
}
