"""`swarm top` driven with Textual's Pilot against real teams of offline teammates (`shell` and
`scripted:` models on the hidden backend): every key answers through the operation the CLI
uses, and the teammates really run, wait or stop."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.protocol import PermissionRequest
from swarm.core.team.team import Team
from swarm.ops.approvals import pending_permissions
from swarm.ops.top import Feed
from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until
from tests.support.top_support import groups, member_lines, run, screen_text, static_text, until

ECHO = "echo x > f.txt"


def asking(crew: Crew, *names: str, command: str = ECHO) -> None:
    for name in names:
        crew.spawn(name, prompt=f"$ {command}", permission_mode="default")


def app_for(crew: Crew) -> Any:
    from swarm.cli.top_app import TopApp

    return TopApp(Team(crew.team.name), blink=False)


def requests_from(crew: Crew, name: str) -> list[PermissionRequest]:
    return [m.structured() for m in crew.lead_messages() if m.sender == name
            and isinstance(m.structured(), PermissionRequest)]


def test_a_request_shows_in_needs_you_with_its_real_input_and_y_approves(
        store: str, crew: Crew) -> None:
    """On both stores (the Redis one through the store interface alone)."""
    asking(crew, "w1")
    crew.spawn("w2")  # no prompt: idle
    target = crew.workdir / "f.txt"

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "w1" in groups(app).get("Needs you", []), 20,
                        "w1 in Needs you")
            await until(pilot, lambda: "w2" in groups(app).get("Idle", []), 20, "w2 idle")
            bar = static_text(app, "#bar")
            assert f"w1 (default mode) asks: Bash: {ECHO}" in bar
            assert not target.exists()
            await pilot.press("y")
            await until(pilot, target.exists, 20, "f.txt written after y")
            await until(pilot, lambda: "approved Bash for w1" in static_text(app, "#line"))
            await until(pilot, lambda: "Needs you" not in groups(app), 20, "Needs you empty")

    run(scenario)
    assert target.read_text() == "x\n"


def test_N_denies_with_the_reason_typed_and_n_with_the_default(crew: Crew) -> None:
    asking(crew, "w1", "w2")

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: len(groups(app).get("Needs you", [])) == 2, 20,
                        "two asking")
            await pilot.press("N", *"not in the root", "enter")
            await until(pilot, lambda: "denied Bash for" in static_text(app, "#line"))
            await until(pilot, lambda: len(groups(app).get("Needs you", [])) == 1, 20)
            await pilot.press("n")
            await until(pilot, lambda: "Needs you" not in groups(app), 20, "both answered")

    run(scenario)
    results = [crew.log(n) for n in ("w1", "w2")]
    assert any("not in the root" in r for r in results), results
    assert any("denied by the person" in r for r in results), results
    assert not (crew.workdir / "f.txt").exists()


def test_a_shows_the_exact_rule_first_then_adds_it_and_the_next_call_does_not_ask(
        crew: Crew) -> None:
    asking(crew, "w1")

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "w1" in groups(app).get("Needs you", []), 20)
            await pilot.press("a")
            await until(pilot, lambda: app.screen.query("#question"), 5, "the confirmation")
            question = static_text(app.screen, "#question")  # type: ignore[arg-type]
            assert f"Bash({ECHO})" in question and "every teammate of team crew" in question
            assert crew.team.config().allowed_rules == []  # not before the confirmation
            await pilot.press("y")
            await until(pilot, lambda: (crew.workdir / "f.txt").exists(), 20, "approved")

    run(scenario)
    assert crew.team.config().allowed_rules == [f"Bash({ECHO})"]
    crew.wait_idle_notes("w1", 1)
    asking(crew, "w3")  # the same call from another teammate: the rule lets it run
    crew.wait_idle_notes("w3", 1)
    assert requests_from(crew, "w3") == []


def test_Y_approves_the_same_request_across_members(crew: Crew) -> None:
    asking(crew, "w1", "w2")
    asking(crew, "w3", command="echo other > g.txt")

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: len(groups(app).get("Needs you", [])) == 3, 20)
            await pilot.press("Y")
            await until(pilot, lambda: "approved Bash for 2: w1, w2" in static_text(app, "#line")
                        or "approved Bash for 2: w2, w1" in static_text(app, "#line"))
            await until(pilot, lambda: groups(app).get("Needs you") == ["w3"], 20)

    run(scenario)
    assert [p.message.sender for p in pending_permissions(crew.team)] == ["w3"]


def test_p_approves_a_plan(crew: Crew, tmp_path: Path) -> None:
    script = tmp_path / "plan.json"
    script.write_text(json.dumps([
        {"text": "planning", "tool_uses": [{"name": "ExitPlanMode",
                                            "input": {"plan": "1. write out.txt"}}]},
        {"text": "working", "tool_uses": [{"name": "Write", "input": {
            "file_path": "out.txt", "content": "planned"}}]},
        {"text": "done"}]))
    crew.spawn("p1", prompt="plan it", model=f"scripted:{script}", plan_mode_required=True,
               permission_mode=None)

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "p1" in groups(app).get("Needs you", []), 20)
            assert "p1 (plan mode) has a plan waiting" in static_text(app, "#bar")
            await pilot.press("p")
            await until(pilot, lambda: app.screen.query("#question"), 5, "the plan")
            assert "1. write out.txt" in static_text(app.screen, "#question")  # type: ignore
            await pilot.press("y")
            await until(pilot, lambda: (crew.workdir / "out.txt").exists(), 20, "plan ran")

    run(scenario)
    assert (crew.workdir / "out.txt").read_text() == "planned"


def test_m_sends_a_message_i_interrupts_and_X_kills_after_asking(crew: Crew) -> None:
    crew.spawn("w1")
    crew.spawn("w2", prompt="$ sleep 60")
    # In its turn: shown as Working from its start (a starting member is busy), but a SIGINT
    # before its turn has nothing to interrupt.
    crew.wait_state("w2", "working", timeout=30)

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: groups(app).get("Idle") == ["w1"], 20)
            await until(pilot, lambda: "w2" in groups(app).get("Working", []), 20)
            for _ in range(3):  # Working is above Idle
                if app.selected() != "w2":
                    await pilot.press("k")
            assert app.selected() == "w2"
            await pilot.press("i")
            await until(pilot, lambda: "interrupted w2" in static_text(app, "#line"), 30, "interrupted")
            await pilot.press("j")
            assert app.selected() == "w1"
            await pilot.press("m", *"$ echo hi > m.txt", "enter")
            await until(pilot, lambda: (crew.workdir / "m.txt").exists(), 20, "message run")
            await pilot.press("X")
            await until(pilot, lambda: app.screen.query("#question"), 5, "kill confirmation")
            await pilot.press("n")  # asked again: no kills nothing
            await until(pilot, lambda: "w1 not killed" in static_text(app, "#line"), 30, "not killed")
            await pilot.press("X", "y")
            await until(pilot, lambda: "killed w1" in static_text(app, "#line"), 30, "killed")
            await until(pilot, lambda: "w1" in groups(app).get("Exited / Dead", []), 20)

    run(scenario)
    assert crew.state("w1").state == "exited"  # type: ignore[union-attr]
    # w2 writes its log line when it handles the SIGINT, not before `i` says it was sent.
    wait_until(lambda: "interrupt" in crew.log("w2").lower(), 30,
               message="w2's interrupted turn in its log")


def test_slash_filters_members_by_name(crew: Crew) -> None:
    for name in ("alpha1", "alpha2", "beta"):
        crew.register(name)

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: sum(len(v) for v in groups(app).values()) == 3, 10)
            await pilot.press("slash", *"alpha", "enter")
            await until(pilot, lambda: sorted(n for v in groups(app).values() for n in v)
                        == ["alpha1", "alpha2"], 5, "filtered")
            assert "filter: alpha" in static_text(app, "#head")
            await pilot.press("slash", *["backspace"] * 5, "enter")
            await until(pilot, lambda: sum(len(v) for v in groups(app).values()) == 3, 5)

    run(scenario)


def test_a_teammate_may_not_approve_its_own_request_through_top(
        crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    asking(crew, "w1")
    monkeypatch.setenv("SWARM_AGENT_ID", "w1@crew")  # this shell is w1's

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: "w1" in groups(app).get("Needs you", []), 20)
            for key in ("y", "a", "Y", "n"):
                await pilot.press(key)
                line = static_text(app, "#line")
                assert line.startswith("`swarm permissions ") and "is for the team lead" in line
                assert "teammate w1" in line and "\n" not in line
            assert "w1" in groups(app).get("Needs you", [])

    run(scenario)
    assert [p.message.sender for p in pending_permissions(crew.team)] == ["w1"]
    assert crew.team.config().allowed_rules == []
    assert not (crew.workdir / "f.txt").exists()


def test_the_store_is_not_read_while_the_team_is_idle(
        crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    """After the first read, an idle team (heartbeats going on) wakes no read; a request does."""
    import sys

    from swarm.core.store import paths

    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.5")  # more heartbeats, in less time
    crew.spawn("w1")
    crew.spawn("w2")
    crew.wait_state("w1", "idle")
    crew.wait_state("w2", "idle")
    team_dir = str(paths.team_dir(crew.team.name))
    opened: list[str] = []
    counting = [False]

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if counting[0] and event in ("open", "os.listdir", "os.scandir") and args \
                and str(args[0]).startswith(team_dir):
            opened.append(str(args[0]))

    sys.addaudithook(hook)  # stays for the process: gated by `counting`
    views: list[Any] = []

    async def scenario() -> None:
        app = app_for(crew)
        async with app.run_test(size=(120, 40)) as pilot:
            feed: Feed = app.feed
            await until(pilot, lambda: groups(app).get("Idle") == ["w1", "w2"], 20)
            await until(pilot, lambda: feed.reads >= 1)
            # The selected member's tab is read once per view, after the list is painted.
            await until(pilot, lambda: app.filled is not None and app.filled[0] == id(app.view))
            reads = feed.reads
            state = paths.agent_dir(crew.team.name, "w1") / "state.json"
            first = state.stat().st_mtime  # a stat is no open: the hook does not count it
            opened.clear()
            counting[0] = True
            # Heartbeats go on (SWARM_HEARTBEAT_INTERVAL: 0.5 s): over 2.5 s of them (more than
            # a 2 s pid check of the feed's), no read.
            await until(pilot, lambda: state.stat().st_mtime >= first + 2.5, 15, "heartbeats")
            counting[0] = False
            assert feed.reads == reads, "the team was read while idle"
            assert opened == [], opened[:5]
            crew.send("w1", f"$ {ECHO}")  # a message: read at once
            await until(pilot, lambda: feed.reads > reads, 5, "a read after a change")
            views.append(screen_text(app))

    run(scenario)
    assert views


__all__ = ["member_lines"]
