"""An agent's system prompt, in four parts, the most stable first so the cached prefix holds:

1. the definition body, then the skills it preloads (core.agents.skills) and its own memory
   (core.agents.memory; both read at start: fixed for the agent's life);
2. project memory: `SWARM.md`, `AGENTS.md`, `CLAUDE.md` from the repository root down to the cwd,
   after `$SWARM_HOME/SWARM.md` (read once at start; left out with `omit_project_memory`);
3. the team addendum: who it is, its lead, its current teammates, how to talk (rebuilt when the
   team file or the mode changes);
4. the environment: cwd, platform, today's date, git branch and a short status (a snapshot taken
   at start, taken again only when the date changes: a status that followed every edit would
   miss the cache on every request; none with `omit_git_status`, explore's and plan's).

Each part is a function of plain data, so the lead and subagents can build theirs from the same
pieces. `TeammatePrompt` keeps a teammate's whole prompt current (the rebuilds above).
"""

from __future__ import annotations

import os
import platform
import stat
import subprocess
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path

from msgspec import Struct

from swarm.core import kinds
from swarm.core.agents.agent_definition import AgentDefinition
from swarm.core.agents.memory import memory_part
from swarm.core.agents.skills import skills_part
from swarm.core.records.names import LEAD_NAME
from swarm.core.shell.git_state import SAFE_GIT_ENV
from swarm.core.store import paths
from swarm.core.store.filecache import ChangeCache
from swarm.core.team.team import Team
from swarm.core.trust.workspace import ProjectConfig

DEFAULT_BODY = "You are a capable software engineer working as a member of a team."
# In each directory, in this order: swarm's own loop's instructions (core.kinds).
MEMORY_NAMES = tuple(p.path for p in kinds.of_member(None).project_config if not p.runs_code)
MEMORY_FILE_CAP = 20_000  # characters of one memory file in the prompt
MEMORY_TOTAL_CAP = 60_000  # characters of all of them; the files nearest the cwd come first
GIT_STATUS_LINES = 20
GIT_TIMEOUT = 5.0


# -- project memory ------------------------------------------------------------------------------
def repository_root(cwd: Path) -> Path | None:
    """The nearest directory from cwd upward holding `.git` (a directory, or a worktree's file)."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return None


def memory_files(cwd: Path) -> list[Path]:
    """The memory files that exist, most general first: the user's, then root -> cwd. A file
    reached twice (a symlink, `CLAUDE.md -> AGENTS.md`) counts once."""
    start = cwd.resolve()
    root = repository_root(start)
    chain = [start] if root is None else [start, *start.parents]
    if root is not None:
        chain = chain[: chain.index(root) + 1]
    candidates = [paths.user_memory(), *(d / n for d in reversed(chain) for n in MEMORY_NAMES)]
    found: list[Path] = []
    seen: set[Path] = set()
    for path in candidates:
        try:
            real = path.resolve()
            if not stat.S_ISREG(real.stat().st_mode):  # never open a FIFO or a device
                continue
        except OSError:
            continue
        if real not in seen:
            seen.add(real)
            found.append(path)
    return found


def _read_capped(path: Path, budget: int) -> tuple[str, int, bool] | None:
    """(at most `budget` characters of the file, its size in bytes, whether it was cut); None
    when unreadable or blank."""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            text = f.read(budget + 1)
            size = os.fstat(f.fileno()).st_size
    except OSError:
        return None
    if not text.strip():
        return None
    if len(text) <= budget:
        return text, size, False
    return text[:budget].rstrip(), size, True


def project_memory(cwd: Path) -> str:
    """The "Project memory" part ('' when there is none)."""
    files = memory_files(cwd)
    budget = MEMORY_TOTAL_CAP
    shown: dict[Path, str] = {}
    for path in reversed(files):  # the files nearest the cwd get the budget first
        cap = min(MEMORY_FILE_CAP, budget)
        read = _read_capped(path, cap)
        if read is None:
            continue
        text, size, cut = read
        budget -= len(text)
        if not text:
            text = f"[not included: the other memory files fill the budget; Read {path}]"
        elif cut:
            text += (f"\n[truncated: this file has {size:,} bytes; only the first {len(text):,}"
                     f" characters are shown. Read {path} for the rest]")
        shown[path] = text
    if not shown:
        return ""
    parts = ["# Project memory",
             "Instructions from the project's memory files, each under its path. Follow them; a"
             " file nearer your working directory wins over one further up."]
    parts += [f"## {path}\n{shown[path]}" for path in files if path in shown]
    return "\n\n".join(parts)


# -- team addendum -------------------------------------------------------------------------------
class Peer(Struct, frozen=True):
    name: str
    agent_type: str


def team_addendum(name: str, team: str, lead_id: str, peers: list[Peer], mode: str) -> str:
    others = "".join(f"\n- `{p.name}` ({p.agent_type})" for p in peers) or " (none yet)"
    lines = [
        "# Your team",
        f"You are `{name}` (agent id `{name}@{team}`), a teammate in team `{team}`.",
        f"Your lead is `{LEAD_NAME}` ({lead_id}). Your teammates:{others}",
        "",
        "Messages from your lead and teammates arrive as"
        ' <teammate-message from="..." summary="...">...</teammate-message>.',
        "Plain text you write is not seen by anyone: to talk, use the SendMessage tool"
        f" (to a teammate's name, `{LEAD_NAME}`, or `*` for everyone) with a short summary.",
        "The team shares a task list (TaskList, TaskGet, TaskCreate, TaskUpdate). When you are"
        " handed a task, do it, mark it completed with TaskUpdate (with a short result), and"
        f" report to `{LEAD_NAME}`.",
        "A shutdown_request asks you to stop: answer with SendMessage to team-lead, message"
        ' {"type": "shutdown_response", "request_id": "<its id>", "approve": true} (or approve'
        ' false with a "reason" if you must finish something first).',
        "When you end your turn, your lead is told you are idle, with the last thing you wrote;"
        " you wake on the next message or task.",
    ]
    if mode == "plan":
        lines += ["", "You are in plan mode: explore read-only, then submit a plan with"
                  " ExitPlanMode and wait for approval before changing anything."]
    return "\n".join(lines)


# -- environment ---------------------------------------------------------------------------------
def git_status(cwd: Path) -> tuple[str, list[str]] | None:
    """(branch, short status lines) when cwd is in a git repository, else None. One `git`
    call; GIT_OPTIONAL_LOCKS=0 so it never takes the index lock from the user's own git, and
    git's code-running settings off (SAFE_GIT_ENV: no fsmonitor or hook a checkout set runs)."""
    try:
        proc = subprocess.run(["git", "status", "--short", "--branch"], cwd=cwd,
                              capture_output=True, text=True, timeout=GIT_TIMEOUT,
                              env={**os.environ, **SAFE_GIT_ENV})
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode != 0 or not proc.stdout.startswith("## "):
        return None
    head, *lines = proc.stdout.splitlines()
    branch = head[3:].removeprefix("No commits yet on ").removeprefix("Initial commit on ")
    branch = branch.split("...")[0].split(" [")[0].strip()
    if branch.startswith("HEAD (no branch)"):
        branch = "(detached HEAD)"
    return branch, lines


def environment(cwd: Path, today: date | None = None, git: bool = True) -> str:
    """`git=False` (a definition's `omit_git_status`: explore, plan): no git lines, and no
    `git status` run."""
    lines = ["# Environment",
             f"Working directory: {cwd}",
             f"Platform: {sys.platform}",
             f"OS version: {platform.system()} {platform.release()}".rstrip(),
             f"Today's date: {(today or date.today()).isoformat()}"]
    if not git:
        return "\n".join(lines)
    return "\n".join([*lines, *_git_lines(cwd)])


def _git_lines(cwd: Path) -> list[str]:
    lines: list[str] = []
    git = git_status(cwd)
    if git is None:
        lines.append("Git repository: no")
    else:
        branch, status = git
        lines.append(f"Git repository: yes, on branch {branch}")
        shown = status[:GIT_STATUS_LINES]
        if len(status) > len(shown):
            shown.append(f"... and {len(status) - len(shown)} more")
        lines.append("Git status when you started: clean" if not status else
                     "Git status when you started (a snapshot; it does not update):\n"
                     + "\n".join(shown))
    return lines


# -- the whole -----------------------------------------------------------------------------------
def system_prompt(body: str | None, memory: str, team: str, env: str) -> str:
    """The parts in cache order: the body, project memory, the team, the environment."""
    parts = [(body or DEFAULT_BODY).strip(), memory, team, env]
    return "\n\n".join(p for p in parts if p)


class TeammatePrompt:
    """A teammate's system prompt: the team part rebuilt when the team file or the mode changes,
    the environment taken again when the day does."""

    def __init__(self, team: Team, name: str, definition: AgentDefinition, cwd: Path,
                 project: ProjectConfig | None = None, memory_only: Sequence[str] = ()) -> None:
        self.team, self.name, self.body, self.cwd = team, name, definition.prompt, cwd
        # Preloaded skills: project ones only when `project` (trusted) holds them.
        skills, self.warnings = skills_part(definition.skills, project or ProjectConfig(None))
        # Its own memory (`memory:` scope), read once now: what it writes shows in its next run.
        own = memory_part(definition, cwd, memory_only)
        extra = "\n\n".join(p for p in (skills, own) if p)
        if extra:
            self.body = f"{(self.body or DEFAULT_BODY).strip()}\n\n{extra}"
        self.memory = "" if definition.omit_project_memory else project_memory(cwd)
        self.git = not definition.omit_git_status
        self.day = date.today()
        self.environment = environment(cwd, self.day, self.git)
        self._team = ChangeCache(team.config_key, team.config)

    def build(self, mode: str) -> str:
        config = self._team.get()
        peers = [Peer(m.name, m.agent_type) for m in config.members
                 if m.name not in (self.name, LEAD_NAME)]
        team = team_addendum(self.name, config.name, config.lead_agent_id, peers, mode)
        return system_prompt(self.body, self.memory, team, self.environment)

    def stale(self) -> bool:
        """Before a model call: has the team changed (a teammate joined or left), or the day
        (the date and git status are a snapshot: taken again now)?"""
        if date.today() != self.day:
            self.day = date.today()
            self.environment = environment(self.cwd, self.day, self.git)
            return True
        return self._team.changed()


def subagent_part(agent_id: str, parent: str, team: str, description: str, can_message: bool,
                  mode: str, withheld: list[str]) -> str:
    """What a typed subagent has instead of the team part: who it works for and how its work
    gets back (its final reply; not SendMessage, which the definition may mention)."""
    lines = [
        "# You are a subagent",
        f"You are `{agent_id}`, a subagent that `{parent}` ({parent}@{team}) started for one"
        f" job: {description}. You work alone: nobody answers questions while you work.",
        f"When the job is done, end your turn with your report: your final reply is handed to"
        f" `{parent}` as the result (do not send it with SendMessage). Make it complete but"
        " focused: the answer first, then the evidence (file paths, line numbers, commands run).",
    ]
    if can_message:
        lines.append(f"SendMessage reaches only `{parent}`: use it for progress on a long job.")
    if withheld:  # the type's definition may name them
        lines.append(f"Not yours, as `{parent}` does not have them (a subagent has only tools its"
                     f" parent has): {', '.join(withheld)}.")
    if mode == "plan":
        lines.append("You are in plan mode: you may only read and explore, not change anything.")
    return "\n".join(lines)
