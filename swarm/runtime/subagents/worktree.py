"""`isolation: "worktree"` for subagents, through the core worktree helper (the same as
teammates' worktrees): a fresh worktree per subagent at `teams/<team>/worktrees/<id>` on a new
branch `swarm/<team>/<id>` from the HEAD of its parent's checkout; removed with its branch when
the subagent changed nothing, kept (and named in its result) otherwise.
"""

from __future__ import annotations

from pathlib import Path

from swarm.core.team import worktrees
from swarm.core.team.worktrees import WorktreeRecord
from swarm.errors import SwarmError, ToolError


def start_worktree(team: str, agent_id: str, cwd: Path) -> WorktreeRecord:
    try:
        return worktrees.create(cwd, team, agent_id)
    except SwarmError as exc:  # its words are spawn's: say them for a subagent
        said = str(exc).removeprefix("--worktree: ").replace(
            "spawn without --worktree", "start the subagent without isolation")
        raise ToolError(f"isolation: worktree: {said}") from None


def finish_worktree(record: WorktreeRecord) -> bool:
    """True when it is kept (it has work in it, or git could not tell)."""
    return not worktrees.finish(record, record.path.name).removed
