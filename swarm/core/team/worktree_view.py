"""`swarm worktrees`: every member's worktree, and kept subagents' ones, with what is in them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from msgspec import Struct
from msgspec.structs import asdict

from swarm.core.team.worktrees import WorktreeStatus, dirty_files, inspect, record_of, unclaimed

if TYPE_CHECKING:
    from swarm.core.team.team import Team


class WorktreeView(Struct, dict=True):
    member: str
    path: str
    branch: str
    base: str
    repo: str
    exists: bool
    ahead: int
    unmerged: int
    dirty: list[str]

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def team_worktrees(team: Team) -> list[WorktreeView]:
    """`swarm worktrees`: every member's worktree and what is in it."""
    out = []
    for member in team.members():
        record = record_of(member)
        if record is None:
            continue
        status = inspect(record) if record.base else WorktreeStatus(record.path.exists(), 0, 0)
        out.append(WorktreeView(member.name, str(record.path), record.branch, record.base,
                                str(record.repo), status.exists, status.ahead, status.unmerged,
                                status.dirty))
    for record in unclaimed(team):  # kept subagents' worktrees (named by the subagent's id)
        out.append(WorktreeView(record.path.name, str(record.path), record.branch, "",
                                str(record.repo), True, -1, -1, dirty_files(record.path)))
    return out
