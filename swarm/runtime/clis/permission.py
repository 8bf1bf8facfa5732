"""What an agent CLI teammate would ask a person (Claude Code's permission prompt, Codex's
approval request for a command or a patch, Gemini CLI's ACP permission request), decided as any
teammate's tool call: its mode (as its state says now), the rules, file scopes and hooks; where
they say ask, the lead gets a `permission_request` with the real input, through the same Asker.
Its transcript records what the CLI asked and what swarm answered (`swarm report`).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shlex
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from swarm.core.records.permissions import Decision
from swarm.core.records.state import Usage
from swarm.core.store import paths
from swarm.core.store.disk import write_bytes_atomic
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.core.team.transcript import Transcript
from swarm.errors import OperationFailedError, TurnInterrupted
from swarm.runtime.permissions.asking import Asker, Waiter
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.tools.base import Tool
from swarm.runtime.tools.registry import all_tools

log = logging.getLogger(__name__)
T = TypeVar("T")
SERVED_PREFIX = "mcp__swarm__"  # how Claude Code names swarm's own (MCP) tools
UNKNOWN_DIRECTORY = "where it runs is not known"  # a command's: the lead is asked


class Cancelled(Exception):
    """The turn that asked has ended: nobody waits for the answer any more."""


class NamedTool(Tool):
    """A CLI tool swarm has no twin of (WebFetch, NotebookEdit, ...): checked by its name."""

    input_ref = None

    def __init__(self, name: str) -> None:
        self.name = name


class _Waiter:
    """The asker's waiter here. A wait ends when the turn that asked is cancelled, or
    (`present`, the MCP server's case) when the CLI that asked is no longer there: killed, it
    never closes the server's calls (a plan's wait has no timeout), and the request is
    withdrawn from the lead's list. `shown`: where the wait is told (the MCP server tells the member's
    own process, which alone writes its state: `tell_asking`)."""

    def __init__(self, cancelled: threading.Event | None, present: Callable[[], bool] | None,
                 shown: Callable[..., None] | None = None) -> None:
        self.cancelled = cancelled
        self.present = present
        self.shown = shown

    def set_state(self, **fields: Any) -> None:
        if self.shown is not None:
            self.shown(**fields)

    def interruptible(self, call: Callable[[], T]) -> T:
        if self.cancelled is not None and self.cancelled.is_set():
            raise Cancelled  # the asker withdraws the request from the lead's list
        result = call()
        if self.present is not None and not self.present():
            raise OperationFailedError("the agent CLI that asked has exited")
        return result

    def show(self, *lines: str) -> None:
        for line in lines:
            log.info("%s", line)


def tell_asking(team: str, name: str, **fields: Any) -> None:
    """What this process (an agent CLI's MCP server) asks the lead now, told to the member's
    own `swarm agent`, which shows it in its state (`asked`); `working`: answered."""
    path = paths.agent_asking(team, name)
    if fields.get("state") in (None, "working"):
        path.unlink(missing_ok=True)
        return
    write_bytes_atomic(path, json.dumps({"state": fields["state"], "pid": os.getpid(),
                                         "detail": fields.get("detail")}).encode())


def asked(team: str, name: str) -> dict[str, Any] | None:
    """What the member's MCP server asks the lead now ({state, detail}), None when nothing (or
    the server that asked is gone)."""
    try:
        told = json.loads(paths.agent_asking(team, name).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(told, dict) or not is_alive(int(told.get("pid") or 0)):
        return None
    return told


def forget_asking(team: str, name: str) -> None:
    paths.agent_asking(team, name).unlink(missing_ok=True)


def current_mode(team: Team, name: str) -> str:
    """The member's mode as its state says now (plan if it must plan first)."""
    member = team.member(name)
    state = read_state(team.name, member.name)
    if state is not None and state.mode:
        return state.mode
    return "plan" if member.plan_mode_required else member.permission_mode


def member_policy(team: Team, name: str, cwd: Path, mode: str,
                  cancelled: threading.Event | None = None,
                  present: Callable[[], bool] | None = None,
                  waiter: Waiter | None = None,
                  on_spend: Callable[[Usage], None] | None = None) -> PermissionPolicy:
    """The member's permission policy in `mode`, asking the lead through its own mailbox;
    `waiter`: the teammate process's own (its state shows the wait, an interrupt ends it);
    `on_spend`: where its reviewer's spend is counted (the teammate process's usage)."""
    member = team.member(name)
    shown = functools.partial(tell_asking, team.name, member.name) if present else None
    asker = Asker(team, member.name, team.inbox(member.name, checked=False),
                  waiter or _Waiter(cancelled, present, shown))
    policy = PermissionPolicy.for_member(team, member, cwd, asker, mode=mode)
    policy.on_spend = on_spend
    return policy


def run_in(command: str, directory: str | None, cwd: Path) -> str:
    """A command as swarm checks it: where it runs. `directory` (absolute, or relative to `cwd`,
    as the CLI's request gives it) other than `cwd` makes it `cd DIR && command`, so the rules
    see its relative writes land there (protected paths, writes outside the working directory)
    and the lead reads where it runs."""
    if directory is None or not directory.strip():
        return command
    where = cwd / directory  # an absolute `directory` stays itself
    if os.path.realpath(where) == os.path.realpath(cwd):
        return command
    return f"cd {shlex.quote(str(where))} && {command}"


def decide(team_name: str, name: str, cwd: Path, tool_name: str, args: dict[str, Any],
           use_id: str, cancelled: threading.Event | None = None, *, mode: str | None = None,
           present: Callable[[], bool] | None = None, waiter: Waiter | None = None,
           must_ask: str | None = None,
           on_spend: Callable[[Usage], None] | None = None) -> Decision:
    """Swarm's answer to the CLI's question about `tool_name(args)` (swarm's tool names:
    Bash, Write, Edit, ...); `cancelled` set while the lead is asked abandons the wait; `mode`
    overrides the recorded one (a plan approved a moment ago); `must_ask`: why the lead is asked
    even where the rules would allow (PermissionPolicy.check)."""
    team = Team.open(team_name)
    policy = member_policy(team, name, cwd, mode or current_mode(team, name), cancelled, present,
                           waiter, on_spend)
    tool = all_tools().get(tool_name.removeprefix(SERVED_PREFIX)) or NamedTool(tool_name)
    try:
        decision = policy.check(tool, args, use_id, must_ask)
    except Cancelled:
        decision = Decision("deny", "the turn ended before the lead answered")
    except TurnInterrupted:  # the teammate's own wait for the lead, ended by `swarm interrupt`
        decision = Decision("deny", "interrupted while waiting for the lead")
    Transcript(paths.agent_transcript(team.name, name)).event(
        "permission_prompt", tool=tool_name, decision=decision.behavior, reason=decision.reason)
    return decision
