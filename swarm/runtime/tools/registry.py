"""The registry of the tools a teammate can be given: every built-in tool by name (its
definition then picks from them). The lead's own set is lead/lead_tools.py's `lead_tools`."""

from __future__ import annotations

from swarm.runtime.subagents.tools import subagent_tools
from swarm.runtime.tools.base import Tool
from swarm.runtime.tools.builtin import Bash, Edit, Glob, Grep, Read, Write
from swarm.runtime.tools.team_tools import (
    ExitPlanMode,
    SendMessage,
    TaskCreate,
    TaskGet,
    TaskListTool,
    TaskUpdate,
)


def all_tools() -> dict[str, Tool]:
    items: list[Tool] = [Read(), Write(), Edit(), Bash(), Glob(), Grep(),
                         SendMessage(), TaskCreate(), TaskListTool(), TaskGet(), TaskUpdate(),
                         ExitPlanMode(), *subagent_tools()]
    return {tool.name: tool for tool in items}
