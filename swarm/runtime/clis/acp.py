"""The client side of the Agent Client Protocol (ACP): JSON-RPC 2.0, one message a line, over an
agent CLI's stdin and stdout (`gemini --acp`). One reader: `call` sends a request and reads
until its response, handing everything else (the agent's `session/update` notifications and its
own requests to the client, e.g. `session/request_permission`) to a handler on the way.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import subprocess
import threading
from collections.abc import Callable
from typing import Any

Handler = Callable[[dict[str, Any]], None]
PROTOCOL_VERSION = 1


class AcpError(Exception):
    """The agent answered a request with an error, or ended before answering."""


class AcpConnection:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self._ids = itertools.count(1)
        # Reentrant: a signal handler (interrupt) may write while the reader is replying.
        self._write = threading.RLock()

    def _send(self, message: dict[str, Any]) -> None:
        stdin = self.proc.stdin
        if stdin is None:
            return
        with self._write, contextlib.suppress(OSError, ValueError):
            stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
            stdin.flush()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"method": method, "params": params})

    def send(self, method: str, params: dict[str, Any]) -> None:
        """A request whose answer nobody waits for (the reader skips it): from a thread or a
        signal handler while a turn reads."""
        self._send({"id": next(self._ids), "method": method, "params": params})

    def respond(self, request_id: Any, result: dict[str, Any] | None = None,
                error: str | None = None) -> None:
        if error is not None:
            self._send({"id": request_id, "error": {"code": -32601, "message": error}})
        else:
            self._send({"id": request_id, "result": result or {}})

    def call(self, method: str, params: dict[str, Any],
             on_message: Handler | None = None) -> dict[str, Any]:
        """Send the request; its result once it comes. Messages before it go to `on_message`
        (requests it does not answer are refused, so the agent never waits on us)."""
        request_id = next(self._ids)
        self._send({"id": request_id, "method": method, "params": params})
        stdout = self.proc.stdout
        assert stdout is not None
        for raw in stdout:
            try:
                message = json.loads(raw)
            except ValueError:
                continue  # not a protocol line
            if not isinstance(message, dict):
                continue
            if "method" not in message:
                if message.get("id") != request_id:
                    continue  # an answer nobody waits for any more
                if "error" in message:
                    error = message["error"] or {}
                    details = (error.get("data") or {}).get("details") if isinstance(
                        error.get("data"), dict) else None
                    raise AcpError(f"{method}: {details or error.get('message') or error}")
                return message.get("result") or {}
            if on_message is not None:
                on_message(message)
            elif "id" in message:
                self.respond(message["id"], error=f"{message['method']} is not handled here")
        raise AcpError(f"{method}: the agent ended (code {self.proc.wait()}) before answering")
