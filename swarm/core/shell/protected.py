"""Protected paths: where a write changes what git, swarm or an agent CLI runs or reads next.

`.git/` (hooks; config: `core.fsmonitor`, `core.hooksPath`, aliases), and what any kind of
teammate reads its project configuration or instructions from (core.kinds: `.swarm/`,
`.claude/`, `.codex/`, `.gemini/`: hooks, MCP servers, agent definitions, settings;
`.mcp.json`, `CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, ...), at any depth of the tree, and
`$SWARM_HOME` (the team file and its allow rules, mailboxes, tasks), except the worktrees swarm
keeps there (a teammate's work). A write to one asks in `default` and `acceptEdits` even under an
allow rule, unless the rule names that path exactly; `bypassPermissions` allows it.

A path is checked as written and with symlinks resolved at check time, so a link made earlier is
seen through. A hard link cannot be resolved (any file anywhere may share its inode): a regular
file with more than one link counts as protected, since it may be `.git/config` under another name.
A git directory by another name (a moved or copied `.git`, a bare clone: HEAD, objects/, refs/)
is protected as `.git` is. What a command links or moves in the same breath: core.shell.links.
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache
from pathlib import Path

from swarm.core import kinds
from swarm.core.store import paths

GIT_DIR = ".git"


def protected_names() -> tuple[frozenset[str], frozenset[str]]:
    """(folders, files), case-folded: `.git` and what any kind of teammate reads its project
    configuration or instructions from (core.kinds: `.swarm/`, `.claude/`, `.codex/`,
    `.gemini/`, `.mcp.json`, `CLAUDE.md`, `AGENTS.md`, ...)."""
    folders, files = kinds.protected_names()
    return folders | {GIT_DIR}, files


def absolute(raw: str, cwd: Path) -> Path:
    path = Path(os.path.expanduser(raw))
    return path if path.is_absolute() else cwd / path


def inside(path: Path, root: Path) -> bool:
    """Is `path` inside `root`, after resolving `..` and symlinks (also of missing parents)?"""
    try:
        resolved = os.path.realpath(path)
        return _below(resolved, real_dir(str(root)))
    except (OSError, ValueError):
        return False


@lru_cache(maxsize=64)
def real_dir(directory: str) -> str:
    """A working directory resolved, once per process: what it resolves through lies outside it,
    where an allow rule never writes."""
    return os.path.realpath(directory)


def is_protected(path: Path, cwd: Path, links: bool = True) -> bool:
    """Does a write to `path` land in a protected place, as written or with symlinks resolved,
    or may it (`links`: a file with other hard links)?"""
    written = os.path.normpath(path)
    real = os.path.realpath(written)
    return _by_name(written, real, cwd) or (links and hard_linked(path)) or in_git_dir(real, cwd)


def in_git_dir(real: str, cwd: Path) -> bool:
    """Inside a directory git reads as a repository (HEAD, objects/, refs/) by another name than
    `.git`: a moved or copied `.git`, a bare clone (`git --git-dir=g`, `cd g && git ..` read its
    config and hooks). Looked for from the path up to the cwd: a write outside asks anyway."""
    top = real_dir(str(cwd))
    if not _below(real, top):
        return False
    here = real
    while True:
        if os.path.isfile(os.path.join(here, "HEAD")) and os.path.isdir(
                os.path.join(here, "objects")) and os.path.isdir(os.path.join(here, "refs")):
            return True
        if here == top:
            return False
        here = os.path.dirname(here)


def hard_linked(path: Path) -> bool:
    """A regular file with more than one name: which others, and where, is not known."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(found.st_mode) and found.st_nlink > 1


def _by_name(written: str, real: str, cwd: Path) -> bool:
    homes = _home_forms(str(paths.home()))
    folders, files = protected_names()
    if not any(_below(p, h) for p in (written, real) for h in homes):
        folded = (written + "\0" + real).casefold()
        if not any(name in folded for name in folders | files):
            return False  # the common case, without the slower walk below
    for candidate, base in ((written, os.path.normpath(cwd)), (real, os.path.realpath(cwd))):
        parts = _parts(Path(candidate), Path(base), {Path(h) for h in homes})
        if parts is None or _names_one(parts, folders, files):
            return True
    return False


def _names_one(parts: tuple[str, ...], folders: frozenset[str], files: frozenset[str]) -> bool:
    """A protected folder among the components (a name, or two in a row: `.github/hooks`), or
    a protected file at the end (`CLAUDE.md`, `.github/copilot-instructions.md`)."""
    folded = [p.casefold() for p in parts]
    pairs = ["/".join(folded[i:i + 2]) for i in range(len(folded) - 1)]
    return (any(p in folders for p in (*folded, *pairs))
            or bool(folded) and (folded[-1] in files or "/".join(folded[-2:]) in files))


@lru_cache(maxsize=8)
def _home_forms(home: str) -> frozenset[str]:
    """$SWARM_HOME as written and resolved (resolved once per process: it does not move)."""
    return frozenset({os.path.normpath(home), os.path.realpath(home)})


def _below(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _parts(path: Path, cwd: Path, homes: set[Path]) -> tuple[str, ...] | None:
    """The components that decide: below a worktree in $SWARM_HOME, below the cwd, or all of an
    absolute path; None for the rest of $SWARM_HOME (all of it protected)."""
    for home in homes:
        if path.is_relative_to(home):
            rel = path.relative_to(home).parts
            if rel[:1] == ("teams",) and len(rel) >= 4 and rel[2] == "worktrees":
                return rel[4:]
            if rel[:1] == ("kept-worktrees",) and len(rel) >= 2:
                return rel[2:]
            return None
    if path.is_relative_to(cwd):
        return path.relative_to(cwd).parts
    return path.parts


def same_path(a: Path, b: Path) -> bool:
    """The same file, as written (normalised) or resolved."""
    return os.path.normpath(a) == os.path.normpath(b) or os.path.realpath(a) == \
        os.path.realpath(b)


def own_file(path: Path, own: Path) -> bool:
    """Is a write to `path` a write to `own` itself (an agent's memory file), with no link in
    the way: `own` and the folders it sits in (up to `.swarm` or $SWARM_HOME) are no symlinks,
    `own` has one name, and `path` resolves to it? A MEMORY.md a checkout made a link to a git
    hook is not the agent's own file."""
    chain = [own, *own.parents[:3]]
    try:
        if any(p.is_symlink() for p in chain) or hard_linked(own):
            return False
    except OSError:
        return False
    return os.path.realpath(path) == os.path.realpath(own)
