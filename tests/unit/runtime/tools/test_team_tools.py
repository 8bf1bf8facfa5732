"""The team tools a teammate calls (swarm/runtime/tools/team_tools.py), run directly."""

from __future__ import annotations

from pathlib import Path

from swarm.core.records.names import LEAD_NAME
from swarm.core.team.team import Team
from swarm.runtime.tools.base import ToolContext, run_tool
from swarm.runtime.tools.registry import all_tools


def test_send_message_tool_refuses_an_empty_message(tmp_path: Path) -> None:
    team = Team.create("tools")
    team.add_member("w1")
    ctx = ToolContext(team=team, name="w1", cwd=tmp_path)
    result = run_tool(all_tools()["SendMessage"],
                      {"to": LEAD_NAME, "message": " ", "summary": "nothing"}, ctx)
    assert result.is_error and "empty" in result.content
    assert Team("tools").inbox(LEAD_NAME, checked=False).messages() == []

