"""What every agent process shares, teammate or lead: its state.json (written under the state
lock, never over an observer's verdict), the heartbeat, usage and turns, the transcript, and
compaction. `swarm.runtime.teammate.agent.Agent` (a teammate) and `swarm.lead.process.Lead` build on it.
"""

from __future__ import annotations

import logging
import os
import subprocess
import threading
import time
from typing import Any

from swarm import settings
from swarm.core.records import base as records
from swarm.core.records.state import AgentState, Usage
from swarm.core.store import paths
from swarm.core.store.disk import utcnow_iso
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import read_state, update_state
from swarm.core.team.team import Team
from swarm.core.team.transcript import Transcript
from swarm.errors import StoreUnavailableError, describe_error
from swarm.runtime.models.base import ModelReply
from swarm.runtime.teammate.console import brief
from swarm.runtime.turn.compaction import Compactor
from swarm.runtime.turn.loop import Loop

log = logging.getLogger(__name__)
ACTIVITY_LIMIT = 200  # characters of a tool call's line kept in state.json


class AgentBase:
    """Identity, state, heartbeat, usage, transcript and compaction of one agent process.

    Subclasses say how a line is shown (`say`) and what to do when another process owns the
    state now (`on_superseded`); they may add a check to every heartbeat (`on_beat`)."""

    def __init__(self, team: Team, name: str) -> None:
        self.team = team
        self.name = name
        self.transcript = Transcript(paths.agent_transcript(team.name, name))
        previous = read_state(team.name, name)  # a respawn keeps its turns and usage
        self.state = AgentState(pid=os.getpid(), started_at=process_start_time(os.getpid()),
                                turns=previous.turns if previous else 0,
                                usage=previous.usage if previous else Usage(),
                                mode_order=previous.mode_order if previous else None)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._superseded: str | None = None  # another observer or process owns our state now
        self._copies = self._copy_written = 0  # state copies taken, and the newest one written
        self._proc: subprocess.Popen[bytes] | None = None
        self.compactor = Compactor(on_compacted=self._compacted,
                                   on_usage=lambda usage: self.add_usage(usage, turn=False))

    def stop_heartbeat(self) -> None:
        self._stopping.set()

    @property
    def superseded(self) -> str | None:
        """Why another observer or process owns our state now (None: it is ours)."""
        return self._superseded

    # -- what subclasses decide ----------------------------------------------------------------
    def say(self, text: str) -> None:
        raise NotImplementedError

    def on_superseded(self, why: str) -> None:
        """Another process owns our state now (we were declared dead, or replaced)."""

    def on_beat(self) -> None:
        """Called from the heartbeat thread after each beat."""

    # -- state -------------------------------------------------------------------------------
    def set_state(self, **fields: Any) -> None:
        with self._lock:
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

        update_state(self.team.name, self.name, apply)
        if superseded and not self._superseded:
            self._superseded = superseded
            self.on_superseded(superseded)

    def _newest(self, copy: int) -> bool:
        """The heartbeat and the main thread each copy the state, then write it: a copy older
        than one already written would undo that one (which holds all the older one did)."""
        with self._lock:  # checked and set at once: a Redis write may run beside another
            if copy < self._copy_written:
                return False
            self._copy_written = copy
            return True

    def add_usage(self, usage: Usage, turn: bool = True) -> None:
        with self._lock:
            self.state.usage.add(usage)
            self.state.turns += 1 if turn else 0
        self.set_state()

    def start_heartbeat(self) -> threading.Thread:
        beat = threading.Thread(target=self._heartbeat, name="heartbeat", daemon=True)
        beat.start()
        return beat

    def _heartbeat(self) -> None:
        while not self._stopping.wait(settings.heartbeat_interval()):
            try:
                self.set_state()
            # A full or read-only disk, a store given up on while exiting: say so, keep beating.
            except (OSError, StoreUnavailableError) as exc:
                log.warning("heartbeat not written: %s", describe_error(exc))
                self.say(f"heartbeat not written: {describe_error(exc)}")
            self.on_beat()

    # -- the parts of LoopHooks every agent answers the same way --------------------------------
    def before_call(self, loop: Loop) -> None:
        self.compactor(loop)

    def activity(self, what: str | None) -> None:
        """Kept in memory only: the next heartbeat writes it (a call costs no file write)."""
        with self._lock:
            self.state.activity = brief(what, ACTIVITY_LIMIT) if what else None
            self.state.activity_since = time.time() if what else None

    def count_reply(self, reply: ModelReply) -> None:
        usage = reply.usage
        self.compactor.last_input_tokens = (usage.input_tokens + usage.cache_read_input_tokens
                                            + usage.cache_creation_input_tokens)
        self.add_usage(usage)

    def record(self, message: dict[str, Any]) -> None:
        self.transcript.message(message)

    def _compacted(self, summary: str, kept: list[dict[str, Any]]) -> None:
        self.transcript.compaction(summary, kept)
        self.say(f"compacted the conversation ({len(summary)} characters of summary)")

    # -- ToolHost: the Bash child ---------------------------------------------------------------
    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        self._proc = proc
        # Recorded so whoever records our death can end the command too (its own group).
        pid = proc.pid if proc is not None else None
        self.set_state(child_pgid=pid, child_started_at=process_start_time(pid) if pid else None)
