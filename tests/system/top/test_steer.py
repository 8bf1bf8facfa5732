"""`swarm top`'s steering keys against real teammates (a shutdown request, a new mode), and the
alert for a request that comes while the terminal is not focused: the bell and the notify
command once per request, never once per redraw, and none while focused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual import events

from swarm.core.team.team import Team
from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until
from tests.support.top_support import groups, run, select, static_text, until


def app_for(crew: Crew) -> Any:
    from swarm.cli.top_app import TopApp

    return TopApp(Team(crew.team.name), blink=False)


def test_x_asks_the_selected_teammate_to_shut_down_and_M_changes_its_mode(crew: Crew) -> None:
    crew.spawn("w1", permission_mode="default")
    crew.spawn("w2")

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: groups(app).get("Idle") == ["w1", "w2"], 20)
            await select(pilot, app, "w1")
            await pilot.press("M", *"acceptEdits", "enter")
            await until(pilot, lambda: "told w1 to work in acceptEdits" in
                        static_text(app, "#line"), 10)
            await select(pilot, app, "w2")
            await pilot.press("x")
            await until(pilot, lambda: "asked w2 to shut down" in static_text(app, "#line"))
            await until(pilot, lambda: "w2" in groups(app).get("Exited / Dead", []), 30,
                        "w2 exited after its answer")

    run(scenario)
    crew.send("w1", "hello")  # a mode change applies from its next turn: give it one
    wait_until(lambda: (s := crew.state("w1")) is not None and s.mode == "acceptEdits", 20,
               message="w1 in acceptEdits")
    state = crew.state("w1")
    assert state is not None and state.mode == "acceptEdits"


def test_a_request_while_not_focused_rings_once_and_runs_the_notify_command_once(
        crew: Crew, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notes = tmp_path / "notes.txt"
    crew.spawn("w1", permission_mode="default")
    crew.spawn("w2", permission_mode="default")
    # Set for the dashboard only (a teammate with it set runs it as well, for its own ring).
    monkeypatch.setenv("SWARM_NOTIFY_COMMAND", f'echo "$SWARM_NOTIFY_SENDER" >> {notes}')

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: groups(app).get("Idle") == ["w1", "w2"], 20)
            app.post_message(events.AppBlur())
            await until(pilot, lambda: not app.app_focus, 5, "blurred")
            crew.send("w1", "$ echo x > f.txt")
            await until(pilot, lambda: groups(app).get("Needs you") == ["w1"], 20)
            await until(pilot, lambda: notes.exists() and notes.read_text() == "w1\n", 10,
                        "the notify command once")
            for _ in range(3):  # redraws of the same request ring nothing more
                app.feed.refresh()
                reads = app.feed.reads
                await until(pilot, lambda r=reads: app.feed.reads > r, 5)
            assert app.alerts == 1
            app.post_message(events.AppFocus())
            await until(pilot, lambda: app.app_focus, 5, "focused")
            crew.send("w2", "$ echo y > g.txt")
            await until(pilot, lambda: "w2" in groups(app).get("Needs you", []), 20)
            assert app.alerts == 1  # focused: you see it, no bell

    run(scenario)
    assert notes.read_text() == "w1\n"
