"""What every agent process shares, teammate or lead: its state.json (`StateKeeper`: written
under the state lock, never over an observer's verdict; the heartbeat; usage and turns), the
transcript, compaction, and the command its turn runs. `Books` is the loop's observer that keeps
those records. `swarm.runtime.teammate.agent.Agent` (a teammate), `swarm.lead.process.Lead` and
the MCP server's host build on `AgentBase`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from swarm import settings
from swarm.core.records import base as records
from swarm.core.records.state import MODEL_FAILING, AgentState, Usage
from swarm.core.store import paths
from swarm.core.store.disk import utcnow_iso
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import read_state, update_state
from swarm.core.team.team import Team
from swarm.core.team.transcript import Transcript
from swarm.errors import StoreUnavailableError, describe_error
from swarm.runtime.models.base import ModelReply
from swarm.runtime.process.kill import CurrentCommand
from swarm.runtime.teammate.console import brief
from swarm.runtime.turn.compaction import Compactor
from swarm.runtime.turn.hooks import LoopHooks

log = logging.getLogger(__name__)
ACTIVITY_LIMIT = 200  # characters of a tool call's line kept in state.json
HEARTBEAT_STOP_S = 5.0  # the longest wait for a heartbeat's write in progress to end


class StateKeeper:
    """One agent process's state.json. `say`: a line for its pane; `on_superseded`: another
    process owns the state now (we were declared dead, or replaced); `on_beat`: a check after
    each heartbeat."""

    def __init__(self, team: str, name: str, previous: AgentState | None,
                 say: Callable[[str], None], on_superseded: Callable[[str], None],
                 on_beat: Callable[[], None]) -> None:
        self.team, self.name = team, name
        self.say, self.on_superseded, self.on_beat = say, on_superseded, on_beat
        self.state = AgentState(pid=os.getpid(), started_at=process_start_time(os.getpid()),
                                turns=previous.turns if previous else 0,
                                usage=previous.usage if previous else Usage(),
                                mode_order=previous.mode_order if previous else None)
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.superseded: str | None = None  # another observer or process owns our state now
        self._copies = self._copy_written = 0  # state copies taken, and the newest one written
        self._beat: threading.Thread | None = None

    def set(self, **fields: Any) -> None:
        with self.lock:
            for key, value in fields.items():
                setattr(self.state, key, value)
            self.state.heartbeat = time.time()
            if fields:
                self.state.last_activity = utcnow_iso()
            snapshot = records.deep_copy(self.state)
            self._copies += 1
            copy = self._copies

        superseded: str | None = None

        def apply(on_disk: AgentState) -> None:
            nonlocal superseded
            # An observer declared us dead (we were stopped or hung: our tasks went back to the
            # pool), or a respawn replaced us: never write over that, leave instead.
            if on_disk.state == "dead" and on_disk.terminated_reported:
                superseded = f"declared dead while it was not running ({on_disk.detail})"
            elif on_disk.pid not in (None, snapshot.pid):
                superseded = f"replaced by pid {on_disk.pid}"
            if superseded or not self._newest(copy):
                return
            for key in records.field_names(AgentState):
                setattr(on_disk, key, getattr(snapshot, key))

        update_state(self.team, self.name, apply)
        if superseded and not self.superseded:
            self.superseded = superseded
            self.on_superseded(superseded)

    def _newest(self, copy: int) -> bool:
        """The heartbeat and the main thread each copy the state, then write it: a copy older
        than one already written would undo that one (which holds all the older one did)."""
        with self.lock:  # checked and set at once: a Redis write may run beside another
            if copy < self._copy_written:
                return False
            self._copy_written = copy
            return True

    def add_usage(self, usage: Usage, turn: bool = True) -> None:
        with self.lock:
            self.state.usage.add(usage)
            self.state.turns += 1 if turn else 0
        self.set()

    def activity(self, what: str | None) -> None:
        """Kept in memory only: the next heartbeat writes it (a call costs no file write)."""
        with self.lock:
            self.state.activity = brief(what, ACTIVITY_LIMIT) if what else None
            self.state.activity_since = time.time() if what else None

    def start_heartbeat(self) -> threading.Thread:
        self._beat = threading.Thread(target=self._heartbeat, name="heartbeat", daemon=True)
        self._beat.start()
        return self._beat

    def stop_heartbeat(self) -> None:
        """No heartbeat after this returns: a write it had begun is over (a lead deletes its team
        next, and a state file written into the folder meanwhile kept it from going). Bounded:
        a store that does not answer must not keep the process from ending."""
        self.stopping.set()
        beat = self._beat
        if beat is not None and beat is not threading.current_thread():
            beat.join(HEARTBEAT_STOP_S)

    def _heartbeat(self) -> None:
        while not self.stopping.wait(settings.heartbeat_interval()):
            try:
                self.set()
            # A full or read-only disk, a store given up on while exiting: say so, keep beating.
            except (OSError, StoreUnavailableError) as exc:
                log.warning("heartbeat not written: %s", describe_error(exc))
                self.say(f"heartbeat not written: {describe_error(exc)}")
            self.on_beat()

    def record_command(self, pid: int | None) -> None:
        """The command its turn runs now (None: none), so whoever records our death can end it
        too (its own group)."""
        self.set(child_pgid=pid, child_started_at=process_start_time(pid) if pid else None)


class Books(LoopHooks):
    """The loop's observer that keeps the agent's records: what it does now (state.json, at the
    next heartbeat), its usage and turns, and every message in the transcript."""

    def __init__(self, keeper: StateKeeper, transcript: Transcript, compactor: Compactor) -> None:
        self.keeper, self.transcript, self.compactor = keeper, transcript, compactor

    def activity(self, what: str | None) -> None:
        self.keeper.activity(what)

    def on_reply(self, reply: ModelReply) -> None:
        if (self.keeper.state.detail or "").startswith(MODEL_FAILING):
            self.keeper.set(detail=None)  # it answers again
        self.compactor.last_input_tokens = reply.usage.all_input_tokens
        self.keeper.add_usage(reply.usage)

    def record(self, message: dict[str, Any]) -> None:
        self.transcript.message(message)


class AgentBase:
    """Identity, state, heartbeat, usage, transcript, compaction and the current command of one
    agent process.

    Subclasses say how a line is shown (`say`) and what to do when another process owns the
    state now (`on_superseded`); they may add a check to every heartbeat (`on_beat`)."""

    def __init__(self, team: Team, name: str) -> None:
        self.team = team
        self.name = name
        self.transcript = Transcript(paths.agent_transcript(team.name, name))
        self.keeper = StateKeeper(team.name, name, read_state(team.name, name),  # a respawn
                                  self.say, self.on_superseded, self.on_beat)  # keeps its usage
        self._lock = self.keeper.lock
        self._stopping = self.keeper.stopping
        self.compactor = Compactor(on_compacted=self._compacted,
                                   on_usage=lambda usage: self.keeper.add_usage(usage, turn=False))
        self.books = Books(self.keeper, self.transcript, self.compactor)
        self.command = CurrentCommand(self.keeper.record_command)  # its Bash, a hook's

    @property
    def state(self) -> AgentState:
        return self.keeper.state

    def set_state(self, **fields: Any) -> None:
        self.keeper.set(**fields)

    def add_usage(self, usage: Usage, turn: bool = True) -> None:
        self.keeper.add_usage(usage, turn)

    def reviewer_spent(self, usage: Usage) -> None:
        """auto's reviewer asked a model about one of its calls: its spend, not a turn."""
        self.keeper.add_usage(usage, turn=False)

    def activity(self, what: str | None) -> None:
        self.keeper.activity(what)

    def record(self, message: dict[str, Any]) -> None:
        self.transcript.message(message)

    def start_heartbeat(self) -> threading.Thread:
        return self.keeper.start_heartbeat()

    def stop_heartbeat(self) -> None:
        self.keeper.stop_heartbeat()

    @property
    def superseded(self) -> str | None:
        """Why another observer or process owns our state now (None: it is ours)."""
        return self.keeper.superseded

    # -- what subclasses decide ----------------------------------------------------------------
    def say(self, text: str) -> None:
        raise NotImplementedError

    def on_superseded(self, why: str) -> None:
        """Another process owns our state now (we were declared dead, or replaced)."""

    def on_beat(self) -> None:
        """Called from the heartbeat thread after each beat."""

    def _compacted(self, summary: str, kept: list[dict[str, Any]]) -> None:
        self.transcript.compaction(summary, kept)
        self.say(f"compacted the conversation ({len(summary)} characters of summary)")
