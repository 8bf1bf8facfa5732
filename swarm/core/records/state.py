"""Per-agent runtime state (`agents/<name>/state.json`): what `swarm status` reads."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from datetime import datetime
from typing import Literal

from swarm.core.records.base import Record, field
from swarm.core.store.disk import utcnow_iso
from swarm.core.store.liveness import is_alive
from swarm.core.text.terminal import visible_line

AgentStateName = Literal[
    "starting",
    "working",
    "idle",
    "waiting_permission",
    "awaiting_plan",
    "shutting_down",
    "exited",
    "dead",
]
# The states of a turn: only then does SIGINT (`swarm interrupt`) have something to abort.
IN_TURN: tuple[AgentStateName, ...] = ("working", "waiting_permission", "awaiting_plan")


RESTARTED = "restarted"  # how a restart's `detail` begins; the new process tells its model why
MODEL_FAILING = "model API failing"  # its `detail` while a failing model call backs off
LAST_TURN_FAILED = "its last turn failed"  # why it cannot answer with the model


class Usage(Record, kw_only=True):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    # Output tokens spent thinking, apart from output_tokens (where the provider reports them:
    # Anthropic's output_tokens_details, OpenAI's reasoning_tokens); priced as output.
    thinking_tokens: int = 0
    cost_usd: float = 0.0
    # False once a call of a model with no price was counted: its cost is "n/a", not $0.
    cost_known: bool = True

    @property
    def all_input_tokens(self) -> int:
        """What the model read: new input, and input written to or read from its cache."""
        return self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens

    @property
    def total_tokens(self) -> int:
        return self.all_input_tokens + self.output_tokens + self.thinking_tokens

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.thinking_tokens += other.thinking_tokens
        self.cache_creation_input_tokens += other.cache_creation_input_tokens
        self.cache_read_input_tokens += other.cache_read_input_tokens
        self.cost_usd += other.cost_usd
        self.cost_known = self.cost_known and other.cost_known


def cost_text(cost_usd: float, known: bool = True) -> str:
    """A cost as people read it: `$0.0123`; `n/a` when no model used had a price; both when
    some did (`$0.0123+n/a`)."""
    if known:
        return f"${cost_usd:.4f}"
    return f"${cost_usd:.4f}+n/a" if cost_usd else "n/a"


def elapsed_text(seconds: float) -> str:
    """A duration as a clock reads: `12s`, `3m05s`, `1h02m`."""
    whole = max(int(seconds), 0)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def activity_text(state: str, activity: str | None, since: float | None,
                  last_activity: str | None, now: float) -> tuple[str, str]:
    """What a member is doing and for how long: (`thinking`, `12s`), (`Bash "make"`, `1m05s`),
    (`idle`, `3m00s`); ("-", "") when nothing is known. Team data: its controls are escapes."""
    if activity and since is not None:
        return visible_line(activity), elapsed_text(now - since)
    if state == "idle" and last_activity:
        try:
            then = datetime.fromisoformat(last_activity.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return "idle", ""
        return "idle", elapsed_text(now - then)
    return "-", ""


SubagentStatus = Literal["running", "completed", "failed", "stopped"]


class SubagentInfo(Record, kw_only=True):
    """One subagent of this agent, as `swarm status` shows it (the transcript has the rest)."""

    agent_id: str  # <parent>.sub-<n>
    subagent_type: str  # a definition's name, or "fork"
    description: str = ""
    status: SubagentStatus = "running"
    background: bool = False
    tool_uses: int = 0
    tokens: int = 0
    started_at: str = field(default_factory=utcnow_iso)
    ended_at: str | None = None
    worktree: str | None = None  # a kept worktree's path
    depth: int = 0  # its delegation depth from the person: its parent's plus one
    recent: list[str] = field(default_factory=list)  # its last tool calls, one line each
    # In the background: what it is doing, in a few words (runtime.subagents.progress).
    summary: str | None = None


class AgentState(Record, kw_only=True):
    state: AgentStateName = "starting"
    pid: int | None = None
    started_at: float | None = None  # the process start time (psutil), to tell reused pids
    heartbeat: float = field(default_factory=time.time)
    current_task: str | None = None
    turns: int = 0
    usage: Usage = field(default_factory=Usage)
    last_activity: str = field(default_factory=utcnow_iso)
    idle_reason: str | None = None
    detail: str | None = None  # why it is dead/exited/stopped, in words
    terminated_reported: bool = False
    mode: str | None = None  # the permission mode it is in now (plan approval changes it)
    # The newest `mode_change` it obeyed ("<timestamp> <message id>", both signed by the lead):
    # an older one, or that one copied back into its mailbox, changes nothing.
    mode_order: str | None = None
    child_pgid: int | None = None  # the process group of the Bash command it runs, if any
    child_started_at: float | None = None  # that command's start time (pids are reused)
    subagents: list[SubagentInfo] = []  # running, then the latest ended (copied per instance)
    # What it does now: "thinking" (a model call) or a tool call's one line, and since when
    # (time.time()); None between them. Kept in memory at each start, written by the heartbeat.
    activity: str | None = None
    activity_since: float | None = None
    # A teammate that is another agent CLI: that CLI's session id, resumed by a restart.
    cli_session: str | None = None
    # The model it runs as it reports it (an agent CLI's own report; status prefers it to the
    # member entry's, which may be empty or an alias).
    model: str | None = None


def without_model(state: AgentState | None) -> str | None:
    """Why this member cannot make a model call now (idle after a failed turn, or a failing
    call backing off), or None: such a member approves a shutdown request without its model,
    and whoever asks waits for it only a short grace (ops.member.shutdown)."""
    if state is None:
        return None
    if state.state == "idle" and state.idle_reason == "failed":
        return f"{LAST_TURN_FAILED}: {state.detail}" if state.detail else LAST_TURN_FAILED
    if state.state not in ("exited", "dead") and (state.detail or "").startswith(MODEL_FAILING):
        return state.detail
    return None


def end_child_command(state: AgentState | None) -> None:
    """A dead agent's Bash command runs in its own process group and would outlive it: end
    it, if that group is still the one the agent started (pid plus start time)."""
    if state is None or not state.child_pgid:
        return
    if is_alive(state.child_pgid, state.child_started_at):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(state.child_pgid, signal.SIGKILL)
