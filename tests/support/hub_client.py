"""A bare MCP client of the team's MCP server on a host (`swarm mcp hub`), over plain HTTP, for
the tests that try it with the right, a wrong or no token (tests/unit/mcp_server/test_hub.py,
tests/system/mcp/test_mcp_hub.py): each step's HTTP status and the JSON-RPC answer, so a
refusal at any layer shows."""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import psutil

from swarm.core.store import paths

ACCEPT = "application/json, text/event-stream"
PROTOCOL = "2025-06-18"


@dataclass
class Answer:
    status: int
    session: str | None
    message: dict[str, Any] | None  # the JSON-RPC answer (or error) it carried


def post(url: str, body: dict[str, Any], token: str | None = None,
         session: str | None = None, timeout: float = 30.0) -> Answer:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=timeout)
    headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if session is not None:
        headers["Mcp-Session-Id"] = session
        headers["Mcp-Protocol-Version"] = PROTOCOL
    try:
        conn.request("POST", parts.path, json.dumps(body).encode(), headers)
        response = conn.getresponse()
        data = response.read().decode("utf-8", "replace")
        sid = response.getheader("mcp-session-id")
        status = response.status
    finally:
        conn.close()
    return Answer(status, sid, _message(data))


def _message(data: str) -> dict[str, Any] | None:
    """The last JSON-RPC message of a JSON or server-sent-events body."""
    found: dict[str, Any] | None = None
    for line in [data, *data.splitlines()]:
        text = line.removeprefix("data:").strip()
        if not text.startswith("{"):
            continue
        try:
            parsed = json.loads(text)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            found = parsed
    return found


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}


def initialize(url: str, token: str | None) -> Answer:
    answer = post(url, INITIALIZE, token)
    if answer.status == 200 and answer.session:
        post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, token,
             answer.session)
    return answer


def list_tools(url: str, token: str | None, session: str | None) -> Answer:
    return post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, token, session)


def call(url: str, token: str | None, session: str | None, tool: str,
         args: dict[str, Any]) -> Answer:
    return post(url, {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                      "params": {"name": tool, "arguments": args}}, token, session)


def text_of(answer: Answer) -> str:
    result = (answer.message or {}).get("result") or {}
    return "".join(str(b.get("text", "")) for b in result.get("content") or [])


def tool_names(answer: Answer) -> list[str]:
    result = (answer.message or {}).get("result") or {}
    return [str(t.get("name")) for t in result.get("tools") or []]


def hubs() -> list[psutil.Process]:
    """The running `swarm mcp hub` processes of this test's SWARM_HOME."""
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        if "hub" in argv and "mcp" in argv and str(paths.home()) in environ_of(proc.pid):
            found.append(proc)
    return found


def environ_of(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/environ").read_bytes().decode("utf-8", "replace")
    return ""


def serve_children(pid: int) -> list[psutil.Process]:
    """`swarm mcp serve` processes below `pid` (a teammate's own MCP server child)."""
    found = []
    with contextlib.suppress(psutil.NoSuchProcess):
        for proc in psutil.Process(pid).children(recursive=True):
            with contextlib.suppress(psutil.Error):
                argv = proc.cmdline()
                if "mcp" in argv and "serve" in argv:
                    found.append(proc)
    return found


TOKEN_LIKE = re.compile(rb"[A-Za-z0-9_\-]{43}")  # secrets.token_urlsafe(32), as a driver makes


def registered_hashes(team: str) -> set[str]:
    """The token hashes the team's member drivers have registered now."""
    found = set()
    for path in paths.mcp_hub_members(team).glob("*.json"):
        with contextlib.suppress(OSError, ValueError):
            found.add(str(json.loads(path.read_bytes())["sha256"]))
    return found


def tokens_in_files(root: Path, hashes: set[str]) -> list[Path]:
    """Files under `root` that hold a token whose hash is one of `hashes` (a CLI that wrote the
    token it was handed into its sessions, logs or settings)."""
    found = []
    for path in root.rglob("*"):
        with contextlib.suppress(OSError):
            if not path.is_file() or path.is_symlink() or path.stat().st_size > 50_000_000:
                continue
            data = path.read_bytes()
            if any(hashlib.sha256(w).hexdigest() in hashes for w in TOKEN_LIKE.findall(data)):
                found.append(path)
    return found
