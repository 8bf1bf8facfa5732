"""`isolation: "worktree"` for subagents: a fresh git worktree per subagent, removed with its
branch when the subagent changed nothing, kept (and named in its result) otherwise.

A minimal private helper: teammates' worktrees get theirs from the core worktree helper (being
written beside this); once that lands, this module only adapts it.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from dataclasses import dataclass
from pathlib import Path

from swarm.core import paths
from swarm.core.store import ensure_dir
from swarm.runtime.tools import ToolError

# Variables that would point git at another repository than the one we name with -C.
_GIT_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR")


@dataclass(frozen=True)
class Isolated:
    path: Path  # the worktree
    branch: str  # swarm/<team>/<subagent id>[-xxxx]
    base: str  # the commit it started from
    repo: Path  # the checkout it came from
    cwd: Path  # where the subagent works: the same subdirectory as its parent, in the worktree


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_REDIRECTS}
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    try:
        return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                              env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise ToolError("isolation: worktree needs git, which is not installed") from None


def _out(proc: subprocess.CompletedProcess[str]) -> str:
    return " ".join((proc.stderr.strip() or proc.stdout.strip()).split())


def start_worktree(team: str, agent_id: str, cwd: Path) -> Isolated:
    """`git worktree add` on a new branch from the HEAD of `cwd`'s checkout."""
    cwd = cwd.resolve()
    top = _git("rev-parse", "--show-toplevel", cwd=cwd)
    if top.returncode != 0:
        raise ToolError(f"isolation: worktree: {cwd} is not inside a git repository")
    repo = Path(top.stdout.strip())
    head = _git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=repo)
    if head.returncode != 0:
        raise ToolError(f"isolation: worktree: the repository at {repo} has no commit yet")
    base = head.stdout.strip()
    root = ensure_dir(paths.team_dir(team) / "worktrees")  # ids have a dot: no member's name
    for _ in range(20):
        suffix = "" if _ == 0 else f"-{secrets.token_hex(2)}"
        path, branch = root / f"{agent_id}{suffix}", f"swarm/{team}/{agent_id}{suffix}"
        if path.exists():
            continue
        added = _git("worktree", "add", "-q", "-b", branch, str(path), base, cwd=repo)
        if added.returncode == 0:
            break
        if "already exists" not in added.stderr:
            raise ToolError(f"isolation: worktree: git worktree add failed: {_out(added)}")
    else:  # pragma: no cover - 20 clashes of 16 random bits
        raise ToolError(f"isolation: worktree: no free branch name like swarm/{team}/{agent_id}")
    inside = path / cwd.relative_to(repo) if cwd.is_relative_to(repo) else path
    return Isolated(path=path, branch=branch, base=base, repo=repo,
                    cwd=inside if inside.is_dir() else path)


def finish_worktree(record: Isolated) -> bool:
    """Remove the worktree and its branch when the subagent left nothing in it (no changed or
    new file, no commit); True when it is kept. Never deletes what git cannot vouch for."""
    if not record.path.exists():
        return False
    dirty = _git("status", "--porcelain", "--untracked-files=normal", cwd=record.path)
    ahead = _git("rev-list", "--count", f"{record.base}..HEAD", cwd=record.path)
    if (dirty.returncode != 0 or dirty.stdout.strip() or ahead.returncode != 0
            or ahead.stdout.strip() != "0"):
        return True
    removed = _git("worktree", "remove", str(record.path), cwd=record.repo)
    if removed.returncode != 0:
        return True
    _git("branch", "-D", record.branch, cwd=record.repo)
    return False
