"""The team's MCP server on a host (mcp_server/hub.py), served in a thread of the test: a token
whose driver (a real process) has ended is refused (the rest in-process:
tests/unit/mcp_server/test_hub.py)."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import json
import secrets
import subprocess
import sys

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
