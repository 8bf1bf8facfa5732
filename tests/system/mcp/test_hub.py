"""The team's MCP server on a host (mcp_server/hub.py), served in a thread of the test: a token
whose driver (a real process) has ended is refused, and a client's idle connection outlives a
pause (the rest in-process: tests/unit/mcp_server/test_hub.py)."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import http.client
import json
import secrets
import select
import subprocess
import sys
from urllib.parse import urlsplit

from swarm.core.store import paths
from swarm.runtime.clis import team_server
from tests.support import hub_client as mcp
from tests.unit.mcp_server.test_hub import (
    TEAM,
    hub,  # noqa: F401 - the fixtures
    token_of,
)


def test_a_token_whose_driver_has_ended_is_refused(hub: str) -> None:
    token = secrets.token_urlsafe(32)
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    path = paths.mcp_hub_member(TEAM, "a")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"member": "a", "sha256": team_server.token_hash(token),
                                "pid": int(ended.stdout), "started_at": None}))
    assert mcp.initialize(hub, token).status == 401
    live = token_of("a")  # the member's live driver registers again: its token works
    assert mcp.initialize(hub, live).status == 200
    assert mcp.initialize(hub, token).status == 401


# Longer than uvicorn's default keep-alive (5 s): a model thinks that long between two calls.
PAUSE = 8.0


def test_a_clients_idle_connection_outlives_a_pause_between_calls(hub: str) -> None:
    """An agent CLI's MCP client keeps one connection and calls again after a pause. Closed by
    the server meanwhile, the call races the close and fails, and the client does not send a
    POST again (Qwen Code: "MCP tool execution may have completed before the connection
    failed"): the server keeps an idle connection open longer than clients do."""
    parts = urlsplit(hub)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    headers = {"Accept": mcp.ACCEPT, "Content-Type": "application/json",
               "Authorization": f"Bearer {token_of('a')}"}
    hello = json.dumps(mcp.INITIALIZE).encode()
    try:
        conn.request("POST", parts.path, hello, headers)
        first = conn.getresponse()
        first.read()
        assert first.status == 200
        assert conn.sock is not None
        # The server closing it shows as the socket turning readable (end of file).
        closed, _, _ = select.select([conn.sock], [], [], PAUSE)
        assert closed == [], f"the server closed an idle connection within {PAUSE:.0f} s"
        conn.request("POST", parts.path, hello, headers)  # the same connection, after the pause
        second = conn.getresponse()
        second.read()
        assert second.status == 200
    finally:
        conn.close()
