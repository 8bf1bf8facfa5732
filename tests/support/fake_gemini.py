"""A local fake of the Gemini API (`generateContent`, `streamGenerateContent?alt=sse`), enough
for Gemini CLI pointed at it with GOOGLE_GEMINI_BASE_URL and a GEMINI_API_KEY.

Same scripting as the other fakes (tests/support/fake_anthropic.py): `push_text`, `push_tool_use`,
`push(callable)`, `fallback`; replies are scripted in the Anthropic shape and served as one
candidate: text -> a `text` part, tool_use -> a `functionCall` part (`name`, `args`), usage ->
`usageMetadata`. Streamed, the text comes in several `data:` events, the last with the
`finishReason` and the usage.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.support.fake_anthropic import (
    DEFAULT_USAGE,
    ApiHandler,
    Scripted,
    ScriptedServer,
    _chunks,
)


class FakeGemini(ScriptedServer):
    """The server plus its script. Thread-safe."""

    def __init__(self) -> None:
        super().__init__()
        self._serve(_make_handler(self))

    def generate_requests(self) -> list[dict[str, Any]]:
        return self._bodies(lambda path: "enerateContent" in path)

    def _serves(self, path: str) -> bool:
        return ":" in path  # models/NAME:generateContent and :streamGenerateContent

    def _error_reply(self, status: int, message: str) -> Scripted:
        return Scripted(status, {"error": {"code": status, "message": message,
                                           "status": "NOT_FOUND"}})


def candidate_parts(partial: dict[str, Any]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in partial.get("content", []):
        if block.get("type") == "text":
            parts.append({"text": block["text"]})
        elif block.get("type") == "tool_use":
            parts.append({"functionCall": {"name": block["name"],
                                           "args": block.get("input", {})}})
    return parts


def usage_of(partial: dict[str, Any]) -> dict[str, Any]:
    usage = {**DEFAULT_USAGE, **partial.get("usage", {})}
    return {"promptTokenCount": usage["input_tokens"],
            "candidatesTokenCount": usage["output_tokens"],
            "totalTokenCount": usage["input_tokens"] + usage["output_tokens"]}


def chunks(partial: dict[str, Any]) -> list[dict[str, Any]]:
    """One reply as the streamed events: text pieces, then calls, finish and usage last."""
    pieces: list[list[dict[str, Any]]] = []
    for part in candidate_parts(partial):
        pieces += [[{"text": t}] for t in _chunks(part["text"])] if "text" in part else [[part]]
    pieces = pieces or [[{"text": ""}]]
    out: list[dict[str, Any]] = [
        {"candidates": [{"content": {"role": "model", "parts": p}, "index": 0}]} for p in pieces]
    out[-1]["candidates"][0]["finishReason"] = "STOP"
    out[-1]["usageMetadata"] = usage_of(partial)
    return out


def _make_handler(api: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(ApiHandler):
        def _handle(self) -> None:
            request = self.received()
            reply = api._answer(request)
            streamed = "alt=sse" in request.path and reply.status == 200
            if reply.status != 200:
                data = json.dumps(reply.body).encode()
            elif streamed:
                data = b"".join(f"data: {json.dumps(c)}\r\n\r\n".encode()
                                for c in chunks(reply.body))
            else:
                whole = chunks({"content": reply.body.get("content", [])})
                parts = [p for c in whole for p in c["candidates"][0]["content"]["parts"]]
                data = json.dumps({**whole[-1], "candidates": [{
                    "content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                    "index": 0}]}).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "text/event-stream" if streamed
                                 else "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        do_POST = _handle
        do_GET = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler

