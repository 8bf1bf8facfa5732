"""A tool call an agent CLI teammate asks about, decided as any teammate's: its mode (from its
state, so `swarm mode` holds), the rules, file scopes, hooks, and where that says ask, the lead
(a `permission_request` with the real input, through the Asker). One home for Claude Code's
permission-prompt tool (lead.cli_permission) and Gemini CLI's ACP permission requests
(runtime.clis.gemini); each CLI words the answer its own way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from swarm.core import paths
from swarm.core.mailbox import Mailbox
from swarm.core.rules import Decision
from swarm.core.state import read_state
from swarm.core.team import Team
from swarm.core.transcript import Transcript
from swarm.errors import TurnInterrupted
from swarm.runtime.permissions.asking import Asker, Waiter
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.tools.builtin import Tool
from swarm.runtime.tools.registry import all_tools

log = logging.getLogger(__name__)
T = TypeVar("T")


class OtherTool(Tool):
    """A CLI tool swarm has no twin of (WebFetch, NotebookEdit, ...): checked by its name."""

    input_ref = None

    def __init__(self, name: str) -> None:
        self.name = name


class _Waiter:
    """The asker's waiter: the member's state.json is its `swarm agent` process's to write."""

    def set_state(self, **fields: Any) -> None:
        pass

    def interruptible(self, call: Callable[[], T]) -> T:
        return call()

    def show(self, *lines: str) -> None:
        for line in lines:
            log.info("%s", line)


def check_cli_call(team_name: str, name: str, cwd: Path, tool_name: str, args: dict[str, Any],
                   use_id: str = "", waiter: Waiter | None = None) -> Decision:
    """swarm's decision on one call the CLI `name` would make; recorded in its transcript
    (`permission_prompt`: the tool and the answer). `waiter`: the teammate process's own, when
    it asks (its state shows the wait, an interrupt ends it); else nobody's."""
    team = Team.open(team_name)
    member = team.member(name)
    state = read_state(team.name, member.name)
    mode = state.mode if state is not None and state.mode else member.permission_mode
    served = tool_name.removeprefix("mcp__swarm__")  # its own team tools: swarm's
    tool = all_tools().get(served) or OtherTool(tool_name)
    asker = Asker(team, member.name, Mailbox(team.name, member.name),
                  waiter or _Waiter())
    policy = PermissionPolicy.for_member(team, member, cwd, asker, mode=mode)
    try:
        decision = policy.check(tool, args, use_id)
    except TurnInterrupted:  # the teammate's own wait for the lead, ended by `swarm interrupt`
        decision = Decision("deny", "interrupted while waiting for the lead")
    Transcript(paths.agent_transcript(team.name, member.name)).event(
        "permission_prompt", tool=tool_name, decision=decision.behavior,
        reason=decision.reason)
    return decision
