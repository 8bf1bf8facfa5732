"""`swarm merge NAME [--squash] [--into BRANCH]`: land a member's worktree branch in the checkout
its worktree came from (the lead's), on its current branch or on BRANCH.

Either the work lands, or the checkout is exactly as it was (HEAD and `git status` compared
before and after): a conflict is aborted and its files listed. A checkout with uncommitted
changes to tracked files is refused before anything runs. `--into` a branch that is not checked
out merges in a temporary worktree of that branch, so the lead's checkout is never switched.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from swarm.core.store.disk import warn
from swarm.core.team.team import Team
from swarm.core.team.worktrees import check_branch_name, git, inspect, record_of
from swarm.errors import BadInputError, GitError, SwarmError


@dataclass
class MergeResult:
    member: str
    branch: str  # the member's branch
    into: str  # the branch that received it
    repo: str  # the checkout it came from
    squash: bool
    result: str  # merged | up-to-date | conflict | failed
    commits: int = 0  # commits of the member's branch that were not yet on `into`
    commit: str | None = None  # `into`'s new tip
    conflicts: list[str] = field(default_factory=list)
    error: str | None = None  # git's words when it failed for another reason
    uncommitted: list[str] = field(default_factory=list)  # in the member's worktree: not merged

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def _snapshot(where: Path) -> tuple[str, str]:
    head = git("rev-parse", "HEAD", cwd=where).stdout.strip()
    status = git("status", "--porcelain=v1", "-z", "--untracked-files=all", cwd=where).stdout
    return head, status


def _checked_out_at(repo: Path, branch: str) -> Path | None:
    """The worktree that has `branch` checked out, if any."""
    listing = git("worktree", "list", "--porcelain", cwd=repo).stdout
    path = None
    for line in listing.splitlines():
        if line.startswith("worktree "):
            path = Path(line[len("worktree "):])
        elif line == f"branch refs/heads/{branch}":
            return path
    return None


@contextmanager
def _checkout_of(repo: Path, target: str, current: str | None) -> Iterator[Path]:
    """Where to merge into `target`: the checkout itself when it is on `target`, else a
    temporary worktree of `target` (removed afterwards)."""
    if target == current:
        yield repo
        return
    elsewhere = _checked_out_at(repo, target)
    if elsewhere is not None:
        raise BadInputError(f"branch {target} is checked out at {elsewhere}: merge there, or pass "
                            "a branch that is not checked out")
    scratch = Path(tempfile.mkdtemp(prefix="swarm-merge-"))
    where = scratch / "checkout"
    try:
        git("worktree", "add", "--quiet", "--", str(where), target, cwd=repo)
        yield where
    finally:
        git("worktree", "remove", "--force", "--", str(where), cwd=repo, check=False)
        shutil.rmtree(scratch, ignore_errors=True)
        git("worktree", "prune", cwd=repo, check=False)


def _restore(where: Path, before: tuple[str, str]) -> None:
    """Undo a merge that did not complete; the checkout must end as it began."""
    git("merge", "--abort", cwd=where, check=False)
    if _snapshot(where) != before:
        git("reset", "--merge", "HEAD", cwd=where, check=False)
    if _snapshot(where) != before:
        raise SwarmError(f"the merge in {where} could not be undone cleanly: look at "
                         "`git status` there (HEAD is unchanged: `git reset --merge` restores it)")


def merge(team: Team, name: str, squash: bool = False, into: str | None = None) -> MergeResult:
    member = team.member(name)
    record = record_of(member)
    if not member.worktree_branch or not member.worktree_repo:
        raise BadInputError(f"{member.name} has no worktree branch to merge (spawn with "
                            "--worktree); see `swarm worktrees`")
    repo, branch = Path(member.worktree_repo), member.worktree_branch
    if not repo.is_dir():
        raise BadInputError(f"the checkout {repo} that {member.name}'s worktree came from is gone")
    tip = git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}^{{commit}}", cwd=repo,
              check=False).stdout.strip()
    if not tip:
        raise BadInputError(f"branch {branch} of {member.name} no longer exists in {repo}")
    current = git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=repo,
                  check=False).stdout.strip() or None
    if into is not None:
        check_branch_name(into, repo)
    target = into or current
    if target is None:
        raise BadInputError(f"the checkout at {repo} is on a detached HEAD: check out a branch "
                            "or pass --into BRANCH")
    if target == branch:
        raise BadInputError(f"cannot merge {branch} into itself")
    if into and git("show-ref", "--verify", "--quiet", f"refs/heads/{into}", cwd=repo,
                    check=False).returncode != 0:
        raise BadInputError(f"no branch {into!r} in {repo}")
    if target == current:
        changed = git("status", "--porcelain", "--untracked-files=no", cwd=repo).stdout
        if changed.strip():
            files = ", ".join(line[3:] for line in changed.splitlines()[:5])
            raise BadInputError(f"the checkout {repo} has uncommitted changes ({files}); commit "
                                "or stash them first: a merge must be able to undo itself")
    uncommitted = inspect(record).dirty if record is not None and record.path.is_dir() else []
    if uncommitted:
        warn(f"{member.name} has {len(uncommitted)} uncommitted file(s) in its worktree: they "
             "are not part of the merge (commit them there first)")
    result = MergeResult(member=member.name, branch=branch, into=target, repo=str(repo),
                         squash=squash, result="up-to-date", uncommitted=uncommitted)
    with _checkout_of(repo, target, current) as where:
        result.commits = int(git("rev-list", "--count", f"HEAD..{tip}", "--", cwd=where).stdout)
        if result.commits == 0:
            return result
        before = _snapshot(where)
        try:
            if squash:
                git("merge", "--squash", "--", tip, cwd=where)
                subjects = git("log", "--format=- %s", f"HEAD..{tip}", "--", cwd=where).stdout
                git("commit", "--quiet", "-m", f"{member.name}: work from {branch} (squashed)",
                    "-m", subjects.strip(), cwd=where)
            else:
                git("merge", "--no-edit", "-m", f"Merge {member.name}'s work ({branch})", "--",
                    tip, cwd=where)
        except GitError as exc:
            unmerged = git("diff", "--name-only", "--diff-filter=U", cwd=where, check=False)
            result.conflicts = [line for line in unmerged.stdout.splitlines() if line]
            result.result = "conflict" if result.conflicts else "failed"
            result.error = None if result.conflicts else str(exc)
            _restore(where, before)
            return result
        result.result = "merged"
        result.commit = git("rev-parse", "HEAD", cwd=where).stdout.strip()
    return result
