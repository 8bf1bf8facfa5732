"""File scopes on tasks (`tasks add --files GLOB`): where a member may write, decided before every
Write/Edit in every permission mode (bypassPermissions too).

While a member owns in-progress tasks with scopes, its writes must fall inside the union of their
globs; and nobody writes into a path inside another live member's in-progress scope. A glob is
an fnmatch pattern (`*` crosses `/`, as in permission rules), relative to the owning member's
working directory or absolute; a glob that names a directory covers everything under it.
Shell commands are not traced: a Bash command can still write anywhere its mode allows.
"""

from __future__ import annotations

import os
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state

if TYPE_CHECKING:
    from swarm.core.team.team import Team

WALK_LIMIT = 200_000  # entries `unmatched` looks at before it stops (and warns about nothing)


def _candidates(path: Path, root: Path) -> list[str]:
    real = Path(os.path.realpath(path))
    found = [str(real)]
    base = Path(os.path.realpath(root))
    if real.is_relative_to(base):
        found.append(str(real.relative_to(base)))
    return found


def _hit(glob: str, candidates: list[str]) -> bool:
    return any(fnmatchcase(c, glob) or fnmatchcase(c, glob.rstrip("/") + "/*")
               for c in candidates)


def matches(glob: str, path: Path, root: Path) -> bool:
    """Is `path` inside the scope `glob` (relative to `root`, or absolute)?"""
    return _hit(glob, _candidates(path, root))


def _is_live(team: Team, name: str) -> bool:
    state = read_state(team.name, name)
    if state is not None and state.state in ("exited", "dead"):
        return False
    pid = state.pid if state and state.pid else None
    if pid is None:
        member = team.config().member(name)
        pid = member.pid if member else None
    return is_alive(pid, state.started_at if state and state.pid else None)


def scope_denial(team: Team, member: str, path: Path | None) -> str | None:
    """Why `member` may not write `path` (naming the scope and its owner), or None."""
    if path is None:
        return None
    scoped = [t for t in team.tasks.list() if t.status == "in_progress" and t.owner and t.files]
    if not scoped:
        return None
    config = team.config()

    def root(name: str) -> Path:
        owner = config.member(name)
        return Path(owner.cwd) if owner is not None and owner.cwd else Path.cwd()

    mine = [t for t in scoped if t.owner == member]
    if mine and not any(matches(g, path, root(member)) for t in mine for g in t.files):
        ids = ", ".join(f"#{t.id}" for t in mine)
        globs = ", ".join(dict.fromkeys(g for t in mine for g in t.files))
        return (f"{path} is outside the file scope of task(s) {ids} owned by {member} "
                f"({globs}): write inside it, or finish the task first")
    for task in scoped:
        if task.owner == member or task.owner is None:
            continue
        hit = next((g for g in task.files if matches(g, path, root(task.owner))), None)
        if hit is not None and _is_live(team, task.owner):
            return (f"{path} is inside the file scope {hit!r} of task #{task.id}, owned by "
                    f"{task.owner} (in progress): ask {task.owner} or the lead to change it")
    return None


def unmatched(globs: list[str], root: Path) -> list[str]:
    """The globs that match no file or directory under `root` yet (for a warning: a new file
    is a fine scope). Gives up quietly (returns []) past WALK_LIMIT entries."""
    waiting = list(globs)
    seen = 0
    base = os.path.realpath(root)
    for directory, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in (*dirs, *files):
            seen += 1
            full = os.path.join(directory, name)
            candidates = [full, os.path.relpath(full, base)]
            if name in dirs:  # `src/api/**` names an existing (maybe empty) directory
                candidates += [c + "/" for c in candidates]
            waiting = [g for g in waiting if not _hit(g, candidates)]
            if not waiting:
                return []
        if seen > WALK_LIMIT:
            return []
    return waiting
