"""The three model APIs the scripted server speaks, each read into one :class:`View` and answered from a script.

A :class:`View` is what the model receives, whatever the API: every piece of text with the role it arrives
under (``system``, ``developer``, ``user``, ``assistant``, ``tool``), the names of the tools offered, and how
many tool results the conversation holds. Tests assert on views, never on what a hook printed.

Roles, as each API spells them:

| API | system | developer | user | assistant | tool result |
| --- | --- | --- | --- | --- | --- |
| Anthropic Messages | ``system`` | (none) | ``messages[].role == "user"`` text blocks | ``"assistant"`` | ``tool_result`` blocks |
| OpenAI Responses | ``instructions`` | ``input[].role == "developer"`` | ``"user"`` | ``"assistant"`` | ``function_call_output``, ``custom_tool_call_output`` |
| Gemini | ``systemInstruction`` | (none) | ``contents[].role == "user"`` text parts | ``"model"`` | ``functionResponse`` parts |
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from testing.harness.script import SIDE_REPLY, Call, Script, Text

if TYPE_CHECKING:
    from testing.harness.server import Reply, Request

SSE = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Segment:
    role: str  # system, developer, user, assistant, tool, call
    text: str
    message: int  # index of the message (or input item) it came from; -1 for system instructions
    part: int  # index of the block (content part) within it


@dataclass
class View:
    segments: list[Segment] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    results: int = 0  # tool results in the conversation
    deferred: list[str] = field(default_factory=list)  # tools named to the model, schema loaded on demand
    connecting: list[str] = field(default_factory=list)  # MCP servers the harness says are still connecting

    @property
    def offered(self) -> list[str]:
        """Every tool the model is told it can call: the tool list and the deferred tools."""
        return [*self.tools, *self.deferred]

    def texts(self, *roles: str) -> list[str]:
        return [s.text for s in self.segments if not roles or s.role in roles]

    def joined(self, *roles: str) -> str:
        return "\n".join(self.texts(*roles))

    def last_user_message(self) -> list[Segment]:
        """The segments of the last message that carries any ``user`` or ``tool`` text."""
        found = [s for s in self.segments if s.role in ("user", "tool")]
        if not found:
            return []
        last = found[-1].message
        return [s for s in self.segments if s.message == last]


# ----------------------------------------------------------------------------------------- which API


def protocol_of(method: str, path: str) -> str:
    if path.endswith("/messages") or path.endswith("/messages/count_tokens"):
        return "anthropic"
    if path.endswith("/responses") or path.endswith("/responses/compact"):
        return "openai"
    if ":generateContent" in path or ":streamGenerateContent" in path or ":countTokens" in path:
        return "gemini"
    return "other"


def kind(request: Request) -> str:
    if request.protocol == "other" or request.method != "POST":
        return "other"
    if request.path.endswith("/count_tokens") or ":countTokens" in request.path:
        return "count"
    return "turn"


def view(request: Request) -> View:
    body = request.body if isinstance(request.body, dict) else {}
    reader = {"anthropic": _anthropic_view, "openai": _openai_view, "gemini": _gemini_view}.get(request.protocol)
    return reader(body) if reader and request.kind == "turn" else View()


def reply(request: Request, script: Script) -> Reply:
    from testing.harness.server import Reply

    body = request.body if isinstance(request.body, dict) else {}
    if request.kind == "count":
        count = max(1, len(request.raw) // 4)
        payload = {"input_tokens": count} if request.protocol == "anthropic" else {"totalTokens": count}
        return Reply(200, JSON, [json.dumps(payload).encode()])
    if request.kind != "turn":
        return Reply(404, JSON, [json.dumps({"error": {"message": f"no such endpoint {request.path}"}}).encode()])
    seen = view(request)
    step = script.step(seen.results) if seen.tools else Text(SIDE_REPLY)
    call_id = Script.call_id(seen.results)
    if request.protocol == "anthropic":
        return _anthropic_reply(body, step, call_id)
    if request.protocol == "openai":
        return _openai_reply(body, step, call_id)
    return _gemini_reply(request, step, call_id)


def _text_of(value: Any) -> str:
    """The text of a tool result's content, whatever its shape (a string, blocks, a JSON value)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(v.get("text", v) if isinstance(v, dict) else v) for v in value)
    return json.dumps(value)


def _sse(events: list[tuple[str | None, dict[str, Any]]]) -> Iterator[bytes]:
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        yield f"{head}data: {json.dumps(data)}\n\n".encode()


# ----------------------------------------------------------------------------------------- Anthropic


# Claude Code names deferred tools (MCP tools among them) in a system message, loaded through ToolSearch, and
# says which MCP servers are still connecting when it sends a request.
_DEFERRED = re.compile(r"The following deferred tools are now available via ToolSearch\.[^\n]*\n((?:[^\n]+\n?)+)")
_CONNECTING = re.compile(r"The following MCP servers are still connecting[^\n]*\n((?:[^\n]+\n?)+)")


def _names(pattern: re.Pattern[str], texts: list[str]) -> list[str]:
    return [name.strip() for text in texts for m in pattern.finditer(text) for name in m.group(1).splitlines()
            if name.strip()]


def _anthropic_view(body: dict[str, Any]) -> View:
    out = _anthropic_segments(body)
    texts = out.texts("system", "user")
    out.deferred = list(dict.fromkeys(_names(_DEFERRED, texts)))
    out.connecting = [n for n in dict.fromkeys(_names(_CONNECTING, texts))
                      if not any(t.startswith(f"mcp__{n}__") for t in out.deferred)]
    return out


def _anthropic_segments(body: dict[str, Any]) -> View:
    out = View(tools=[str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)])
    system = body.get("system")
    for i, block in enumerate([system] if isinstance(system, str) else system or []):
        text = block if isinstance(block, str) else block.get("text", "")
        out.segments.append(Segment("system", text, -1, i))
    for m, message in enumerate(body.get("messages") or []):
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for p, block in enumerate(blocks):
            kind_ = block.get("type")
            if kind_ == "text":
                out.segments.append(Segment(message.get("role", "?"), block.get("text", ""), m, p))
            elif kind_ == "tool_result":
                out.results += 1
                out.segments.append(Segment("tool", _text_of(block.get("content", "")), m, p))
            elif kind_ == "tool_use":
                out.segments.append(Segment("call", json.dumps({block.get("name"): block.get("input")}), m, p))
    return out


def _anthropic_message(body: dict[str, Any], step: Call | Text, call_id: str) -> tuple[dict[str, Any], str]:
    model = str(body.get("model") or "claude-scripted")
    message = {"id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant", "model": model,
               "content": [], "stop_reason": None, "stop_sequence": None,
               "usage": {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 0}}
    return message, "tool_use" if isinstance(step, Call) else "end_turn"


def _anthropic_reply(body: dict[str, Any], step: Call | Text, call_id: str) -> Reply:
    from testing.harness.server import Reply

    message, stop = _anthropic_message(body, step, call_id)
    if isinstance(step, Call):
        block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{call_id}", "name": step.name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(step.args)}
        whole = {**block, "input": step.args}
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": step.text}
        whole = {"type": "text", "text": step.text}
    if not body.get("stream"):
        done = {**message, "content": [whole], "stop_reason": stop}
        return Reply(200, JSON, [json.dumps(done).encode()])
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return Reply(200, SSE, _sse(events), stream=True)


# ----------------------------------------------------------------------------------------- OpenAI Responses


def _openai_content(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [str(c.get("text", "")) for c in content or [] if isinstance(c, dict) and "text" in c]


def _openai_view(body: dict[str, Any]) -> View:
    out = View(tools=[str(t.get("name") or t.get("type")) for t in body.get("tools") or [] if isinstance(t, dict)])
    if isinstance(body.get("instructions"), str):
        out.segments.append(Segment("system", body["instructions"], -1, 0))
    items = body.get("input")
    for m, item in enumerate([{"type": "message", "role": "user", "content": items}] if isinstance(items, str)
                             else items or []):
        kind_ = item.get("type", "message")
        if kind_ == "message":
            for p, text in enumerate(_openai_content(item.get("content"))):
                out.segments.append(Segment(str(item.get("role", "?")), text, m, p))
        elif kind_ in ("function_call_output", "custom_tool_call_output", "mcp_tool_call_output"):
            out.results += 1
            out.segments.append(Segment("tool", _text_of(item.get("output", "")), m, 0))
        elif kind_ in ("function_call", "custom_tool_call", "local_shell_call"):
            args = item.get("arguments", item.get("input", item.get("action")))
            out.segments.append(Segment("call", json.dumps({item.get("name"): args}), m, 0))
    return out


def _openai_item(step: Call | Text, call_id: str) -> dict[str, Any]:
    if isinstance(step, Text):
        return {"type": "message", "role": "assistant", "id": f"msg_{uuid.uuid4().hex[:16]}", "status": "completed",
                "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
    if isinstance(step.args, str):  # a freeform (custom) tool such as apply_patch
        return {"type": "custom_tool_call", "id": f"ctc_{call_id}", "status": "completed", "call_id": call_id,
                "name": step.name, "input": step.args}
    namespace, _, name = step.name.rpartition(".")  # "mcp__gitive.search_memory": a tool in a namespace
    item = {"type": "function_call", "id": f"fc_{call_id}", "status": "completed", "call_id": call_id,
            "name": name, "arguments": json.dumps(step.args)}
    return {**item, "namespace": namespace} if namespace else item


def _openai_reply(body: dict[str, Any], step: Call | Text, call_id: str) -> Reply:
    from testing.harness.server import Reply

    rid = f"resp_{uuid.uuid4().hex[:16]}"
    item = _openai_item(step, call_id)
    usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
             "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
    base = {"id": rid, "object": "response", "model": body.get("model"), "status": "in_progress", "output": []}
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": base}),
        ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item})]
    if isinstance(step, Text):
        events.append(("response.output_text.delta", {"type": "response.output_text.delta", "output_index": 0,
                                                      "content_index": 0, "item_id": item["id"],
                                                      "delta": step.text}))
    events += [("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
               ("response.completed", {"type": "response.completed",
                                       "response": {**base, "status": "completed", "output": [item],
                                                    "usage": usage}})]
    if not body.get("stream", True):
        return Reply(200, JSON, [json.dumps(events[-1][1]["response"]).encode()])
    return Reply(200, SSE, _sse(events), stream=True)


# ----------------------------------------------------------------------------------------- Gemini


def _gemini_view(body: dict[str, Any]) -> View:
    tools = [str(d.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)
             for d in t.get("functionDeclarations") or [] if isinstance(d, dict)]
    out = View(tools=tools)
    system = body.get("systemInstruction") or {}
    parts = [{"text": system}] if isinstance(system, str) else system.get("parts") or []
    for i, part in enumerate(parts):
        out.segments.append(Segment("system", str(part.get("text", "")), -1, i))
    for m, content in enumerate(body.get("contents") or []):
        role = {"model": "assistant"}.get(content.get("role", "user"), content.get("role", "user"))
        for p, part in enumerate(content.get("parts") or []):
            if "text" in part and not part.get("thought"):
                out.segments.append(Segment(role, str(part["text"]), m, p))
            elif "functionResponse" in part:
                out.results += 1
                response = (part["functionResponse"] or {}).get("response")
                out.segments.append(Segment("tool", _text_of(response), m, p))
            elif "functionCall" in part:
                call = part["functionCall"] or {}
                out.segments.append(Segment("call", json.dumps({call.get("name"): call.get("args")}), m, p))
    return out


def shaped(schema: Any) -> Any:
    """The smallest value that satisfies a JSON schema (Gemini's or OpenAPI's type names): what a side request
    in JSON mode (Gemini's router, its loop check) gets instead of text it cannot parse and would retry."""
    if not isinstance(schema, dict):
        return "ok"
    if schema.get("enum"):
        return schema["enum"][0]
    kind_ = str(schema.get("type", "object")).lower()
    if kind_ == "object":
        props = schema.get("properties") or {}
        return {k: shaped(v) for k, v in props.items() if k in (schema.get("required") or props)}
    return {"array": [], "string": "ok", "integer": 1, "number": 1, "boolean": False}.get(kind_, "ok")


def _gemini_reply(request: Request, step: Call | Text, call_id: str) -> Reply:
    from testing.harness.server import Reply

    config = (request.body or {}).get("generationConfig") or {}
    if not isinstance(step, Call) and config.get("responseMimeType") == "application/json":
        step = Text(json.dumps(shaped(config.get("responseJsonSchema") or config.get("responseSchema"))))
    if isinstance(step, Call):
        part: dict[str, Any] = {"functionCall": {"name": step.name, "args": step.args, "id": call_id}}
    else:
        part = {"text": step.text}
    chunk = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
             "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
             "modelVersion": "gemini-scripted", "responseId": uuid.uuid4().hex[:16]}
    if ":streamGenerateContent" in request.path:
        return Reply(200, SSE, _sse([(None, chunk)]), stream=True)
    return Reply(200, JSON, [json.dumps(chunk).encode()])
