"""`swarm worktrees` (what is in each member's worktree) and `swarm merge NAME`."""

from __future__ import annotations

from typing import Any

import click

from swarm.cli.common import emit, json_option, open_team, table, team_option
from swarm.cli.completion import complete_member
from swarm.cli.helptext import examples
from swarm.core.team.worktree_view import team_worktrees
from swarm.errors import OperationFailedError
from swarm.ops.merge import merge as do_merge


@click.command(epilog=examples("swarm worktrees", "swarm worktrees --team alpha --json"))
@team_option
@json_option
def worktrees(team_name: str | None, as_json: bool) -> None:
    """List members' worktrees.

    Member, path, branch, base commit, commits ahead of the base, uncommitted files.
    """
    views = team_worktrees(open_team(team_name))

    def human(_: Any) -> str:
        if not views:
            return "(no worktrees: spawn with --worktree)"
        rows = []
        for v in views:
            dirty = ", ".join(v.dirty[:3]) + (f" (+{len(v.dirty) - 3})" if len(v.dirty) > 3 else "")
            ahead = "?" if v.ahead < 0 else str(v.ahead)
            rows.append([v.member, v.path if v.exists else f"{v.path} (gone)", v.branch,
                         v.base[:10], ahead, dirty or "-"])
        return table(rows, ["MEMBER", "PATH", "BRANCH", "BASE", "AHEAD", "DIRTY"])

    emit([v.as_dict() for v in views], as_json, human)


@click.command(epilog=examples("swarm merge worker", "swarm merge worker --squash --into main"))
@click.argument("name", shell_complete=complete_member)
@click.option("--squash", is_flag=True, help="One commit with all of the member's changes.")
@click.option("--into", "into", default=None, metavar="BRANCH",
              help="Merge into BRANCH (default: the current branch of the lead's checkout).")
@team_option
@json_option
def merge(name: str, squash: bool, into: str | None, team_name: str | None,
          as_json: bool) -> None:
    """Merge a member's worktree branch into the lead's checkout.

    On a conflict the merge is aborted (the checkout is as it was), the conflicting files are
    listed, and the exit code is 1. Uncommitted changes in the checkout are refused (exit 2).
    """
    result = do_merge(open_team(team_name), name, squash=squash, into=into)

    def human(_: Any) -> str:
        how = "squashed" if squash else "merged"
        if result.result == "merged":
            return (f"{how} {result.member} ({result.branch}, {result.commits} commit(s)) into "
                    f"{result.into} at {result.repo}: now {(result.commit or '')[:10]}")
        if result.result == "up-to-date":
            return f"nothing to merge: {result.into} already has every commit of {result.branch}"
        if result.result == "conflict":
            return "conflicting files:\n" + "\n".join(f"  {f}" for f in result.conflicts)
        return ""

    emit(result.as_dict(), as_json, human)
    if result.result == "conflict":
        raise OperationFailedError(
            f"merging {result.branch} into {result.into} conflicts in {len(result.conflicts)} "
            f"file(s); the merge was aborted and {result.repo} is as it was")
    if result.result == "failed":
        raise OperationFailedError(f"merge aborted, {result.repo} is as it was: {result.error}")
