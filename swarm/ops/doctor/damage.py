"""What `swarm doctor` finds damaged under $SWARM_HOME, and the repairs `--fix` may make.

Each finding names a kind, a path and what is wrong; `fix` says what `--fix` does about it (None:
nothing is safe to do automatically, the detail says what a person can do). Repairs are the safe
ones only: record a dead member as dead (tasks released, the lead told once), prune a stale git
worktree entry, remove an empty leftover, tighten a mode to 0700/0600, stop the agents of a team
whose team file is gone (found from their state records; nothing of the team is removed). Quarantined
`.corrupt-*` files are never removed: they hold data for a person to recover.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from swarm.core.records.names import LEAD_NAME
from swarm.core.records.team_config import TeamConfig
from swarm.core.store import paths
from swarm.core.store.disk import DIR_MODE, FILE_MODE
from swarm.core.store.liveness import is_alive
from swarm.core.team.gone import gone_teams, running
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.core.team.worktrees import git
from swarm.errors import SwarmError
from swarm.ops.member.control import stop_member
from swarm.ops.member.health import death_reason, record_death

LOW_SPACE_BYTES = 64 * 1024 * 1024  # below this free on SWARM_HOME's disk, writes will fail soon
STALE_TEMP_SECONDS = 60.0  # an atomic write renames its temp file within milliseconds


@dataclass
class Finding:
    # corrupt|leftover|insecure|foreign|disk_full|read_only|dead_member|lead_gone|worktree|
    # team_gone
    kind: str
    path: str
    detail: str
    fix: str | None = None  # what --fix does; None: left to a person
    fixed: bool = False
    team: str | None = None
    member: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def free_bytes(path: Path) -> tuple[int, bool]:
    """Bytes free to this user on `path`'s filesystem, and whether it is mounted read-only."""
    info = os.statvfs(path)
    return info.f_bavail * info.f_frsize, bool(info.f_flag & os.ST_RDONLY)


def _disk(home: Path) -> list[Finding]:
    try:
        free, read_only = free_bytes(home)
    except OSError:
        return []  # SWARM_HOME missing: the writability check reports it
    out = []
    if read_only:
        out.append(Finding("read_only", str(home), "the filesystem is mounted read-only: no "
                           "message, task or state can be written"))
    elif free < LOW_SPACE_BYTES:
        out.append(Finding("disk_full", str(home), f"only {free // 1024} KiB free: sends and "
                           "state writes will fail (free some space)"))
    return out


def _is_leftover(path: Path) -> bool:
    # The old mailbox layout (`<name>.json` arrays and their `.pending` queues: this version
    # reads neither); temp files of an atomic write that never renamed (`.<file>.<random>.tmp`).
    name = path.name
    old_mailbox = path.parent.name == "inboxes" and name.endswith((".json", ".json.pending"))
    temp = name.startswith(".") and name.endswith(".tmp")
    return old_mailbox or temp or name.endswith(".pending")


def _walk(home: Path) -> list[tuple[Path, os.stat_result]]:
    """Every directory and file swarm manages under `home`: not inside git worktrees (checkouts
    with their own modes, a team's or the kept ones of deleted teams), not the user's agent
    definitions."""
    out: list[tuple[Path, os.stat_result]] = []
    skip = {paths.user_agents_dir()}
    kept = paths.kept_worktrees_dir()  # the directory is swarm's, what is inside the user's
    for root, dirs, files in os.walk(home):
        here = Path(root)
        if here == kept:
            dirs.clear()
            continue
        if here.parent == paths.teams_dir() and "worktrees" in dirs:
            dirs.remove("worktrees")
        dirs[:] = [d for d in dirs if here / d not in skip]
        for name in [*dirs, *files]:
            path = here / name
            try:
                out.append((path, path.lstat()))
            except FileNotFoundError:
                continue
    return out


def _files(home: Path) -> list[Finding]:
    out: list[Finding] = []
    me = os.geteuid()
    try:
        entries = [(home, home.lstat()), *_walk(home)]
    except OSError:  # missing or not a directory: the writability check reports it
        return out
    for path, info in entries:
        if stat.S_ISLNK(info.st_mode):
            continue
        is_dir = stat.S_ISDIR(info.st_mode)
        mode = stat.S_IMODE(info.st_mode)
        if ".corrupt-" in path.name:
            out.append(Finding("corrupt", str(path), "moved aside because it did not parse; "
                               "recover what you need from it, then delete it"))
        elif not is_dir and _is_leftover(path):
            age = time.time() - info.st_mtime
            empty = info.st_size == 0
            safe = empty or (path.name.endswith(".tmp") and age > STALE_TEMP_SECONDS)
            out.append(Finding("leftover", str(path), f"left by a crashed or older swarm "
                               f"({info.st_size} bytes)", "remove it" if safe else None))
        if info.st_uid != me:
            out.append(Finding("foreign", str(path), f"owned by uid {info.st_uid}, not by you "
                               f"(uid {me}): another user could read or change team files"))
        elif is_dir and mode & 0o002:
            out.append(Finding("insecure", str(path), f"world-writable directory "
                               f"({mode:04o}): anyone on this machine can plant files",
                               f"chmod {DIR_MODE:04o}"))
        elif mode & 0o077:
            want = DIR_MODE if is_dir else FILE_MODE
            out.append(Finding("insecure", str(path), f"mode {mode:04o}, should be {want:04o}",
                               f"chmod {want:04o}"))
    return out


def _members(team: Team, config: TeamConfig) -> list[Finding]:
    out = []
    for member in config.members:
        if member.name == LEAD_NAME:
            continue
        state = read_state(team.name, member.name)
        if state is None or state.state in ("exited", "dead"):
            continue
        reason = death_reason(member, state)
        if reason is not None:
            out.append(Finding("dead_member", str(paths.agent_state(team.name, member.name)),
                               f"{member.agent_id}: state says {state.state} but {reason}",
                               "record it dead (tasks released, the lead told)",
                               team=team.name, member=member.name))
    if config.lead_pid and not is_alive(config.lead_pid, config.lead_started_at):
        out.append(Finding("lead_gone", team.document(),
                           f"the lead's process {config.lead_pid} is gone; start the lead again "
                           f"or `swarm team delete {team.name}`", team=team.name,
                           member=LEAD_NAME))
    return out


def _prunable(repo: str) -> dict[str, str]:
    """Worktree path -> git's reason, for every entry `git worktree list` calls prunable."""
    try:
        proc = git("worktree", "list", "--porcelain", cwd=Path(repo), check=False)
    except SwarmError:  # git not installed
        return {}
    out, current = {}, None
    for line in proc.stdout.splitlines():
        if line.startswith("worktree "):
            current = os.path.realpath(line[len("worktree "):])
        elif line.startswith("prunable") and current is not None:
            out[current] = line.partition(" ")[2] or "prunable"
    return out


def _worktrees(team: Team, config: TeamConfig) -> list[Finding]:
    out = []
    for member in config.members:
        if not member.worktree_path or Path(member.worktree_path).is_dir():
            continue
        if not member.worktree_repo:
            out.append(Finding("worktree", member.worktree_path, f"{member.agent_id}: the "
                               "worktree directory is gone; run `git worktree prune` in the "
                               "repository it came from", team=team.name, member=member.name))
            continue
        reason = _prunable(member.worktree_repo).get(os.path.realpath(member.worktree_path))
        if reason is not None:
            out.append(Finding("worktree", member.worktree_path, f"{member.agent_id}: stale "
                               f"git worktree entry in {member.worktree_repo} ({reason})",
                               f"git -C {member.worktree_repo} worktree remove --force",
                               team=team.name, member=member.name))
    return out


def _gone_teams() -> list[Finding]:
    """Teams whose document is gone while their agents may run: stopped by --fix when they run
    here (pid and start time); one on another host leaves by itself (SWARM_TEAM_GONE_GRACE)."""
    out = []
    for name in gone_teams():
        team = Team.salvage(name)
        here = [m.name for m in team.live_members()]
        elsewhere = [n for n in running(name) if n not in here]
        what = [f"{', '.join(here)} still run{'s' if len(here) == 1 else ''} here"] if here else []
        if elsewhere:
            what.append(f"{', '.join(elsewhere)} (a fresh heartbeat, not a process here) "
                        f"{'leaves' if len(elsewhere) == 1 else 'leave'} on its own after "
                        "SWARM_TEAM_GONE_GRACE")
        out.append(Finding("team_gone", team.document(), f"the team file of {name!r} is "
                           f"gone; {'; '.join(what) or 'no agent of it runs'}; then `swarm team "
                           f"delete --force {name}` removes what is left",
                           "stop its agents here" if here else None, team=name))
    return out


def find(home: Path) -> list[Finding]:
    found = [*_disk(home), *_files(home), *_gone_teams()]
    for team in Team.list():
        try:
            config = team.config()
        except Exception:  # reported by doctor's team summary; one broken team hides nothing
            continue
        found += _members(team, config) + _worktrees(team, config)
    return found


def repair(finding: Finding) -> None:
    """Make the fix `finding.fix` names; sets `fixed`. A failure leaves it reported, unfixed."""
    if finding.fix is None:
        return
    try:
        if finding.kind == "dead_member" and finding.team and finding.member:
            record_death(Team.open(finding.team), finding.member, finding.detail)
            state = read_state(finding.team, finding.member)
            finding.fixed = state is not None and state.state == "dead"
        elif finding.kind == "worktree" and finding.team and finding.member:
            repo = Team.open(finding.team).member(finding.member).worktree_repo
            proc = git("worktree", "remove", "--force", finding.path, cwd=Path(str(repo)),
                       check=False)
            finding.fixed = proc.returncode == 0
            if not finding.fixed:
                finding.detail += f" (git: {proc.stderr.strip()})"
        elif finding.kind == "team_gone" and finding.team:
            team = Team.salvage(finding.team)
            for member in team.live_members():
                stop_member(team, member, "stopped: its team file is gone", worktree=False)
            finding.fixed = not team.live_members()
        elif finding.kind == "leftover":
            os.unlink(finding.path)
            finding.fixed = True
        elif finding.kind == "insecure":
            path = Path(finding.path)
            os.chmod(path, DIR_MODE if path.is_dir() else FILE_MODE)
            finding.fixed = True
    except (OSError, SwarmError) as exc:
        finding.detail += f" (fix failed: {exc})"
