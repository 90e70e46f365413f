"""The tools, one declaration each: name, title, what it does, its arguments and result, its hints, its handler.

This table is the whole surface of ``gitive mcp``. The stdio front lists it before the SDK has loaded, the SDK
server serves it, ``gitive mcp --tools`` prints it, and tests hold ``docs/mcp.md`` and the README to it. No
tool approves, rejects or retracts a lesson, or changes the roster; read tools are read-only.

Standard library only (named tuples, not dataclasses, which would load ``inspect`` before the first answer):
handlers are named as ``"module:function"`` and imported at their first call, and each
is called as ``function(repo, **arguments)`` with the schema's defaults filled in.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from gitive.mcp import outputs
from gitive.mcp.schema import Schema, arguments, array, boolean, integer, text

# core.records.LESSON_KINDS and lessons.model.SCOPES (a test holds them equal): importing those modules would
# load blake3 and the record checks before the front's first answer.
LESSON_KINDS = ("Convention", "Correction", "Gotcha", "Decision", "Routing", "Preference")
SCOPES = ("project", "team", "personal")
MAX_QUERY = 2_000
MAX_PATH = 1_024
MAX_FILES = 32
MAX_ID = 64  # lesson, routing and obligation ids are 64 hex characters; a prefix is shorter
MAX_SESSION = 200  # person/session-name, or a harness's session id
MAX_PERSON = 64
MAX_MESSAGE = 64 * 1024  # records.MAX_MESSAGE_BODY (in UTF-8 bytes, checked when the message is built)


class Hints(NamedTuple):
    """MCP tool annotations. ``idempotent``: the same call again has no further effect."""

    read_only: bool
    idempotent: bool
    destructive: bool = False
    open_world: bool = False  # every tool stays inside the team's own stores


READ = Hints(read_only=True, idempotent=True)
WRITE_ONCE = Hints(read_only=False, idempotent=True)  # the same call again returns what the first wrote
WRITE_EACH = Hints(read_only=False, idempotent=False)  # every call writes one more record


class Tool(NamedTuple):
    name: str
    title: str
    call: str  # "module:function", called as function(repo, **arguments)
    hints: Hints
    description: str
    inputs: Schema
    output: Schema
    text: str | None = None  # "module:function" giving the model's text from the result; None: the JSON
    ids: tuple[tuple[str, str], ...] = ()  # (argument, what it names): an id over its cap names nothing here

    def wire(self) -> dict[str, Any]:
        """The tool as ``tools/list`` carries it."""
        h = self.hints
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.inputs, "outputSchema": self.output,
                "annotations": {"title": self.title, "readOnlyHint": h.read_only, "destructiveHint": h.destructive,
                                "idempotentHint": h.idempotent, "openWorldHint": h.open_world}}


def _files(what: str = "Paths relative to the repository root you are working on.") -> Schema:
    return array(text("A path relative to the repository root.", MAX_PATH, min_length=1), what, MAX_FILES)


def _session(what: str = "Your own session's address (person/name) if several run here.") -> Schema:
    return text(what, MAX_SESSION)


def _limit(most: int, default: int) -> Schema:
    return integer(f"Results per page; a page holds at most {most}.", 1, default=default)


OFFSET = integer("Where the page starts: pass the previous result's next_offset.", 0, default=0)
QUERY = text("What you are looking for, in your own words (an error text works).", MAX_QUERY, default="")
LESSON_ID = text("A lesson id, or at least its first 6 characters.", MAX_ID, min_length=1)
MEM = "gitive.mcp.memory"

TOOLS: tuple[Tool, ...] = (
    Tool("search_memory", "Search team memory", f"{MEM}:search_memory", READ,
         "Find the team's lessons for a question and the files in play, best first (verified only by default). "
         "Pass two or three rephrasings of the question: the lesson you need may use other words. Each result "
         "has its provenance (author, reviewer, age_days, verified, stale files) and a ready-to-paste "
         "<team-memory> frame.",
         arguments(query=QUERY, files=_files(), include_proposed=boolean(
             "Also show lessons not reviewed yet (labelled)."), limit=_limit(20, 10), offset=OFFSET,
             rephrasings=array(text("Another wording.", MAX_QUERY), (
                 "Up to 4 other wordings of the same question: the symptom as an error would say it, the task "
                 "as you would describe it, the words a teammate might have used. Each is searched and the "
                 "rankings are fused."), 4)),
         outputs.SEARCH, text=f"{MEM}:search_text"),
    Tool("get_lesson", "Read one lesson", f"{MEM}:get_lesson_tool", READ,
         "One lesson in full: text, state, provenance, evidence (stale files flagged), reviews, quote.",
         arguments(("id",), id=LESSON_ID), outputs.LESSON_FULL, ids=(("id", "lesson"),)),
    Tool("get_memory_context", "Team memory for a task", f"{MEM}:memory_context", READ,
         "The team-memory card for a task and files: the top verified lessons in <team-memory> frames, the "
         "next ones as one-line summaries. Call it when you start a task.",
         arguments(task=text("The task you are starting, in a sentence or two.", MAX_QUERY, default=""),
                   files=_files()),
         outputs.CONTEXT, text=f"{MEM}:card_text"),
    Tool("propose_lesson", "Propose a lesson", f"{MEM}:propose_lesson", WRITE_ONCE,
         "Propose a lesson for the team. It stays proposed until a person reviews it; agents cannot approve. "
         "Proposing the same lesson again returns its id with created false. A write-time rule (no evidence, "
         "a Decision without a quote, a quote not in the evidence) comes back as an error saying what to fix.",
         arguments(
             ("kind", "text", "evidence"),
             kind=text("What sort of lesson it is.", 16, enum=LESSON_KINDS),
             text=text("The lesson.", 1_200, min_length=1),
             evidence=array(text("commit:REV, file:PATH[@REV], event:ID or message:ID.", MAX_PATH + 80,
                                 min_length=1),
                            "Where it comes from: commit:REV, file:PATH[@REV], event:ID, message:ID. At least one.",
                            32, min_items=1),
             applicability=text("When it applies.", 400, default=""),
             tags=array(text("A tag.", 64, min_length=1), "A few tags.", 10),
             scope=text("Who it is for: this project (the default), the whole team, or only your person.", 16,
                        enum=SCOPES, default="project"),
             quote=text("A person's literal words (Decision and Preference need one); they must appear in "
                        "the cited evidence.", 1_000),
             speaker=text("Who said the quoted words.", MAX_PERSON),
             about=text("Whom the quote is about, if not the speaker.", MAX_PERSON),
             session=_session("Your session's address, e.g. alice/api-claude."),
             symptoms=array(text("One symptom.", 300, min_length=1), (
                 "How the problem shows up, so a later agent who meets it finds this lesson: the telling error "
                 "line(s), and two or three questions this lesson answers, worded as someone stuck would ask "
                 "them (not in the lesson's own words)."), 8)),
         outputs.PROPOSED),
    Tool("list_team", "List the team", "gitive.mcp.roster:list_team_tool", READ,
         "The team: persons, their machines and roles (you are marked), and live agent sessions seen here.",
         arguments(filter=text("Only persons or machines whose name contains this.", MAX_PERSON, default=""),
                   include_inactive=boolean("Also removed machines."), limit=_limit(20, 20), offset=OFFSET),
         outputs.TEAM),
    Tool("who_knows", "Find who knows", "gitive.mcp.experts:who_knows_tool", READ,
         "Who to ask about a file, an error text or a topic: people ranked by recent commits to the files, "
         "agent sessions that touched them, and matching lessons they wrote or reviewed, each with reasons. If "
         "you then message one of them, pass the answer's routing id to send_message.",
         arguments(query=QUERY, files=_files(), limit=_limit(20, 10), offset=OFFSET), outputs.WHO),
    Tool("owe", "Record an obligation", "gitive.mcp.obligations:owe", WRITE_ONCE,
         "Record a promise your person owes once a condition holds. The same promise again (same to, "
         "condition, action, deadline and files, still open) returns the first one's id with created false. A "
         "condition that does not compile or names a field the event vocabulary lacks is refused with the "
         "reason and the right spelling.",
         arguments(
             ("to", "condition", "action"),
             to=text("Who it is owed to: a person, or a session person/name.", MAX_SESSION, min_length=1),
             condition=text('When it becomes due: CEL over one event e, e.g. e.event.action == "vcs.merged" && '
                            'e.vcs.branch == "auth-rotation". Field names: docs/events.md.', 2_000, min_length=1),
             action=text("What your person then owes.", 500, min_length=1),
             deadline=text("By when: 2026-12-20 or an ISO time.", 40),
             expires=text("Lapses unless renewed after this long: 7d by default, at most 90d.", 16),
             files=_files("Files it is about."), session=_session("Your session's address, e.g. alice/api-claude.")),
         outputs.OWE),
    Tool("owed", "List obligations", "gitive.mcp.obligations:owed", READ,
         "Open obligations with owners, conditions and their evaluation: satisfied, unsatisfied, or "
         "unverifiable with the reason (never read unverifiable as nothing owed).",
         arguments(person=text("Only what this person owes or is owed.", MAX_SESSION),
                   project=boolean("Only obligations written in this repository."),
                   event=text("Only those waiting for this event action, e.g. vcs.merged.", 100),
                   limit=_limit(50, 20), offset=OFFSET),
         outputs.OWED),
    Tool("context_for", "Session card", "gitive.mcp.context:context_for", READ,
         "The session card: lessons for its files, live sessions nearby, recent decisions, obligations on its "
         "files; each section says whether it is complete, empty or unavailable, and how many it holds.",
         arguments(("session",), session=text("A session's address (person/name), e.g. yours.", MAX_SESSION,
                                              min_length=1)),
         outputs.CARD, text=f"{MEM}:card_text"),
    Tool("send_message", "Message a session", "gitive.mcp.mail:send_message_tool", WRITE_EACH,
         "Send a message to one teammate's agent session; it sees it at its next tool call or session start, "
         "as context, never as its user's words (a machine that is offline gets it when it comes back). Every "
         "call sends one more message.",
         arguments(
             ("to", "text"),
             to=text("One session: person/session (list_team shows them), or a unique session name. Agents "
                     "cannot message groups or bare people.", MAX_SESSION, min_length=1),
             text=text("The message, at most 64 KiB.", MAX_MESSAGE, min_length=1), session=_session(),
             reply_to=text("The id of the message you answer.", 80),
             routing=text("The routing id of the who_knows answer that led you to this recipient, if one did.",
                          MAX_ID)),
         outputs.SENT, ids=(("reply_to", "message"), ("routing", "who_knows answer"))),
    Tool("check_inbox", "Check the inbox", "gitive.mcp.mail:check_inbox", WRITE_ONCE,
         "Messages waiting for your session, framed. Looking consumes nothing; pass mark_read with the ids you "
         "have read to confirm them (the sender then sees they were read; confirming twice changes nothing).",
         arguments(session=_session(), mark_read=array(text("A message id.", 80, min_length=1),
                                                       "Ids you have read: confirm them.", 100),
                   limit=_limit(20, 20), offset=OFFSET),
         outputs.INBOX),
    Tool("search_mail", "Search mail", "gitive.mcp.mail:search_mail", READ,
         "Search the messages this machine may read: those its sessions received and those your person sent "
         "from any machine. Best match first, each with a short snippet; check_inbox shows what waits for you.",
         arguments(("query",), query=text("Words the message contains (all must match).", MAX_QUERY, min_length=1),
                   limit=_limit(20, 10), offset=OFFSET),
         outputs.MAIL),
    Tool("claim_files", "Claim files", "gitive.mcp.claims:claim_files", WRITE_ONCE,
         "Tell teammates' sessions you are changing these files (advisory: nothing is locked). They see it in "
         "`gitive who` and get a notice if they edit a claimed file; the answer lists files others claimed. The "
         "same call again renews the claim to the minutes given from now; it never adds a second claim.",
         arguments(("paths",), paths=array(text("A path relative to the repository root.", MAX_PATH, min_length=1),
                                           "Files you are about to change, relative to the repository root.",
                                           MAX_FILES, min_items=1),
                   minutes=integer("How long the claim holds, in minutes; 0 releases these files.", 0, 480, 30),
                   note=text("A few words on what you are doing.", 200), session=_session()),
         outputs.CLAIMS),
    Tool("propose_item", "Propose an item for a person", "gitive.mcp.items:propose_item", WRITE_EACH,
         "Propose an item for a person's attention. The team's anchor decides whether and when it reaches them "
         "(preferences, quiet hours, a daily budget, the digest); saying it is urgent changes nothing. Every "
         "call proposes one more item (items citing the same records are merged by the gate).",
         arguments(
             ("title",),
             title=text("What your person should know.", 140, min_length=1),
             about=array(text("KIND:ID", 300, min_length=1), (
                 "The records it is about, KIND:ID: obligation:ID, lesson:ID, message:ID, session:person/name, "
                 "branch:NAME, commit:REV. Urgency comes only from these (a deadline, someone waiting); items "
                 "citing the same records are one item."), 16),
             files=_files(), to=text("A person, when nothing it cites names an owner.", MAX_SESSION),
             session=_session("Your session's address, e.g. alice/api-claude.")),
         outputs.ITEM),
)

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}


def describe() -> list[dict[str, Any]]:
    """The tools as ``gitive mcp --tools --json`` prints them (from this table; the SDK is not loaded)."""
    return [{"name": t.name, "title": t.title, "description": t.description, "read_only": t.hints.read_only,
             "idempotent": t.hints.idempotent, "input_schema": t.inputs, "output_schema": t.output} for t in TOOLS]
