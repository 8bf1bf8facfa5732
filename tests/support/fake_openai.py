"""A local fake of OpenAI's Chat Completions API, real enough for the official `openai` SDK.

Same scripting as the fake Messages API (tests/support/fake_anthropic.py), so a test reads the same for
both: `push_text`, `push_tool_use`, `push_error`, `push(callable)`, `route(match)`, `fallback`.
Replies are scripted in the Anthropic shape (content blocks, stop_reason, usage) and served as
Chat Completions: text -> `message.content`, tool_use -> `tool_calls` (arguments as a JSON
string), usage -> `prompt_tokens` (input + cache reads), `completion_tokens`,
`prompt_tokens_details.cached_tokens`. `"stream": true` gets server-sent `chat.completion.chunk`
events over chunked transfer encoding (text in several deltas, each tool call's arguments in
two), the usage chunk when `stream_options.include_usage` asks for it, then `data: [DONE]`.

`push_stall(text)` streams `text` and then stalls mid-stream until `release` is set or the
client hangs up (counted in `disconnects`): the interrupt test's proof that a call was cancelled.

Serves `POST /v1/chat/completions` at `base_url` (use `api_url`, `base_url + "/v1"`, as
OPENAI_BASE_URL, or `base_url` as OLLAMA_HOST). Fixture: `fake_openai` (sets OPENAI_BASE_URL).
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from tests.support.fake_anthropic import (
    DEFAULT_USAGE,
    ApiHandler,
    Scripted,
    ScriptedServer,
    _chunks,
)

STALL_LIMIT_S = 30.0  # a stalled stream gives up by itself after this long


def _error(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> Scripted:
    return Scripted(status, {"error": {"message": message, "type": kind, "param": None,
                                       "code": None}}, headers or {"x-should-retry": "false"})


class FakeOpenAI(ScriptedServer):
    """The server plus its script. Thread-safe: agents in other processes may call it at once."""

    def __init__(self, *, required_api_key: str | None = None) -> None:
        super().__init__(required_api_key=required_api_key)
        self.release = threading.Event()  # lets a stalled stream finish
        self.disconnects = 0  # stalled streams whose client hung up
        self._serve(_make_handler(self))

    @property
    def api_url(self) -> str:
        return self.base_url + "/v1"

    def completions_requests(self) -> list[dict[str, Any]]:
        """Bodies of the POST /v1/chat/completions requests, oldest first."""
        return self._bodies(lambda path: path.startswith("/v1/chat/completions"))

    def push_error(self, status: int, error_type: str | None = None, message: str | None = None,
                   *, retry_after_ms: int | None = 5, should_retry: bool | None = None) -> None:
        retryable = status in (408, 409, 429) or status >= 500
        if should_retry is not None:
            retryable = should_retry
        headers = {"x-should-retry": "true" if retryable else "false"}
        if retryable and retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        self.push(_error(status, message or f"fake error {status}", error_type or "api_error",
                         headers))

    def push_stall(self, text: str) -> None:
        """A streamed reply that sends `text`, then waits (see the module docstring)."""
        self.push(Scripted(200, {"content": [{"type": "text", "text": text}], "stall": True}))

    # -- serving -----------------------------------------------------------------------------

    def _serves(self, path: str) -> bool:
        return path.split("?")[0] == "/v1/chat/completions"

    def _error_reply(self, status: int, message: str) -> Scripted:
        return (_error(401, "Incorrect API key provided", "invalid_request_error")
                if status == 401 else _error(status, message, "not_found"))

    def close(self) -> None:
        self.release.set()  # a stalled stream must not hold the server's shutdown
        super().close()


def completion(request: dict[str, Any], partial: dict[str, Any], number: int) -> dict[str, Any]:
    """A scripted (Anthropic-shaped) reply as a `chat.completion` object."""
    blocks = partial.get("content", [])
    text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
    calls = [{"id": b["id"], "type": "function", "function": {
        "name": b["name"], "arguments": json.dumps(b.get("input", {}))}}
        for b in blocks if b.get("type") == "tool_use"]
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = calls
    finish = "tool_calls" if calls else (
        "length" if partial.get("stop_reason") == "max_tokens" else "stop")
    return {"id": f"chatcmpl-fake{number:06d}", "object": "chat.completion",
            "created": int(time.time()), "model": request.get("model", "gpt-fake"),
            "choices": [{"index": 0, "message": message, "finish_reason": finish,
                         "logprobs": None}],
            "usage": usage_of(partial)}


def usage_of(partial: dict[str, Any]) -> dict[str, Any]:
    usage = {**DEFAULT_USAGE, **partial.get("usage", {})}
    cached = usage["cache_read_input_tokens"]
    prompt = usage["input_tokens"] + cached
    out = {"prompt_tokens": prompt, "completion_tokens": usage["output_tokens"],
           "total_tokens": prompt + usage["output_tokens"],
           "prompt_tokens_details": {"cached_tokens": cached}}
    thinking = (usage.get("output_tokens_details") or {}).get("thinking_tokens")
    if thinking is not None:  # scripted as Anthropic's: part of the output, as reasoning is
        out["completion_tokens_details"] = {"reasoning_tokens": thinking}
    return out


def stream_chunks(whole: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A `chat.completion` as the API streams it, one dict per `data:` event."""
    head = {k: whole[k] for k in ("id", "created", "model")}
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    message = whole["choices"][0]["message"]
    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": piece}) for piece in _chunks(message.get("content") or "")
            if piece]
    for index, call in enumerate(message.get("tool_calls") or []):
        args = call["function"]["arguments"]
        half = len(args) // 2
        out.append(chunk({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                          "function": {"name": call["function"]["name"],
                                                       "arguments": ""}}]}))
        out += [chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
                for part in (args[:half], args[half:])]
    out.append(chunk({}, whole["choices"][0]["finish_reason"]))
    if include_usage:
        out.append({**head, "choices": [], "usage": whole["usage"]})
    return out


def _make_handler(api: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(ApiHandler):
        def _handle(self) -> None:
            request = self.received()
            body = request.body
            reply = api._answer(request)
            try:
                if reply.status != 200:
                    self._send(reply.status, json.dumps(reply.body).encode(), reply.headers)
                    return
                whole = completion(body, reply.body, next(api._ids))
                if not body.get("stream"):
                    self._send(200, json.dumps(whole).encode(), reply.headers)
                    return
                include = bool((body.get("stream_options") or {}).get("include_usage"))
                self._stream(stream_chunks(whole, include), bool(reply.body.get("stall")))
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (an interrupted agent)

        def _send(self, status: int, data: bytes, extra: dict[str, str]) -> None:
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.send_header("x-request-id", f"req_fake{next(api._ids):06d}")
            for name, value in extra.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, events: list[dict[str, Any]], stall: bool) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            if stall:  # everything but the end, then wait
                text = [e for e in events if e["choices"] and e["choices"][0]["delta"].get("content")]
                try:
                    for event in [events[0], *text]:
                        self._chunk(f"data: {json.dumps(event)}\n\n".encode())
                except (BrokenPipeError, ConnectionResetError):
                    # A client that hangs up before the stall is reached hung up all the same
                    # (a budget cut off after the first chunks, when this thread is slower).
                    self._hung_up()
                    return
                if not self._wait_for_release():
                    return
                events = [e for e in events[1:] if e not in text]
            for event in events:
                self._chunk(f"data: {json.dumps(event)}\n\n".encode())
            self._chunk(b"data: [DONE]\n\n")
            self._chunk(b"")

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

        def _hung_up(self) -> None:
            with api._lock:
                api.disconnects += 1
            self.close_connection = True

        def _wait_for_release(self) -> bool:
            """True when released; False when the client hung up (counted) or time ran out."""
            sock = self.connection
            deadline = time.monotonic() + STALL_LIMIT_S
            while not api.release.wait(0.02):
                readable, _, _ = select.select([sock], [], [], 0)
                if readable:
                    try:
                        peek = sock.recv(1, socket.MSG_PEEK)
                    except OSError:
                        peek = b""
                    if not peek:
                        self._hung_up()
                        return False
                if time.monotonic() > deadline:
                    self.close_connection = True
                    return False
            return True

        do_POST = _handle
        do_GET = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    """A running fake Chat Completions API with OPENAI_BASE_URL pointing at it (set
    OPENAI_API_KEY in the test; child processes inherit both)."""
    with FakeOpenAI() as api:
        monkeypatch.setenv("OPENAI_BASE_URL", api.api_url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
        yield api
