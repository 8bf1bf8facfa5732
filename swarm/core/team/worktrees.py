"""Git worktrees for members (and, later, subagents): one helper for their whole life.

`create` adds a worktree at `teams/<team>/worktrees/<name>` on a new branch `swarm/<team>/<name>`
(a fresh `-xxxx` suffix when an earlier team left that branch) from the spawning checkout's
HEAD, and returns what to record. `inspect` says what is in it (commits beyond its base, dirty
files). `finish` removes a worktree with nothing in it together with its branch, and keeps any
other (never deleting uncommitted work unless `discard`). `leave_team` gets every worktree out
of a team directory about to be deleted: kept ones move to `$SWARM_HOME/kept-worktrees/`.

Only git's command line and paths: nothing above the core, so the runtime can use it too.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field
from msgspec.structs import asdict

from swarm.core.store import paths
from swarm.core.store.disk import ensure_dir
from swarm.core.team.worktree_links import drop_links, is_source_link, link
from swarm.errors import BadInputError, GitError, SwarmError

if TYPE_CHECKING:
    from swarm.core.records.team_config import Member
    from swarm.core.team.team import Team

log = logging.getLogger(__name__)

# Variables that would point git at another repository than the one we name with -C.
_GIT_REDIRECTS = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX",
                  "GIT_OBJECT_DIRECTORY", "GIT_NAMESPACE")


def git(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run git in `cwd` (C locale: we read its messages); GitError on failure when `check`.
    Callers put `--` before refs and paths: a name from a file or a person (`-evil`) is then
    a literal name, never an option."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_REDIRECTS}
    env.update(LC_ALL="C", GIT_TERMINAL_PROMPT="0")
    try:
        proc = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                              env=env, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise BadInputError("git is not installed: worktrees need it") from None
    if check and proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip()).replace("\n", "; ")
        raise GitError(f"git {' '.join(args)} failed in {cwd}: {said}")
    return proc


class WorktreeRecord(Struct, frozen=True):
    """What a member (or subagent) records about its worktree."""

    path: Path  # the worktree
    branch: str  # swarm/<team>/<name>[-xxxx]
    base: str  # the commit it started from
    repo: Path  # the checkout it came from: where `swarm merge` lands its work
    cwd: Path  # where its owner works: the worktree, or the same subdirectory as the spawner


class WorktreeStatus(Struct, dict=True):
    exists: bool
    ahead: int  # commits beyond the base (on its HEAD or its branch); -1: unknown
    unmerged: int  # of those, commits not in the current HEAD of the checkout it came from
    dirty: list[str] = field(default_factory=list)  # uncommitted changes and untracked files
    error: str | None = None  # git could not look inside (e.g. its repository is gone)

    @property
    def has_work(self) -> bool:
        """Anything removing it would lose: uncommitted changes, or commits merged nowhere
        (or we cannot tell)."""
        return bool(self.dirty) or self.unmerged != 0 or self.error is not None


class Finished(Struct, dict=True):
    member: str
    path: str  # where it is now when kept; where it was when removed
    branch: str
    removed: bool  # the directory and its `git worktree list` entry are gone
    branch_deleted: bool
    ahead: int
    dirty: list[str]
    note: str = ""

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def describe(self) -> str:
        if self.removed:
            kept = "" if self.branch_deleted else f"; branch {self.branch} kept ({self.note})"
            return f"{self.member}: removed its worktree{kept}"
        what = []
        if self.dirty:
            what.append(f"{len(self.dirty)} uncommitted file(s)")
        if self.ahead:
            what.append(f"{self.ahead} commit(s)" if self.ahead > 0 else "commits")
        detail = ", ".join(what) or self.note
        return f"{self.member}: kept worktree {self.path} (branch {self.branch}; {detail})"


# -- creating ---------------------------------------------------------------------------------
def repository_of(cwd: Path) -> tuple[Path, str]:
    """The checkout `cwd` is in and its HEAD commit. BadInputError when there is nothing to
    branch from: not a repository, a bare one, inside `.git`, or no commit yet."""
    probe = git("rev-parse", "--is-bare-repository", "--is-inside-git-dir", cwd=cwd, check=False)
    if probe.returncode != 0:
        raise BadInputError(f"--worktree: {cwd} is not inside a git repository (run `git init` "
                            "and commit first, or spawn without --worktree)")
    bare, in_git_dir = (probe.stdout.split() + ["false", "false"])[:2]
    if bare == "true":
        raise BadInputError(f"--worktree: {cwd} is a bare git repository: it has no checked-out "
                            "HEAD to branch from; spawn from a clone of it")
    if in_git_dir == "true":
        raise BadInputError(f"--worktree: {cwd} is inside a .git directory; spawn from the checkout")
    top = Path(git("rev-parse", "--show-toplevel", cwd=cwd).stdout.strip())
    head = git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=top, check=False)
    if head.returncode != 0:
        raise BadInputError(f"--worktree: the repository at {top} has no commit yet; commit "
                            "something first (a worktree starts from HEAD)")
    return top, head.stdout.strip()


def check_branch_name(name: str, cwd: Path) -> str:
    """A branch name a person gave (`merge --into`), by git's own rules (`check-ref-format
    --branch`): no leading `-`, no `..`, no `@{...}`, so it never reads as an option or a range."""
    proc = git("check-ref-format", "--branch", name, cwd=cwd, check=False)
    if proc.returncode != 0 or proc.stdout.strip() != name:
        shown = name.encode("unicode_escape").decode("ascii")
        raise BadInputError(f"{shown!r} is not a valid branch name")
    return name


def _branch_exists(repo: Path, branch: str) -> bool:
    return git("show-ref", "--verify", "--quiet", f"refs/heads/{branch}", cwd=repo,
               check=False).returncode == 0


def _free(path: Path) -> Path:
    candidate = path
    while candidate.exists():
        candidate = path.with_name(f"{path.name}-{secrets.token_hex(2)}")
    return candidate


def create(cwd: Path, team: str, name: str, links: Sequence[str] = ()) -> WorktreeRecord:
    """`git worktree add` for member `name` of `team`, from the HEAD of `cwd`'s checkout; the
    checkout's directories named in `links` are symlinked in (worktree_links)."""
    cwd = cwd.resolve()
    repo, base = repository_of(cwd)
    prune(repo)  # an entry for a directory deleted by hand must not block its path or branch
    target = _free(ensure_dir(paths.worktrees_dir(team)) / name)
    wanted = f"swarm/{team}/{name}"
    for attempt in range(50):
        branch = wanted if attempt == 0 else f"{wanted}-{secrets.token_hex(2)}"
        if _branch_exists(repo, branch):
            continue  # left by an earlier team of this name: never reuse (or fail on) it
        added = git("worktree", "add", "-b", branch, "--", str(target), base, cwd=repo,
                    check=False)
        if added.returncode == 0:
            break
        if _branch_exists(repo, branch):
            continue  # another spawn took the name between our look and our add
        said = added.stderr.strip().replace("\n", "; ")
        raise BadInputError(f"--worktree: cannot create branch {branch} in {repo}: {said}")
    else:  # pragma: no cover - 50 clashes of 16 random bits
        raise SwarmError(f"--worktree: no free branch name like {wanted}")
    log.info("worktree %s on branch %s from %s at %s", target, branch, repo, base[:10])
    link(repo, target, links)
    inside = target / cwd.relative_to(repo) if cwd.is_relative_to(repo) else target
    return WorktreeRecord(path=target, branch=branch, base=base, repo=repo,
                          cwd=inside if inside.is_dir() else target)


def reattach(record: WorktreeRecord) -> bool:
    """A member's worktree directory is gone (deleted, a wiped disk) but its branch is not:
    check the branch out again at the same path, so its commits are where it left them.
    False when there is no branch to go back to (the caller makes a new worktree)."""
    if record.path.is_dir() or not record.branch or not record.repo.is_dir():
        return False
    if not _branch_exists(record.repo, record.branch):
        return False
    prune(record.repo)  # the entry of the deleted directory still holds the branch
    added = git("worktree", "add", "--", str(record.path), record.branch, cwd=record.repo,
                check=False)
    return added.returncode == 0


def prune(repo: Path) -> None:
    """Drop `git worktree list` entries whose directory is gone."""
    if repo.is_dir():
        git("worktree", "prune", cwd=repo, check=False)


# -- looking ----------------------------------------------------------------------------------
def dirty_files(path: Path) -> list[str]:
    """What `git status` lists, but the links swarm made (worktree_links)."""
    return [f for f in _entries(path) if not is_source_link(path, f)]


def _entries(path: Path) -> list[str]:
    out = git("status", "--porcelain=v1", "-z", "--untracked-files=normal", cwd=path).stdout
    entries = out.split("\0")
    files: list[str] = []
    skip = False
    for entry in entries:
        if skip:  # the source path of a rename or copy
            skip = False
            continue
        if len(entry) > 3:
            files.append(entry[3:])
            skip = entry[0] in "RC"
    return files


def _count(where: Path, *revs: str) -> int:
    """Commits in `revs`; -1 when git cannot say (then nothing is deleted on its word)."""
    proc = git("rev-list", "--count", "--ignore-missing", *revs, "--", cwd=where, check=False)
    return int(proc.stdout.strip()) if proc.returncode == 0 and proc.stdout.strip() else -1


def inspect(record: WorktreeRecord) -> WorktreeStatus:
    exists = (record.path / ".git").exists()
    admin = record.repo if record.repo.is_dir() else record.path
    tips = [f"refs/heads/{record.branch}"]
    dirty: list[str] = []
    if exists:
        try:
            dirty = dirty_files(record.path)
        except GitError as exc:
            return WorktreeStatus(exists=True, ahead=-1, unmerged=-1, error=str(exc))
        head = git("rev-parse", "--verify", "--quiet", "HEAD", cwd=record.path, check=False)
        if head.returncode == 0:
            tips.append(head.stdout.strip())
    ahead = _count(admin, *tips, f"^{record.base}")
    unmerged = ahead
    if ahead > 0 and record.repo.is_dir():  # merged into the checkout it came from: nothing to lose
        unmerged = _count(record.repo, *tips, "^HEAD")
    return WorktreeStatus(exists=exists, ahead=ahead, unmerged=unmerged, dirty=dirty)


# -- finishing --------------------------------------------------------------------------------
def _move(record: WorktreeRecord, destination: Path) -> Path:
    destination = _free(destination)
    ensure_dir(destination.parent)
    moved = git("worktree", "move", "--", str(record.path), str(destination),
                cwd=record.repo if record.repo.is_dir() else record.path, check=False)
    if moved.returncode != 0:  # e.g. another filesystem: move it ourselves, then tell git
        shutil.move(str(record.path), str(destination))
        git("worktree", "repair", cwd=destination, check=False)
    return destination


def finish(record: WorktreeRecord, member: str = "", *, discard: bool = False,
           keep_at: Path | None = None) -> Finished:
    """Remove the worktree and its branch when nothing would be lost (or when `discard`: then
    uncommitted work goes, but a branch with unmerged commits stays, since committed work costs
    nothing to keep). Otherwise keep it, moved to `keep_at` when given. Raises nothing for git's
    failures: a worktree it cannot remove is kept, with the reason in `note`."""
    status = inspect(record)
    admin = record.repo if record.repo.is_dir() else record.path
    keep = status.has_work and not discard
    note = ""
    removed = not status.exists
    if status.exists and not keep:
        force = ("--force", "--force") if discard else ()
        drop_links(record.path, _entries(record.path))  # else git sees untracked files
        gone = git("worktree", "remove", *force, "--", str(record.path), cwd=admin, check=False)
        removed = gone.returncode == 0
        if not removed:
            note = "git could not remove it: " + " ".join(gone.stderr.split())
    prune(record.repo)
    if status.exists and not removed:
        path = _move(record, keep_at) if keep_at is not None else record.path
        log.info("kept worktree %s (branch %s): %d dirty file(s), %d commit(s) ahead", path,
                 record.branch, len(status.dirty), status.ahead)
        return Finished(member, str(path), record.branch, False, False, status.ahead,
                        status.dirty, note or status.error or "kept")
    deleted = False
    if status.unmerged == 0 and record.repo.is_dir():
        deleted = git("branch", "-D", "--", record.branch, cwd=record.repo,
                      check=False).returncode == 0
    elif status.unmerged:
        note = "commits not merged" if status.unmerged < 0 else \
            f"{status.unmerged} commit(s) not merged"
    log.info("removed worktree %s (branch %s %s)", record.path, record.branch,
             "deleted" if deleted else "kept")
    return Finished(member, str(record.path), record.branch, True, deleted, status.ahead,
                    status.dirty, note)


# -- members ----------------------------------------------------------------------------------
def record_of(member: Member) -> WorktreeRecord | None:
    if not member.worktree_path:
        return None
    path = Path(member.worktree_path)
    return WorktreeRecord(path=path, branch=member.worktree_branch or "",
                          base=member.worktree_base or "",
                          repo=Path(member.worktree_repo or path), cwd=Path(member.cwd or path))


def record_fields(record: WorktreeRecord) -> dict[str, object]:
    """The member fields to store for a new worktree."""
    return {"cwd": str(record.cwd), "worktree_path": str(record.path),
            "worktree_branch": record.branch, "worktree_base": record.base,
            "worktree_repo": str(record.repo)}


def finish_member(team: Team, member: Member, *, discard: bool = False,
                  keep_at: Path | None = None) -> Finished | None:
    """Finish a member's worktree (it exited, or its team is going) and record the outcome: a
    removed one is forgotten (a respawn makes a new one), a kept one is recorded where it is."""
    record = record_of(member)
    if record is None:
        return None
    if not record.base or not record.branch:  # recorded by an older swarm: keep, never guess
        path = _move(record, keep_at) if keep_at is not None and record.path.exists() else record.path
        done = Finished(member.name, str(path), record.branch, False, False, 0, [],
                        "no base commit recorded")
    else:
        done = finish(record, member.name, discard=discard, keep_at=keep_at)
    if done.removed:
        team.update_member(member.name, worktree_path=None, worktree_branch=None,
                           worktree_base=None)
    elif done.path != str(record.path):
        moved_cwd = Path(done.path) / record.cwd.relative_to(record.path) \
            if record.cwd.is_relative_to(record.path) else Path(done.path)
        team.update_member(member.name, worktree_path=done.path, cwd=str(moved_cwd))
    return done


def kept_path(team: str, name: str) -> Path:
    return paths.kept_worktrees_dir() / f"{team}-{name}"


def leave_team(team: Team, *, discard: bool = False) -> list[Finished]:
    """Before a team directory is deleted: remove each clean worktree in it with its branch and
    move each one with work out to `$SWARM_HOME/kept-worktrees/<team>-<name>` (its branch and
    `git worktree list` entry follow it). Kept worktrees already outside are left alone."""
    inside = paths.team_dir(team.name).resolve()
    out = []
    for member in team.members():
        record = record_of(member)
        if record is None or not record.path.resolve().is_relative_to(inside):
            continue
        done = finish_member(team, member, discard=discard,
                             keep_at=kept_path(team.name, member.name))
        if done is not None:
            out.append(done)
    for record in unclaimed(team):  # a subagent's, kept with its work: moved out, never guessed
        path = _move(record, kept_path(team.name, record.path.name))
        out.append(Finished(record.path.name, str(path), record.branch, False, False, 0, [],
                            "no member's (a subagent's, kept with its work)"))
    return out


def unclaimed(team: Team) -> list[WorktreeRecord]:
    """Worktrees in the team's worktree directory that no member records: subagents' that were
    kept (`isolation: worktree`). Their base is not known here, so they are only ever kept."""
    root = paths.worktrees_dir(team.name)
    claimed = {r.path.resolve() for m in team.members() if (r := record_of(m)) is not None}
    out = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if not (path / ".git").is_file() or path.resolve() in claimed:
            continue
        branch = git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=path, check=False)
        common = git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=path,
                     check=False).stdout.strip()
        out.append(WorktreeRecord(path=path, branch=branch.stdout.strip(), base="",
                                  repo=Path(common).parent if common else path, cwd=path))
    return out
