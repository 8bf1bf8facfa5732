"""An agent's state writes land in the order they were taken: the heartbeat thread and the main
thread each copy the state and then write it, and an older copy written last would put the agent
back in its earlier state (a teammate shown working after it went idle, or idle after it exited)
until the next beat."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from swarm.core.records.state import AgentState
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.runtime.teammate import base
from swarm.runtime.teammate.base import AgentBase


class Agent(AgentBase):
    def say(self, text: str) -> None:
        pass


@pytest.mark.usefixtures("store")
def test_an_older_copy_written_last_does_not_undo_a_newer_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    team = Team.create("alpha")
    team.add_member("ada")
    agent = Agent(team, "ada")
    agent.set_state(state="working")
    real = base.update_state
    held, newer_written = threading.Event(), threading.Event()

    def update(team: str, name: str, change: Callable[[AgentState], None],
               timeout: float | None = None) -> AgentState:
        if threading.current_thread().name == "beat":  # the heartbeat's copy, taken first...
            held.set()
            assert newer_written.wait(10)  # ...written only after the newer one
        return real(team, name, change, timeout)

    monkeypatch.setattr(base, "update_state", update)
    beat = threading.Thread(target=agent.set_state, name="beat")
    beat.start()
    assert held.wait(10)
    agent.set_state(state="idle")  # the main thread: later, and written first
    newer_written.set()
    beat.join(10)
    state = read_state("alpha", "ada")
    assert state is not None and state.state == "idle"
    agent.set_state(current_task="7")  # and later writes still land
    state = read_state("alpha", "ada")
    assert state is not None and (state.state, state.current_task) == ("idle", "7")
