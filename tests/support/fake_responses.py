"""A local fake of OpenAI's Responses API (`POST /v1/responses`), the only wire Codex speaks to
a custom provider (`wire_api = "responses"`; Chat Completions is no longer accepted).

Same scripting as the other fakes (tests/support/fake_anthropic.py): `push_text`, `push_tool_use`,
`push(callable)`, `fallback`; replies are scripted in the Anthropic shape (content blocks,
usage) and served as a Response: text -> a `message` item with one `output_text` part, tool_use
-> a `function_call` item (`call_id`, `name`, `arguments` as a JSON string; a name
`NAMESPACE/NAME` is a namespaced tool's, as Codex offers each MCP server's: `mcp__swarm`). `"stream": true`
gets the semantic server-sent events, each with a `sequence_number` and no `[DONE]`:
`response.created`, per item `response.output_item.added`, for text `response.content_part.added`
+ `response.output_text.delta` (several) + `response.output_text.done`, for a call
`response.function_call_arguments.delta/done`, then `response.output_item.done`, and last
`response.completed` with the whole response and its usage (input, cached, output, total).
"""

from __future__ import annotations

import json
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.fake_anthropic import (
    DEFAULT_USAGE,
    ApiHandler,
    Scripted,
    ScriptedServer,
    _chunks,
)
from tests.support.fake_openai import _error


class FakeResponses(ScriptedServer):
    """The server plus its script. Thread-safe: a client may call it from several threads."""

    def __init__(self) -> None:
        super().__init__()
        self._serve(_make_handler(self))

    @property
    def api_url(self) -> str:
        return self.base_url + "/v1"

    def responses_requests(self) -> list[dict[str, Any]]:
        """Bodies of the POST /v1/responses requests, oldest first."""
        return self._bodies(self._serves)

    def _serves(self, path: str) -> bool:
        return path.split("?")[0] == "/v1/responses"

    def _error_reply(self, status: int, message: str) -> Scripted:
        return _error(status, message, "not_found")


def output_items(partial: dict[str, Any], number: int) -> list[dict[str, Any]]:
    """A scripted (Anthropic-shaped) reply's content blocks as Responses output items."""
    items: list[dict[str, Any]] = []
    for index, block in enumerate(partial.get("content", [])):
        if block.get("type") == "text":
            items.append({"id": f"msg_fake{number:06d}_{index}", "type": "message",
                          "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": block["text"],
                                       "annotations": []}]})
        elif block.get("type") == "tool_use":
            # "NAMESPACE/NAME": a tool of a namespace (how Codex offers an MCP server's tools)
            space, _, name = block["name"].rpartition("/")
            call = {"id": f"fc_fake{number:06d}_{index}", "type": "function_call",
                    "status": "completed", "call_id": block["id"], "name": name,
                    "arguments": json.dumps(block.get("input", {}))}
            items.append({**call, "namespace": space} if space else call)
    return items


def usage_of(partial: dict[str, Any]) -> dict[str, Any]:
    usage = {**DEFAULT_USAGE, **partial.get("usage", {})}
    cached = usage["cache_read_input_tokens"]
    given = usage["input_tokens"] + cached
    return {"input_tokens": given, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": usage["output_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": given + usage["output_tokens"]}


def response(request: dict[str, Any], partial: dict[str, Any], number: int) -> dict[str, Any]:
    return {"id": f"resp_fake{number:06d}", "object": "response", "created_at": int(time.time()),
            "status": "completed", "model": request.get("model", "gpt-fake"),
            "output": output_items(partial, number), "usage": usage_of(partial),
            "error": None, "incomplete_details": None}


def stream_events(whole: dict[str, Any]) -> list[dict[str, Any]]:
    """A finished response as the API streams it, one dict per event (see the docstring)."""
    started = {**whole, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started},
                                    {"type": "response.in_progress", "response": started}]
    for index, item in enumerate(whole["output"]):
        where = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {**item, "status": "in_progress", "content": []}})
            events.append({"type": "response.content_part.added", **where, "content_index": 0,
                           "part": {"type": "output_text", "text": "", "annotations": []}})
            events += [{"type": "response.output_text.delta", **where, "content_index": 0,
                        "delta": piece} for piece in _chunks(text)]
            events.append({"type": "response.output_text.done", **where, "content_index": 0,
                           "text": text})
            events.append({"type": "response.content_part.done", **where, "content_index": 0,
                           "part": item["content"][0]})
        else:
            args = item["arguments"]
            events.append({"type": "response.output_item.added", "output_index": index,
                           "item": {**item, "status": "in_progress", "arguments": ""}})
            half = len(args) // 2
            events += [{"type": "response.function_call_arguments.delta", **where,
                        "delta": part} for part in (args[:half], args[half:])]
            events.append({"type": "response.function_call_arguments.done", **where,
                           "arguments": args})
        events.append({"type": "response.output_item.done", "output_index": index,
                       "item": item})
    events.append({"type": "response.completed", "response": whole})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def _make_handler(api: FakeResponses) -> type[BaseHTTPRequestHandler]:
    class Handler(ApiHandler):
        def _handle(self) -> None:
            request = self.received()
            reply = api._answer(request)
            try:
                if reply.status != 200:
                    self._send(reply.status, json.dumps(reply.body).encode())
                    return
                whole = response(request.body, reply.body, next(api._ids))
                if not request.body.get("stream"):
                    self._send(200, json.dumps(whole).encode())
                    return
                data = b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                                for e in stream_events(whole))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def _send(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = _handle
        do_GET = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler

