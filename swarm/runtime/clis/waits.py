"""How a teammate that is another agent CLI waits (runtime.teammate.cli_teammate): SIGINT asks the CLI
to interrupt its turn; a question for the lead, asked in this process (Gemini CLI's) or a
driver's thread (Codex's), shows in its state and pane and ends with an interrupt or the turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import FrameType
from typing import Any, Protocol, TypeVar

from swarm.core.records.state import IN_TURN, AgentState
from swarm.core.store.waker import Waker
from swarm.errors import TurnInterrupted
from swarm.runtime.clis.base import CliDriver
from swarm.runtime.clis.permission import Cancelled
from swarm.runtime.process.signals import Signals
from swarm.runtime.teammate.console import Console

T = TypeVar("T")


class Owner(Protocol):
    """The teammate process these serve (CliTeammate)."""

    @property
    def state(self) -> AgentState: ...

    @property
    def driver(self) -> CliDriver: ...

    @property
    def signals(self) -> Signals: ...

    @property
    def console(self) -> Console: ...

    @property
    def _stopping(self) -> threading.Event: ...

    def set_state(self, **fields: Any) -> None: ...

    def driver_proc(self) -> Any: ...


class NoSubagents:
    """Inputs' view of subagents: an agent CLI runs its own."""

    def __init__(self) -> None:
        self.waker = Waker()

    def has_arrivals(self) -> bool:
        return False

    def take_arrivals(self) -> list[dict[str, Any]]:
        return []


class CliSignals(Signals):
    """SIGINT asks the CLI to interrupt its turn (its process lives on); SIGTERM as ever."""

    def __init__(self, owner: Owner) -> None:
        super().__init__(busy=lambda: owner.state.state in IN_TURN,
                         child=lambda: owner.driver_proc(), stopping=owner._stopping)
        self.owner = owner

    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.busy():
            self.interrupt.set()
            self.owner.driver.interrupt()
            if self._interruptible:  # a wait for the lead in this process (Gemini CLI's ask)
                raise TurnInterrupted()


class AskWaiter:
    """The Asker's waiter when the CLI asks this process: the wait shows in its state and
    pane, and SIGINT ends it."""

    def __init__(self, owner: Owner) -> None:
        self.owner = owner

    def set_state(self, **fields: Any) -> None:
        self.owner.set_state(**fields)

    def interruptible(self, call: Callable[[], T]) -> T:
        return self.owner.signals.interruptible(call)

    def show(self, *lines: str) -> None:
        self.owner.console.show(*lines)


class DriverWaiter(AskWaiter):
    """The Asker's waiter when a driver's own thread asks (Codex's approval requests): the wait
    shows in the teammate's state and pane; it ends when the turn that asked does."""

    def __init__(self, owner: Owner, cancelled: threading.Event) -> None:
        super().__init__(owner)
        self.cancelled = cancelled

    def interruptible(self, call: Callable[[], T]) -> T:
        if self.cancelled.is_set():
            raise Cancelled  # the asker withdraws the request from the lead's list
        return call()
