"""Overlapping writes among members sharing a checkout: every Write/Edit records its path per
member in `teams/<team>/writes.json` (under its lock); the first time a path has been written by
two or more members, the lead gets one `file_conflict` {path, members}. Paths are real absolute
paths, so members in separate worktrees never overlap. Shell commands are not traced."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from swarm import settings
from swarm.core.records.base import Record
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import FileConflict
from swarm.core.store import paths
from swarm.core.store.disk import locked, read_model, warn, write_model
from swarm.errors import SwarmError

if TYPE_CHECKING:
    from swarm.core.team.team import Team


class Writes(Record, kw_only=True):
    # Empty defaults are copied per instance by msgspec.
    paths: dict[str, list[str]] = {}  # real path -> members, in order
    reported: list[str] = []  # paths the lead was told about


def read_writes(team: str) -> Writes:
    return read_model(paths.team_writes(team), Writes) or Writes()


def overlapping(team: str) -> dict[str, list[str]]:
    """Every path written by two or more members, with the members."""
    return {path: names for path, names in read_writes(team).paths.items() if len(names) > 1}


def record_write(team: Team, member: str, path: Path) -> list[str] | None:
    """Note that `member` wrote `path`. Returns the members when this write made the path
    overlap for the first time (and the lead was told). Never raises: a write that happened
    must not turn into a failed tool call because its bookkeeping could not be done."""
    key = os.path.realpath(path)
    file = paths.team_writes(team.name)
    if member in read_writes(team.name).paths.get(key, ()):  # the common case: no lock needed
        return None
    try:
        with locked(file, timeout=settings.lock_timeout()):
            writes = read_writes(team.name)
            names = writes.paths.setdefault(key, [])
            if member in names:
                return None
            names.append(member)
            first = len(names) > 1 and key not in writes.reported
            if first:
                # Sent before it is marked: a crash in between repeats the message, never loses it.
                team.send(LEAD_NAME, FileConflict(path=key, members=list(names)), sender=member)
                writes.reported.append(key)
            write_model(file, writes)
    except (SwarmError, OSError) as exc:
        warn(f"could not record that {member} wrote {key}: {exc}")
        return None
    return list(names) if first else None
