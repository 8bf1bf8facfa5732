"""`worktree.symlinkDirectories`: directories of the source checkout (node_modules, .venv) that a
member's new worktree gets as symlinks instead of going without them (a fresh `git worktree
add` has no untracked files). Read from the user's `$SWARM_HOME/settings.json` and, when the
project is trusted, its `.swarm/settings.json` (the caller passes the trusted view).

The links are swarm's, not the member's work: `git status` lists them as untracked (a
`node_modules/` ignore pattern matches no symlink), so `is_source_link` tells them apart and a
worktree with nothing else in it is still clean and removed.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from swarm.core.store import paths
from swarm.core.trust.config_files import read_config_file, read_json_object
from swarm.core.trust.workspace import ProjectConfig

log = logging.getLogger(__name__)
SETTING = "worktree.symlinkDirectories"


def configured(project: ProjectConfig) -> tuple[list[str], list[str]]:
    """The directory names to link (the user's, then the project's) and one warning per entry
    skipped. A settings file that does not parse is its hooks loader's to report."""
    user = paths.user_settings()
    sources = [(str(user), read_json_object(user))]
    project_file = project.first("settings")
    if project_file is not None:
        sources.append((str(project_file.path), read_config_file(project_file)))
    names: list[str] = []
    warnings: list[str] = []
    for where, (data, problem) in sources:
        section = (data or {}).get("worktree") if problem is None else None
        value = section.get("symlinkDirectories") if isinstance(section, dict) else None
        if value is None:
            continue
        if not isinstance(value, list):
            warnings.append(f"{where}: {SETTING} must be a list of directory names; ignored")
            continue
        for name in value:
            bad = _refusal(name)
            if bad is not None:
                warnings.append(f"{where}: {SETTING} entry {name!r} {bad}; skipped")
            elif name not in names:
                names.append(name)
    return names, warnings


def _refusal(name: object) -> str | None:
    """Why an entry is not a relative path inside the checkout, or None."""
    if not isinstance(name, str) or not name.strip() or "\0" in name:
        return "is not a directory name"
    path = PurePosixPath(name)
    if path.is_absolute():
        return "is absolute: give a path relative to the checkout"
    if ".." in path.parts:
        return "leaves the checkout (..)"
    if path.parts in ((), (".",)) or path.parts[0] == ".git":
        return "names the checkout itself"
    return None


def link(repo: Path, tree: Path, names: Sequence[str]) -> None:
    """Symlink each name that is a directory of `repo` into the new worktree `tree`; one that is
    missing there is skipped (nothing to share), one already in the worktree is left alone."""
    root = repo.resolve()
    for name in names:
        source, target = repo / name, tree / name
        if not source.is_dir():
            continue
        if not source.resolve().is_relative_to(root):  # a symlink in the checkout leading out
            log.warning("%s: %s resolves outside %s; not linked", SETTING, source, root)
            continue
        if os.path.lexists(target):
            log.warning("%s: %s is in the worktree already; not linked", SETTING, target)
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(source, target, target_is_directory=True)
        except OSError as exc:  # the worktree still works without it
            log.warning("%s: cannot link %s: %s", SETTING, target, exc)


def is_source_link(tree: Path, entry: str) -> bool:
    """A `git status` entry of `tree` that `link` made: a symlink to the directory of the same
    relative path in another checkout."""
    path = tree / entry.rstrip("/")
    if not path.is_symlink():
        return False
    pointed = os.readlink(path)
    return (os.path.isabs(pointed) and pointed.endswith(os.sep + entry.rstrip("/"))
            and not Path(pointed).is_relative_to(tree) and os.path.isdir(pointed))


def drop_links(tree: Path, entries: Sequence[str]) -> None:
    """Remove the links among `tree`'s `git status` entries (the directories they point at
    stay), before git removes the worktree."""
    for entry in entries:
        if is_source_link(tree, entry):
            (tree / entry.rstrip("/")).unlink()
