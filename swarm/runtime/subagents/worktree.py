"""`isolation: "worktree"` for subagents, through the core worktree helper (the same as
teammates' worktrees): a fresh worktree per subagent at `teams/<team>/worktrees/<id>` on a new
branch `swarm/<team>/<id>` from the HEAD of its parent's checkout, with the
`worktree.symlinkDirectories` links a teammate's gets; removed with its branch when the
subagent changed nothing (the links are not its work), kept (and named in its result)
otherwise.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from swarm.core.team import worktrees
from swarm.core.team.worktree_links import configured
from swarm.core.team.worktrees import WorktreeRecord
from swarm.core.trust.workspace import ProjectConfig
from swarm.errors import SwarmError, ToolError


def start_worktree(team: str, agent_id: str, cwd: Path, project: ProjectConfig | None = None,
                   warn: Callable[[str], None] | None = None) -> WorktreeRecord:
    """`project`: the configuration its parent trusts (the project's symlinkDirectories with
    the user's); `warn` hears each entry skipped."""
    links, skipped = configured(project or ProjectConfig(None))
    for line in skipped:
        if warn is not None:
            warn(f"{agent_id}: warning: {line}")
    try:
        return worktrees.create(cwd, team, agent_id, links)
    except SwarmError as exc:  # its words are spawn's: say them for a subagent
        said = str(exc).removeprefix("--worktree: ").replace(
            "spawn without --worktree", "start the subagent without isolation")
        raise ToolError(f"isolation: worktree: {said}") from None


def worktree_notice(record: WorktreeRecord, parent_cwd: Path, inherited: bool) -> str:
    """What a subagent is told of its worktree; a fork (`inherited`: its parent's
    conversation) also that the paths in that conversation are the parent's (Claude Code's
    worktree notice)."""
    where = f"You work in your own git worktree: {record.path}, branch {record.branch}."
    if not inherited:
        return f"({where} Change files there only.)"
    return (f"({where} The conversation above is your parent's, which works in {parent_cwd}: a"
            f" path in it points at the parent's checkout; use the same path under"
            f" {record.path} instead. Re-read a file before you edit it: the parent may have"
            " changed it since, and your copy started from the last commit. Change files in"
            " your worktree only.)")


def finish_worktree(record: WorktreeRecord) -> bool:
    """True when it is kept (it has work in it, or git could not tell)."""
    return not worktrees.finish(record, record.path.name).removed
