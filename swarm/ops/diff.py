"""`swarm diff NAME`: what a member changed, as data (the CLI renders it).

A member with a worktree: the worktree against its base, the commit it branched from, so its
commits, its uncommitted changes and its new files (untracked, not ignored) all show; nothing is
written, not even its index. A worktree directory deleted by hand: its branch against the base.
A member without one: the files it wrote with Write and Edit (`teams/<team>/writes.json`,
core.team.overlaps), each against the HEAD of the repository it is in (a file git does not
track as new), else listed. Commands run through Bash are not traced: they show only in a
worktree. Git runs without external diff or textconv drivers: a teammate's files are data.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from swarm.core.records.team_config import Member
from swarm.core.team.overlaps import read_writes
from swarm.core.team.team import Team
from swarm.core.team.worktree_links import is_source_link
from swarm.core.team.worktrees import WorktreeRecord, git, record_of
from swarm.errors import OperationFailedError

_DIFF = ("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames")
_STATUS = {"A": "added", "D": "deleted", "M": "modified", "T": "modified"}
NOT_TRACED = "commands run through Bash are not recorded"


@dataclass
class FileChange:
    path: str  # relative to the worktree; absolute for the files a member wrote
    status: str  # modified | added | deleted | new | unchanged | gone | not in git
    added: int | None = None  # lines; None: binary, or not in git
    deleted: int | None = None


@dataclass
class MemberDiff:
    member: str
    source: str  # worktree | branch | writes
    where: str  # the worktree (or the checkout its branch is in); "" for writes
    branch: str
    base: str  # the commit the worktree branched from; "" for writes (each file: its HEAD)
    files: list[FileChange] = field(default_factory=list)
    diff: str = ""
    note: str = ""

    @property
    def added(self) -> int:
        return sum(f.added or 0 for f in self.files)

    @property
    def deleted(self) -> int:
        return sum(f.deleted or 0 for f in self.files)

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "added": self.added, "deleted": self.deleted}


def member_diff(team: Team, name: str) -> MemberDiff:
    """What member `name` changed. OperationFailedError when there is nothing to show."""
    member = team.member(name)
    if member.host:  # it writes (and records its writes) on its own host
        raise OperationFailedError(f"{member.name} runs on {member.host}: its files are there, "
                                   "not on this host (ssh there and look with git)")
    record = record_of(member)
    found = _from_worktree(member, record) if record is not None else None
    # Its worktree's files are in the diff above (or gone with the directory).
    inside = record.path.resolve() if found is not None and record is not None else None
    written = _written(team, member.name, inside)
    if found is None:
        found = MemberDiff(member.name, "writes", "", "", "", note=f"{NOT_TRACED}: only the "
                           "files its Write and Edit tools wrote are known")
    found.files += written.files
    found.diff += written.diff
    if not found.files:
        if found.source == "writes":
            raise OperationFailedError(
                f"{member.name} has nothing to show: no worktree, and no file written with its "
                f"Write or Edit tools ({NOT_TRACED})")
        raise OperationFailedError(f"{member.name} has nothing to show: its worktree "
                                   f"{found.where} has no changes against its base "
                                   f"{found.base[:10]}")
    return found


# -- a worktree -------------------------------------------------------------------------------
def _from_worktree(member: Member, record: WorktreeRecord) -> MemberDiff | None:
    tree, repo = record.path, record.repo
    if (tree / ".git").exists():
        base = record.base or _merge_base(tree, repo)
        found = MemberDiff(member.name, "worktree", str(tree), record.branch, base)
        _tracked(found, tree, (base,), relative_to=None)
        for path in _untracked(tree):
            found.files.append(_new_file(found, tree, path, shown=path))
        found.files.sort(key=lambda f: f.path)
        return found
    has_branch = record.branch and repo.is_dir() and git(
        "show-ref", "--verify", "--quiet", f"refs/heads/{record.branch}", cwd=repo,
        check=False).returncode == 0
    if not has_branch or not record.base:
        return None
    found = MemberDiff(member.name, "branch", str(repo), record.branch, record.base)
    _tracked(found, repo, (record.base, f"refs/heads/{record.branch}"), relative_to=None)
    return found


def _merge_base(tree: Path, repo: Path) -> str:
    """The base of a worktree recorded by an older swarm: where it parts from the checkout."""
    head = git("rev-parse", "HEAD", cwd=repo, check=False).stdout.strip()
    return git("merge-base", "HEAD", head, cwd=tree, check=False).stdout.strip() or "HEAD"


def _tracked(found: MemberDiff, where: Path, revs: tuple[str, ...], relative_to: Path | None,
             paths: list[str] | None = None) -> None:
    """Files git tracks, between `revs` (one rev: against the working tree), into `found`."""
    spec = ("--", *paths) if paths is not None else ("--",)
    counts = _fields(git(*_DIFF, "--numstat", "-z", *revs, *spec, cwd=where).stdout)
    letters = _fields(git(*_DIFF, "--name-status", "-z", *revs, *spec, cwd=where).stdout)
    status = dict(zip(letters[1::2], letters[::2], strict=False))
    for record in counts:
        added, deleted, path = record.split("\t", 2)
        shown = str(relative_to / path) if relative_to is not None else path
        found.files.append(FileChange(shown, _STATUS.get(status.get(path, "M")[:1], "modified"),
                                      None if added == "-" else int(added),
                                      None if deleted == "-" else int(deleted)))
    found.diff += git(*_DIFF, *revs, *spec, cwd=where).stdout


def _fields(out: str) -> list[str]:
    return [part for part in out.split("\0") if part]


def _untracked(tree: Path) -> list[str]:
    """New files in a worktree (not ignored), but the links swarm made (worktree_links)."""
    out = git("ls-files", "-z", "--others", "--exclude-standard", cwd=tree).stdout
    return [path for path in _fields(out) if not is_source_link(tree, path)]


def _new_file(found: MemberDiff, where: Path, path: str, shown: str) -> FileChange:
    """A file git does not track, as the diff that adds it."""
    patch = git(*_DIFF, "--no-index", "--", os.devnull, path, cwd=where, check=False).stdout
    found.diff += patch
    added, deleted = _counts(patch)
    return FileChange(shown, "new", added, deleted)


def _counts(patch: str) -> tuple[int | None, int | None]:
    """Lines added and deleted in one file's patch; None for a binary file."""
    if "\nBinary files " in patch:
        return None, None
    added = deleted = 0
    in_hunk = False
    for line in patch.splitlines():
        if line.startswith("@@"):
            in_hunk = True
        elif in_hunk and line.startswith("+"):
            added += 1
        elif in_hunk and line.startswith("-"):
            deleted += 1
    return added, deleted


# -- the files it wrote -----------------------------------------------------------------------
def _written(team: Team, member: str, worktree: Path | None) -> MemberDiff:
    """The files `member` wrote with Write and Edit (but those in its `worktree`, which its
    diff already holds), grouped by the repository each is in."""
    found = MemberDiff(member, "writes", "", "", "")
    by_repo: dict[Path, list[Path]] = {}
    for key, names in read_writes(team.name).paths.items():
        path = Path(key)
        if member not in names or (worktree is not None and path.is_relative_to(worktree)):
            continue
        top = _repository(path)
        if top is None:
            found.files.append(FileChange(key, "not in git" if path.exists() else "gone"))
        else:
            by_repo.setdefault(top, []).append(path)
    for top, written in by_repo.items():
        _in_repository(found, top, written)
    found.files.sort(key=lambda f: f.path)
    return found


def _repository(path: Path) -> Path | None:
    """The top of the git checkout `path` is in (the nearest directory that still exists)."""
    folder = path.parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    probe = git("rev-parse", "--show-toplevel", cwd=folder, check=False)
    return Path(probe.stdout.strip()).resolve() if probe.returncode == 0 else None


def _in_repository(found: MemberDiff, top: Path, written: list[Path]) -> None:
    rels = [str(path.relative_to(top)) for path in written]
    has_head = git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=top,
                   check=False).returncode == 0
    tracked = set(_fields(git("ls-files", "-z", "--", *rels, cwd=top).stdout)) \
        if has_head else set()
    known = [rel for rel in rels if rel in tracked and (top / rel).exists()]
    if known:
        before = len(found.files)
        _tracked(found, top, ("HEAD",), relative_to=top, paths=known)
        changed = {f.path for f in found.files[before:]}
        found.files += [FileChange(str(top / rel), "unchanged", 0, 0) for rel in known
                        if str(top / rel) not in changed]
    for rel in rels:
        if rel in known:
            continue
        if not (top / rel).is_file():
            found.files.append(FileChange(str(top / rel), "gone"))
        else:
            found.files.append(_new_file(found, top, rel, shown=str(top / rel)))
