"""What a teammate's loop and tools ask of it, each answered by the small object that owns the
answer: `TeammateControl` (the turn's decisions: interrupts from its signals, its limits, its
prompt and compaction before a call, the lead's orders before a tool call, what arrived during
the turn), `Limits` (why it may not go on) and `TeammateToolHost` (its tools' host: the command
it runs now, its shutdown answer, its plan)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from swarm.core.records.protocol import ShutdownRequest
from swarm.core.records.state import MODEL_FAILING, Usage
from swarm.core.team.team import Team
from swarm.errors import ModelAPIError
from swarm.runtime.process.kill import CurrentCommand, kill_tree
from swarm.runtime.process.signals import Signals
from swarm.runtime.teammate.base import StateKeeper
from swarm.runtime.teammate.inputs import Inputs
from swarm.runtime.teammate.modes import Modes
from swarm.runtime.teammate.shutdown import Shutdown
from swarm.runtime.tools.base import NoHost, Tool
from swarm.runtime.turn.budget import Budget
from swarm.runtime.turn.compaction import Compactor
from swarm.runtime.turn.hooks import Block, Conversation, TurnControl

T = TypeVar("T")


class Limits:
    """Why a teammate may not go on: an approved shutdown, its turns, its budget (the team's
    spend read again before each check)."""

    def __init__(self, team: Team, name: str, keeper: StateKeeper, budget: Budget,
                 max_turns: int | None, shutdown: Shutdown) -> None:
        self.team, self.name, self.keeper, self.budget = team, name, keeper, budget
        self.max_turns, self.shutdown = max_turns, shutdown

    def reason(self) -> str | None:
        if self.shutdown.approved:
            return "available"
        if self.max_turns is not None and self.keeper.state.turns >= self.max_turns:
            return "max_turns"
        self.budget.read_team(self.team, self.name)  # the loop asks this before each call
        if self.budget.check():
            return "budget_exhausted"
        return None


class TeammateControl(TurnControl):
    def __init__(self, signals: Signals, limits: Limits, inputs: Inputs, modes: Modes,
                 compactor: Compactor, keeper: StateKeeper, shutdown: Shutdown) -> None:
        self.signals, self.limits, self.inputs, self.modes = signals, limits, inputs, modes
        self.compactor, self.keeper, self.shutdown = compactor, keeper, shutdown

    def guard(self, call: Callable[[], T]) -> T:
        return self.signals.interruptible(call)

    def before_call(self, conversation: Conversation) -> None:
        self.modes.apply(conversation)
        self.compactor(conversation)

    def retry_wait(self, problem: str, delay: float) -> None:
        """A failing model call backs off: status says so, and a shutdown request meanwhile is
        approved without the model, which cannot be reached to decide (a respawn resumes)."""
        if threading.current_thread() is not threading.main_thread():
            return super().retry_wait(problem, delay)  # a subagent's call
        self.keeper.set(detail=f"{MODEL_FAILING}: {problem}; retrying in {delay:.0f}s")
        why = f"{MODEL_FAILING} ({problem})"
        if self.shutdown.answering is not None:  # this turn's model call was to answer it
            self.shutdown.approve_without_model(self.shutdown.answering, why)
        else:
            request = self.inputs.shutdown_within(delay)
            if request is None:
                return
            assert isinstance(request.kind, ShutdownRequest)
            self.inputs.mark_read([request])
            self.shutdown.approve_without_model(request.kind, why)
        raise ModelAPIError(f"{problem}; stopped retrying: asked to shut down")

    def spend_limit(self, pending: Usage) -> str | None:
        return self.limits.budget.check(pending)  # its own calls' and its subagents'

    def stop_reason(self) -> str | None:
        return self.limits.reason()

    def before_tool(self, tool: Tool, args: dict[str, Any]) -> None:
        self.signals.check_interrupt()  # interrupted since the reply came: the call never runs
        self.inputs.apply_mode_changes()  # a mode the lead set during the turn: this call's

    def arrivals(self) -> tuple[list[Block], Callable[[], None]]:
        return self.inputs.arrivals()


class TeammateToolHost(NoHost):
    def __init__(self, command: CurrentCommand, shutdown: Shutdown, modes: Modes,
                 interrupted: Callable[[], bool]) -> None:
        self.command, self.shutdown, self.modes = command, shutdown, modes
        self.interrupted = interrupted

    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        self.command.track(proc)
        # SIGINT kills the command it finds running: one that came before this command was
        # tracked (during a PreToolUse hook, or while it started) found none, so it ends here.
        if proc is not None and self.interrupted():
            kill_tree(proc)

    def structured_sent(self, message: Any) -> None:
        self.shutdown.sent(message)

    def pending_shutdown_id(self) -> str | None:
        return self.shutdown.pending_id()

    def exit_plan(self, plan: str) -> str:
        return self.modes.exit_plan(plan)


def main_thread() -> bool:
    """A command started on the main thread is the turn's own (a subagent's hook runs on its
    thread: its own run ends it)."""
    return threading.current_thread() is threading.main_thread()

