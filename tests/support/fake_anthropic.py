"""A local fake of Anthropic's Messages API, real enough for the official SDK to talk to.

Real HTTP on 127.0.0.1 (an ephemeral port) from a background thread. Tests script the replies
(`push_text`, `push_tool_use`, `push_error`, or `push(callable)` for a reply computed from the
request, built with `reply(...)`); with the queue empty the server asks `fallback` (a
responder), else answers a plain `end_turn` text. Every request is recorded (`.requests`:
path, lower-cased headers, JSON body, arrival time) so tests can assert what was sent.

A request with `"stream": true` gets the same reply as server-sent events (text in several
deltas, tool input as one JSON delta), as the SDK's streaming helpers expect.
Concurrent conversations (a teammate and its subagents) get their own scripts: `route(match)`
returns a script that answers every request whose body `match`es, before the main queue.

Retryable errors carry `retry-after-ms` and `x-should-retry`, so SDK-side and swarm-side retries
wait milliseconds, not seconds.

Use the `fake_api` fixture (it also points ANTHROPIC_BASE_URL at the server; child processes
inherit it), or `with FakeAnthropic() as api:` directly.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

import pytest

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
ERROR_MESSAGES = {
    401: "invalid x-api-key",
    429: "Number of request tokens has exceeded your per-minute rate limit",
    529: "Overloaded",
}
DEFAULT_USAGE = {
    "input_tokens": 12,
    "output_tokens": 7,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
}


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: dict[str, Any]
    raw: bytes = b""  # the body as sent
    at: float = field(default_factory=time.time)  # when it arrived (wall clock)

    @property
    def api_key(self) -> str | None:
        """The key sent, as `x-api-key` or (newer SDKs) `authorization: Bearer KEY`."""
        if "x-api-key" in self.headers:
            return self.headers["x-api-key"]
        auth = self.headers.get("authorization", "")
        return auth[7:] if auth.lower().startswith("bearer ") else None


@dataclass
class Scripted:
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)


Responder = Callable[[dict[str, Any]], Scripted]


class Script:
    """A queue of replies, answered in order."""

    def __init__(self, lock: threading.Lock, ids: Iterator[int]) -> None:
        self._queue: deque[Scripted | Responder] = deque()
        self._lock = lock
        self._ids = ids

    # -- scripting ---------------------------------------------------------------------------

    def push(self, item: Scripted | Responder) -> None:
        with self._lock:
            self._queue.append(item)

    def push_message(
        self,
        content: list[dict[str, Any]],
        *,
        stop_reason: str = "end_turn",
        usage: dict[str, Any] | None = None,  # Anthropic's: output_tokens_details too
    ) -> None:
        self.push(Scripted(200, {"content": content, "stop_reason": stop_reason,
                                 "usage": {**DEFAULT_USAGE, **(usage or {})}}))

    def push_text(self, text: str, *, stop_reason: str = "end_turn",
                  usage: dict[str, int] | None = None) -> None:
        self.push_message([{"type": "text", "text": text}], stop_reason=stop_reason, usage=usage)

    def push_tool_use(
        self,
        name: str,
        input: dict[str, Any],
        id: str | None = None,
        *,
        text: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> str:
        """Queue one tool call (optionally preceded by text); returns its tool_use id."""
        tool_id = id or f"toolu_fake{next(self._ids):04d}"
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": input})
        self.push_message(blocks, stop_reason="tool_use", usage=usage)
        return tool_id

    def push_error(
        self,
        status: int,
        error_type: str | None = None,
        message: str | None = None,
        *,
        retry_after_ms: int | None = 5,
        should_retry: bool | None = None,
    ) -> None:
        """Queue an error in the API's shape: {"type": "error", "error": {type, message}}."""
        kind = error_type or ERROR_TYPES.get(status, "api_error")
        body = {"type": "error", "error": {"type": kind,
                                           "message": message or ERROR_MESSAGES.get(status, kind)}}
        retryable = status in (408, 409, 429) or status >= 500
        if should_retry is not None:
            retryable = should_retry
        headers = {"x-should-retry": "true" if retryable else "false"}
        if retryable and retry_after_ms is not None:
            headers["retry-after-ms"] = str(retry_after_ms)
        self.push(Scripted(status, body, headers))

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)


class Route(Script):
    def __init__(self, match: Callable[[dict[str, Any]], bool], lock: threading.Lock,
                 ids: Iterator[int]) -> None:
        super().__init__(lock, ids)
        self.match = match


class LocalServer:
    """A fake API's HTTP server: a free loopback port, served from a daemon thread."""

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # a short poll interval so close() (server.shutdown) returns in milliseconds
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ScriptedServer(Script, LocalServer):
    """A fake API: its script (with routes), the requests it received, and one `_answer` that
    records a request and picks its reply. A fake names the path it serves (`_serves`), the
    shape of its errors (`_error_reply`) and how it sends a reply (its handler)."""

    def __init__(self, *, required_api_key: str | None = None) -> None:
        super().__init__(threading.Lock(), itertools.count(1))
        self.requests: list[Received] = []
        self.required_api_key = required_api_key  # when set, any other key gets a 401
        self.default_text = "Done."
        # With the main queue empty: this responder, else a plain `end_turn` text.
        self.fallback: Responder | None = None
        self._routes: list[Route] = []

    def route(self, match: Callable[[dict[str, Any]], bool]) -> Route:
        """A script for the requests `match` picks (empty: the default text, never the main
        queue), so concurrent conversations each get their own replies."""
        route = Route(match, self._lock, self._ids)
        with self._lock:
            self._routes.append(route)
        return route

    def _bodies(self, served: Callable[[str], bool]) -> list[dict[str, Any]]:
        with self._lock:
            return [r.body for r in self.requests if served(r.path)]

    def _serves(self, path: str) -> bool:
        raise NotImplementedError

    def _error_reply(self, status: int, message: str) -> Scripted:
        raise NotImplementedError

    def _answer(self, received: Received) -> Scripted:
        with self._lock:
            self.requests.append(received)
            if self.required_api_key not in (None, received.api_key):
                return self._error_reply(401, "invalid API key")
            if received.method != "POST" or not self._serves(received.path):
                return self._error_reply(404, f"fake server: no route {received.path}")
            queue = next((r._queue for r in self._routes if r.match(received.body)),
                         self._queue)
            fallback = self.fallback if queue is self._queue else None
            item = queue.popleft() if queue else fallback
        if item is None:
            return Scripted(200, {"content": [{"type": "text", "text": self.default_text}],
                                  "stop_reason": "end_turn", "usage": dict(DEFAULT_USAGE)})
        return item if isinstance(item, Scripted) else item(received.body)


class FakeAnthropic(ScriptedServer):
    """The server plus its script. Thread-safe: agents in other processes may call it at once."""

    def __init__(self, *, required_api_key: str | None = None) -> None:
        super().__init__(required_api_key=required_api_key)
        # True: every reply's input_tokens is the request's size / 4 (a stand-in for the real
        # count), so benchmarks can compare how much context different callers send.
        self.count_input_tokens = False
        # > 0: a streamed reply is sent one event at a time, this many seconds apart, and each
        # stream's fate is recorded in `streams` (a client that stops reading cuts it off).
        self.stream_pause = 0.0
        self.streams: list[StreamRecord] = []
        self._serve(_make_handler(self))

    def messages_requests(self) -> list[dict[str, Any]]:
        """Bodies of the POST /v1/messages requests, oldest first."""
        return self._bodies(lambda path: path.startswith("/v1/messages"))

    # -- serving -----------------------------------------------------------------------------

    def _serves(self, path: str) -> bool:
        """A path that gets the scripted replies (the Bedrock and Vertex fakes serve others)."""
        return path.split("?")[0] == "/v1/messages"

    def _error_reply(self, status: int, message: str) -> Scripted:
        return (_error(401, "authentication_error", "invalid x-api-key") if status == 401
                else _error(status, "not_found_error", message))

    def _answer(self, received: Received) -> Scripted:
        reply = super()._answer(received)
        if reply.status == 200:
            reply = Scripted(200, self._envelope(received.body, reply.body), reply.headers)
        return reply

    def _envelope(self, request: dict[str, Any], partial: dict[str, Any]) -> dict[str, Any]:
        usage = {**DEFAULT_USAGE, **partial.get("usage", {})}
        if self.count_input_tokens:
            sent = {k: request.get(k) for k in ("system", "tools", "messages")}
            usage["input_tokens"] = len(json.dumps(sent)) // 4
        return {
            "id": f"msg_fake{next(self._ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", "claude-fake"),
            "content": partial.get("content", []),
            "stop_reason": partial.get("stop_reason", "end_turn"),
            "stop_sequence": None,
            "usage": usage,
        }

def reply(text: str | None = None, tool_uses: list[tuple[str, dict[str, Any]]] | None = None,
          usage: dict[str, int] | None = None) -> Scripted:
    """A 200 reply: optional text, then tool_use blocks (for responders: `push(lambda b: ...)`)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for number, (name, args) in enumerate(tool_uses or []):
        content.append({"type": "tool_use", "id": f"toolu_r{time.monotonic_ns()}{number}",
                        "name": name, "input": args})
    return Scripted(200, {"content": content, "stop_reason": "tool_use" if tool_uses else "end_turn",
                          "usage": {**DEFAULT_USAGE, **(usage or {})}})


def last_user_text(body: dict[str, Any]) -> str:
    """The text blocks of a request's last user message (its newest input), joined."""
    messages = body.get("messages") or []
    if not messages:
        return ""
    content = messages[-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content or [] if b.get("type") == "text")


def _error(status: int, kind: str, message: str) -> Scripted:
    return Scripted(status, {"type": "error", "error": {"type": kind, "message": message}},
                    {"x-should-retry": "false"})


def _chunks(text: str, size: int = 12) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def sse_body(message: dict[str, Any]) -> bytes:
    """A finished message as the Messages API streams it (see `sse_events`)."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode()
                    for e in sse_events(message))


def sse_events(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A finished message as streaming events: message_start, per block a start, deltas and a
    stop, message_delta (stop reason, output tokens), message_stop."""
    usage = message["usage"]
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        **message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}}]
    for index, block in enumerate(message["content"]):
        if block.get("type") == "tool_use":
            events.append({"type": "content_block_start", "index": index, "content_block": {
                **block, "input": {}}})
            events.append({"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block.get("input", {}))}})
        elif block.get("type") == "thinking":  # its text in deltas, then its signature
            events.append({"type": "content_block_start", "index": index, "content_block": {
                "type": "thinking", "thinking": "", "signature": ""}})
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "thinking_delta", "thinking": chunk}}
                       for chunk in _chunks(str(block.get("thinking", "")))]
            events.append({"type": "content_block_delta", "index": index, "delta": {
                "type": "signature_delta", "signature": block.get("signature", "")}})
        elif block.get("type") == "redacted_thinking":  # whole, at its start
            events.append({"type": "content_block_start", "index": index,
                           "content_block": dict(block)})
        else:
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}})
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": chunk}}
                       for chunk in _chunks(str(block.get("text", "")))]
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": message["stop_reason"],
                                                      "stop_sequence": None},
                   "usage": {k: v for k, v in usage.items()
                             if k in ("output_tokens", "output_tokens_details")}})
    events.append({"type": "message_stop"})
    return events


@dataclass
class StreamRecord:
    """One paced stream: how many events it had, how many went out, and whether all did."""

    events: int
    sent: int = 0
    complete: bool = False


class ApiHandler(BaseHTTPRequestHandler):
    """What every fake API's handler shares: keep-alive, no Nagle, the request as `Received`."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the SDK's pooled client expects
    # Headers and body go out as two writes: with Nagle's algorithm the body would wait for
    # the client's delayed ACK of the headers (~40 ms on Linux) on every reply.
    disable_nagle_algorithm = True

    def received(self) -> Received:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = {"_unparsed": raw.decode("utf-8", "replace")}
        headers = {k.lower(): v for k, v in self.headers.items()}
        return Received(self.command, self.path, headers, body, raw)


def _make_handler(api: FakeAnthropic) -> type[BaseHTTPRequestHandler]:
    class Handler(ApiHandler):
        def _handle(self) -> None:
            request = self.received()
            body = request.body
            reply = api._answer(request)
            streamed = bool(body.get("stream")) and reply.status == 200
            if streamed and api.stream_pause > 0:
                self._paced(sse_events(reply.body), reply.headers)
                return
            data = sse_body(reply.body) if streamed else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("content-type", "text/event-stream" if streamed
                                 else "application/json")
                self.send_header("content-length", str(len(data)))
                self.send_header("request-id", f"req_fake{next(api._ids):06d}")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client gave up (an interrupted or killed agent)

        def _paced(self, events: list[dict[str, Any]], headers: dict[str, str]) -> None:
            """Event by event, then the connection closes (no length: it ends the body)."""
            record = StreamRecord(len(events))
            with api._lock:
                api.streams.append(record)
            self.close_connection = True
            try:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                for event in events:
                    self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                                     .encode())
                    self.wfile.flush()
                    record.sent += 1
                    time.sleep(api.stream_pause)
                record.complete = True
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading: the stream was cut off

        do_POST = _handle
        do_GET = _handle

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    return Handler


@pytest.fixture
def fake_api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """A running fake API with ANTHROPIC_BASE_URL pointing at it (set the key in the test)."""
    with FakeAnthropic() as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.base_url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # never detour via a proxy
        monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
        yield api
