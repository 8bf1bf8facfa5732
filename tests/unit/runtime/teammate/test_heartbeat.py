"""The heartbeat stops for good: once `stop_heartbeat` returns, no write it began is still on its
way to state.json (a lead deletes its team folder next; a state file written into it then kept
the folder from going: "directory not empty at team-lead")."""

from __future__ import annotations

import threading

import pytest

from swarm.core.team import state as team_state
from swarm.core.team.team import Team
from swarm.runtime.teammate import base
from swarm.runtime.teammate.base import StateKeeper


def test_stop_waits_for_the_write_a_beat_began(monkeypatch: pytest.MonkeyPatch) -> None:
    Team.create("beat")
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.01")
    writing, release = threading.Event(), threading.Event()
    written: list[str] = []
    real = team_state.update_state

    def slow_write(team: str, name: str, change: object, timeout: float | None = None) -> object:
        writing.set()
        release.wait(10)
        written.append(threading.current_thread().name)
        return real(team, name, change, timeout)  # type: ignore[arg-type]

    monkeypatch.setattr(base, "update_state", slow_write)
    keeper = StateKeeper("beat", "w1", None, say=lambda line: None,
                         on_superseded=lambda why: None, on_beat=lambda: None)
    keeper.start_heartbeat()
    assert writing.wait(10), "no heartbeat began"
    stopped = threading.Event()
    stopper = threading.Thread(target=lambda: (keeper.stop_heartbeat(), stopped.set()))
    stopper.start()
    assert not stopped.wait(0.3), "stop returned while a beat was still writing"
    release.set()
    stopper.join(10)
    assert stopped.is_set() and written == ["heartbeat"]
    assert not keeper._beat.is_alive()  # type: ignore[union-attr]  # none after it


def test_stop_is_bounded_when_a_write_never_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    Team.create("stuck")
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.01")
    monkeypatch.setattr(base, "HEARTBEAT_STOP_S", 0.2)
    writing, release = threading.Event(), threading.Event()
    monkeypatch.setattr(base, "update_state",
                        lambda *args, **kwargs: (writing.set(), release.wait(30)))
    keeper = StateKeeper("stuck", "w1", None, say=lambda line: None,
                         on_superseded=lambda why: None, on_beat=lambda: None)
    beat = keeper.start_heartbeat()
    assert writing.wait(10), "no heartbeat began"
    try:
        keeper.stop_heartbeat()  # returns after HEARTBEAT_STOP_S: the store did not answer
        assert beat.is_alive()
    finally:
        release.set()
