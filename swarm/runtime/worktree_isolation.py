"""`isolation: "worktree"` for subagents (placeholder until the core worktree helper lands)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from swarm.runtime.tools import ToolError


def start_worktree(team: str, agent_id: str, cwd: Path) -> Any:
    raise ToolError("isolation: worktree is not available yet")


def finish_worktree(record: Any) -> bool:
    return True
