"""How a teammate process answers signals.

SIGINT aborts the turn only: it kills the running Bash command's tree and abandons the blocking
call in progress (a model request, a wait for the lead) if that call was run `interruptible`;
anything else notices at its next `check_interrupt` (a tool call before it runs), and a Bash
command that starts after it is killed as it starts (teammate/control.py). While idle it does
nothing. SIGTERM ends the process; SIGHUP (its pane or terminal was closed under it) too, and
is recorded as a death.
SIGUSR1 (`swarm interrupt NAME --background`) ends the waits on foreground subagents: they go on
in the background (`on_background`, set by the agent to its subagent runner's).
"""

from __future__ import annotations

import signal
import subprocess
import threading
from collections.abc import Callable
from types import FrameType
from typing import TypeVar

from swarm.errors import AgentStopped, TurnInterrupted
from swarm.runtime.process.kill import kill_tree

T = TypeVar("T")


class Signals:
    def __init__(self, busy: Callable[[], bool],
                 child: Callable[[], subprocess.Popen[bytes] | None],
                 stopping: threading.Event) -> None:
        self.busy, self.child, self.stopping = busy, child, stopping
        self.interrupt = threading.Event()
        self.hangup = False
        self._interruptible = False
        self.on_background: Callable[[], None] = lambda: None

    def install(self) -> None:
        signal.signal(signal.SIGINT, self._on_sigint)
        signal.signal(signal.SIGTERM, self._on_sigterm)
        signal.signal(signal.SIGHUP, self._on_sighup)
        signal.signal(signal.SIGUSR1, lambda signum, frame: self.on_background())

    def ignore_stops(self) -> None:
        """Exiting: finish what we write, then go."""
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if not self.busy():
            return  # nothing to interrupt while idle
        self.interrupt.set()
        self._kill_child()
        if self._interruptible:
            raise TurnInterrupted()

    def _on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        self.stopping.set()
        self._kill_child()
        raise AgentStopped()

    def _on_sighup(self, signum: int, frame: FrameType | None) -> None:
        self.hangup = True
        self._on_sigterm(signum, frame)

    def _kill_child(self) -> None:
        proc = self.child()
        if proc is not None:
            kill_tree(proc)

    def check_interrupt(self) -> None:
        if self.interrupt.is_set():
            raise TurnInterrupted()

    def interruptible(self, call: Callable[[], T]) -> T:
        """Run a blocking call (a model request, a wait for the lead) that SIGINT may abandon."""
        if threading.current_thread() is not threading.main_thread():
            self.check_interrupt()
            return call()  # a foreground subagent asking: signals reach the main thread only
        self._interruptible = True  # first: a SIGINT from here on raises, one before is seen
        try:
            self.check_interrupt()
            return call()
        finally:
            self._interruptible = False
