"""The teammate process (`swarm agent --agent-id NAME@TEAM`): setup, inputs, signals, heartbeat.

Life of a teammate: read its member entry, build its prompt and tools, resume its conversation
from the transcript, then forever: wait for input (shutdown request > lead > peers > a task),
run one turn of the loop, go idle and tell the lead once. SIGINT aborts the turn only; SIGTERM
ends the process; an approved shutdown request ends it cleanly (exit 0).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

from swarm import settings
from swarm.core import paths
from swarm.core.liveness import process_start_time
from swarm.core.mailbox import Mailbox
from swarm.core.names import LEAD_NAME
from swarm.core.protocol import (
    IdleNotification,
    Message,
    PermissionResponse,
    PlanApprovalResponse,
    ShutdownRequest,
    ShutdownResponse,
    TeammateTerminated,
    render_for_model,
)
from swarm.core.state import AgentState, Usage, read_state, update_state, write_state
from swarm.core.store import utcnow_iso
from swarm.core.tasks import Task
from swarm.core.team import Team
from swarm.core.transcript import Transcript
from swarm.core.watch import FileWatcher
from swarm.errors import NotFoundError
from swarm.runtime.console import Console, brief
from swarm.runtime.loop import Loop, TurnInterrupted, TurnOutcome
from swarm.runtime.tools import kill_tree

T = TypeVar("T")
# Replies the agent consumes itself; they never reach the model as plain messages.
CONTROL_TYPES = (PermissionResponse,)


class AgentStopped(Exception):
    """SIGTERM: leave whatever we are doing and exit."""


class Agent:
    def __init__(self, team_name: str, name: str) -> None:
        from swarm.runtime.setup import build  # keeps this module about the process life

        self.team = Team.open(team_name)
        self.name = name
        self.box = Mailbox(self.team.name, name)
        self.transcript = Transcript(paths.agent_transcript(self.team.name, name))
        previous = read_state(self.team.name, name)  # a respawn keeps its turns and usage
        self.state = AgentState(pid=os.getpid(), started_at=process_start_time(os.getpid()),
                                turns=previous.turns if previous else 0,
                                usage=previous.usage if previous else Usage())
        self.console = Console(paths.agent_log(self.team.name, name), name)
        self._lock = threading.Lock()
        self._interruptible = False
        self._interrupt = threading.Event()
        self._stopping = threading.Event()
        self._superseded: str | None = None  # another observer or process owns our state now
        self._hangup = False  # SIGHUP: its pane or terminal was closed under it
        self._proc: subprocess.Popen[bytes] | None = None
        self.pending_shutdown: ShutdownRequest | None = None
        self.shutdown_approved = False
        self.completed_task: Task | None = None
        self.setup = build(self)
        self.loop: Loop = self.setup.loop

    # -- state -------------------------------------------------------------------------------
    def set_state(self, **fields: Any) -> None:
        with self._lock:
            for key, value in fields.items():
                setattr(self.state, key, value)
            self.state.heartbeat = time.time()
            if fields:
                self.state.last_activity = utcnow_iso()
            snapshot = self.state.model_copy(deep=True)

        superseded: str | None = None

        def apply(on_disk: AgentState) -> None:
            nonlocal superseded
            # An observer declared us dead (we were stopped or hung: our tasks went back to the
            # pool), or a respawn replaced us: never write over that, leave instead.
            if on_disk.state == "dead" and on_disk.terminated_reported:
                superseded = f"declared dead while it was not running ({on_disk.detail})"
            elif on_disk.pid not in (None, snapshot.pid):
                superseded = f"replaced by pid {on_disk.pid}"
            if superseded:
                return
            for key in AgentState.model_fields:
                setattr(on_disk, key, getattr(snapshot, key))

        update_state(self.team.name, self.name, apply)
        if superseded and not self._superseded:
            self._superseded = superseded
            self.console.say(f"{superseded}: exiting")
            if not self._stopping.is_set():
                os.kill(os.getpid(), signal.SIGTERM)  # the main thread leaves through finish()

    def add_usage(self, usage: Usage, turn: bool = True) -> None:
        with self._lock:
            self.state.usage.add(usage)
            self.state.turns += 1 if turn else 0
        self.set_state()

    def _heartbeat(self) -> None:
        while not self._stopping.wait(settings.heartbeat_interval()):
            self.set_state()

    # -- signals -----------------------------------------------------------------------------
    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.state.state not in ("working", "waiting_permission", "awaiting_plan"):
            return  # nothing to interrupt while idle
        self._interrupt.set()
        if self._proc is not None:
            kill_tree(self._proc)
        if self._interruptible:
            raise TurnInterrupted()

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self._stopping.set()
        if self._proc is not None:
            kill_tree(self._proc)
        raise AgentStopped()

    def _on_sighup(self, signum: int, frame: FrameType | None) -> None:
        self._hangup = True
        self._on_sigterm(signum, frame)

    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        self._proc = proc

    def check_interrupt(self) -> None:
        if self._interrupt.is_set():
            raise TurnInterrupted()

    def interruptible(self, call: Callable[[], T]) -> T:
        """Run a blocking call (a model request, a wait for the lead) that SIGINT may abandon."""
        self.check_interrupt()
        self._interruptible = True
        try:
            return call()
        finally:
            self._interruptible = False

    # -- inputs ------------------------------------------------------------------------------
    def watcher(self) -> FileWatcher:
        return FileWatcher([(self.box.path.parent, self.box.path.name),
                            (paths.tasks_dir(self.team.name), None)])

    def next_input(self, watcher: FileWatcher) -> tuple[list[Message], Task | None]:
        """Block until there is something to do, in SPEC order."""
        while True:
            parsed = [(m, m.structured()) for m in self.box.unread()]
            stale = [m.id for m, kind in parsed if isinstance(kind, CONTROL_TYPES)]
            if stale:  # answers to requests no longer waiting: nothing to do with them
                self.box.mark_read(stale)
            shutdown = [m for m, kind in parsed if isinstance(kind, ShutdownRequest)]
            if shutdown:
                return shutdown[:1], None
            unread = [m for m, kind in parsed if not isinstance(kind, CONTROL_TYPES)]
            if unread:
                lead = [m for m in unread if m.sender == LEAD_NAME]
                peers = sorted((m for m in unread if m.sender != LEAD_NAME),
                               key=lambda m: m.timestamp)
                return lead + peers, None
            if self.loop.stop_reason() is None:
                task = self.team.tasks.claim_next(self.name)
                if task is not None:
                    return [], task
            watcher.wait(settings.heartbeat_interval() * 2)

    def render_input(self, messages: list[Message], task: Task | None) -> list[dict[str, Any]]:
        blocks = [{"type": "text", "text": render_for_model(m)} for m in messages]
        if task is not None:
            blocks.append({"type": "text", "text": (
                f'<task-assignment id="{task.id}" subject="{task.subject}">\n'
                f"{task.description}\n</task-assignment>\n"
                f'You have claimed task #{task.id}. Do it, mark it completed with TaskUpdate '
                f'(task_id "{task.id}", with a short result) and report to {LEAD_NAME}.')})
        return blocks

    # -- one turn ----------------------------------------------------------------------------
    def take_turn(self, messages: list[Message], task: Task | None) -> TurnOutcome:
        for message in messages:
            structured = message.structured()
            if isinstance(structured, ShutdownRequest):
                self.pending_shutdown = structured
            if isinstance(structured, PlanApprovalResponse):
                self.setup.apply_plan_response(structured)
        current = task.id if task is not None else self.state.current_task
        self.completed_task = None
        self._interrupt.clear()
        self.set_state(state="working", current_task=current, idle_reason=None, detail=None)
        for message in messages:
            kind = message.structured()
            shown = kind.type if kind is not None else (message.summary or message.text)
            self.console.say(f"<- {message.sender}: {brief(shown)}")
        if task is not None:
            self.console.say(f"claimed task #{task.id}: {brief(task.subject)}")
        content = self.render_input(messages, task)
        # The message is in the conversation (and transcript) before it is marked read.
        self.loop.add({"role": "user", "content": content})
        self.box.mark_read([m.id for m in messages])
        outcome = self.loop.run([])
        if outcome.reason == "interrupted":
            self.transcript.event("interrupted")
        return outcome

    def after_turn(self, outcome: TurnOutcome) -> None:
        task = self.completed_task
        current = self.state.current_task
        if current is not None:
            try:
                latest: Task | None = self.team.tasks.get(current)
            except NotFoundError:
                latest = None
            if task is None and latest is not None and latest.status == "completed":
                task = latest  # the task it was on got done this turn: the lead is told which
            if latest is None or latest.status == "completed" or latest.owner != self.name:
                current = None
        detail = outcome.failure or (f"stopped: {outcome.reason}"
                                     if outcome.reason not in ("available",) else None)
        self.set_state(state="idle", idle_reason=outcome.reason, current_task=current,
                       detail=detail)
        note = IdleNotification(
            sender=self.name, idle_reason=outcome.reason,  # type: ignore[arg-type]
            summary=(outcome.last_text or "")[:200] or None,
            completed_task_id=task.id if task else None,
            completed_status=task.status if task else None,
            failure_reason=outcome.failure,
        )
        self.team.send(LEAD_NAME, note, sender=self.name)
        self.console.say(f"idle ({outcome.reason})" + (f": {outcome.failure}" if outcome.failure else ""))

    def on_structured_sent(self, message: Any) -> None:
        if isinstance(message, ShutdownResponse) and message.approve:
            self.shutdown_approved = True

    # -- the process -------------------------------------------------------------------------
    def run(self) -> int:
        signal.signal(signal.SIGINT, self._on_sigint)
        signal.signal(signal.SIGTERM, self._on_sigterm)
        signal.signal(signal.SIGHUP, self._on_sighup)
        write_state(self.team.name, self.name, self.state)
        self.team.update_member(self.name, pid=os.getpid())
        self.transcript.event("started", pid=os.getpid(), model=self.setup.model_name)
        beat = threading.Thread(target=self._heartbeat, name="heartbeat", daemon=True)
        beat.start()
        self.console.say(f"{self.name}@{self.team.name} started (model {self.setup.model_name}, "
                         f"mode {self.setup.mode}, pid {os.getpid()})")
        exit_code, detail = 0, "shut down"
        try:
            with self.watcher() as watcher:
                self.set_state(state="idle", idle_reason="available")
                while not self.shutdown_approved:
                    messages, task = self.next_input(watcher)
                    outcome = self.take_turn(messages, task)
                    if self.shutdown_approved:
                        break
                    self.after_turn(outcome)
        except AgentStopped:
            exit_code, detail = ((129, "its pane was closed (SIGHUP)") if self._hangup
                                 else (143, "killed (SIGTERM)"))
        finally:
            self._stopping.set()
            self.finish(detail)
        return exit_code

    def finish(self, detail: str) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish what we write, then go
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        if self._superseded:  # our tasks and state are someone else's now: touch neither
            self.transcript.event("exited", detail=self._superseded)
            return
        released = self.team.tasks.release_owned_by(self.name)
        self.transcript.event("exited", detail=detail, released=[t.id for t in released])
        self.console.say(f"exited: {detail}")
        if not self._hangup:
            self.set_state(state="exited", current_task=None, detail=detail)
            return
        # Nobody asked it to stop (the user closed its pane): a death, told to the lead once,
        # as an observer would have recorded it.
        self.set_state(state="dead", current_task=None, detail=detail, terminated_reported=True)
        note = TeammateTerminated(agent_id=f"{self.name}@{self.team.name}", reason=detail)
        self.team.send(LEAD_NAME, note, sender=self.name)


def run_agent(agent_id: str) -> int:
    from swarm.core.names import parse_agent_id

    name, team = parse_agent_id(agent_id)
    agent = Agent(team, name)
    os.chdir(agent.setup.cwd)
    return agent.run()
