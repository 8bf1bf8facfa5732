"""Screenshots of `swarm top` at 80x24 and 120x40, compared as SVG text with
tests/data/snapshots/top/*.svg (rewritten with SWARM_UPDATE_SNAPSHOTS=1): a fixed team (ops states
and a request written directly, fixed times) and a frozen clock, so a screen differs only when
what it shows does. Also: a teammate's text never reaches the terminal as control codes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from swarm.cli.top_app import TopApp
from swarm.core.team.team import Team
from tests.support.top_support import (
    FIXED,
    compare_svg,
    fixed_team,
    groups,
    run,
    settled_svg,
    static_text,
    until,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """What changes Textual's colours or connects it elsewhere is not the test's."""
    for var in ("NO_COLOR", "TEXTUAL_THEME", "TEXTUAL", "TEXTUAL_COLOR_SYSTEM", "FORCE_COLOR"):
        monkeypatch.delenv(var, raising=False)


def shot(name: str, size: tuple[int, int],
         keys: Callable[[Pilot[Any], TopApp], Awaitable[None]] | None = None,
         path: Path | None = None) -> str:
    team = fixed_team()
    svgs: list[str] = []

    async def scenario() -> None:
        app = TopApp(Team(team.name), clock=lambda: FIXED, blink=False)
        async with app.run_test(size=size) as pilot:
            await until(pilot, lambda: groups(app).get("Exited / Dead") == ["dee"], 10,
                        "the first view")
            if keys is not None:
                await keys(pilot, app)
            svgs.append(await settled_svg(pilot))

    run(scenario)
    compare_svg(name, svgs[0], path)
    return svgs[0]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_the_main_screen(size: tuple[int, int]) -> None:
    svg = shot(f"main-{size[0]}x{size[1]}", size)
    assert "Needs&#160;you" in svg and "make&#160;test" in svg


def test_the_readme_screenshot_is_this_screen() -> None:
    """docs/top.svg (the README's and the guide's) is made here, not by hand: a teammate
    asking, one working with a task, one idle, one gone; the selected one's Tasks tab."""
    async def tasks_of_bob(pilot: Pilot[Any], app: TopApp) -> None:
        await pilot.press("j", "2")
        await until(pilot, lambda: "fix the parser" in static_text(app, "#tasks-text"), 5)

    shot("readme", (120, 32), tasks_of_bob, ROOT / "docs" / "top.svg")


async def _always(pilot: Pilot[Any], app: TopApp) -> None:
    await pilot.press("a")
    await until(pilot, lambda: app.screen.query("#question"), 5, "the confirmation")


async def _deny_why(pilot: Pilot[Any], app: TopApp) -> None:
    await pilot.press("N", *"use make check")
    await until(pilot, lambda: app.screen.query("#field"), 5, "the field")


async def _kill(pilot: Pilot[Any], app: TopApp) -> None:
    await pilot.press("j", "X")
    await until(pilot, lambda: app.screen.query("#question"), 5, "the confirmation")


@pytest.mark.parametrize("name,keys,size", [
    ("always-80x24", _always, (80, 24)), ("deny-why-80x24", _deny_why, (80, 24)),
    ("kill-120x40", _kill, (120, 40))], ids=["always", "deny-why", "kill"])
def test_the_dialogs(name: str, keys: Callable[[Pilot[Any], TopApp], Awaitable[None]],
                     size: tuple[int, int]) -> None:
    svg = shot(name, size, keys)
    expected = {"always": "Bash(make&#160;test)", "deny-why": "use&#160;make&#160;check",
                "kill": "Kill&#160;bob&#160;now?"}[name.split("-1")[0].split("-8")[0]]
    assert expected in svg


def test_a_refusal_is_one_line_on_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_AGENT_ID", "ada@alpha")

    async def refused(pilot: Pilot[Any], app: TopApp) -> None:
        await pilot.press("y")
        await until(pilot, lambda: "is for the team lead" in static_text(app, "#line"), 5)

    svg = shot("refusal-80x24", (80, 24), refused)
    assert "is&#160;for&#160;the&#160;team&#160;lead" in svg


def test_teammates_text_reaches_the_screen_escaped() -> None:
    """A request's command, a task subject and a member's log with terminal controls: shown
    as text (`\\x1b`), never sent as escape sequences; markup in them is text too."""
    from swarm.core.records.protocol import PermissionRequest
    from swarm.core.store import paths

    team = fixed_team()
    evil = "A\x1b]0;PWNED\x07B\x1b[2JC\x9b31mD\u202eE [@click=app.quit]x[/]"
    team.tasks.update("1", subject=evil)
    team.send("team-lead", PermissionRequest(agent_id="cy@alpha", tool_name="Bash",  # type: ignore[arg-type]
                                             input={"command": evil}), sender="cy")
    log = paths.agent_log(team.name, "ada")
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(f"out {evil}\n")
    seen: list[str] = []

    async def scenario() -> None:
        app = TopApp(Team(team.name), clock=lambda: FIXED, blink=False)
        async with app.run_test(size=(160, 40)) as pilot:
            await until(pilot, lambda: "cy" in groups(app).get("Needs you", []), 10)
            await pilot.press("j")  # cy's request in the bar
            await until(pilot, lambda: "\\x1b]0;PWNED" in static_text(app, "#bar"), 5)
            bar = static_text(app, "#bar")
            await pilot.press("k")  # back to ada: its Output
            seen.extend([await settled_svg(pilot), bar])
            assert app.is_running  # the [@click=app.quit] was not an action

    run(scenario)
    svg, bar = seen
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in svg and raw not in bar
    assert "\\x1b]0;PWNED" in svg.replace("&#160;", " ") and "\\u202e" in bar
    assert "[@click=app.quit]x[/]" in bar


def test_the_tabs_show_the_selected_member_s_tasks_mail_diff_and_info() -> None:
    """Each tab shows what its CLI command would say about the selected member (bob)."""
    from tests.support.cli_runner import run_swarm

    fixed_team()
    diff = run_swarm("diff", "bob", "--team", "alpha")
    said = (diff.stdout.strip() or diff.stderr.strip().removeprefix("swarm: error: "))

    async def scenario() -> None:
        app = TopApp(Team("alpha"), clock=lambda: FIXED, blink=False)
        async with app.run_test(size=(120, 40)) as pilot:
            await until(pilot, lambda: groups(app).get("Working") == ["bob"], 10)
            await pilot.press("j", "2")
            await until(pilot, lambda: "#1 [in_progress] fix the parser"
                        in static_text(app, "#tasks-text"), 5, "Tasks")
            await pilot.press("3")
            await until(pilot, lambda: "no mail to bob" in static_text(app, "#mail-text"), 5)
            await pilot.press("4")
            await until(pilot, lambda: said.splitlines()[0] in static_text(app, "#diff-text"),
                        10, f"Diff: {said!r}")
            await pilot.press("5")
            await until(pilot, lambda: "model    sonnet" in static_text(app, "#info-text"), 5)
            await pilot.press("tab")
            assert app.query_one("#tabs").active == "output"  # type: ignore[attr-defined]

    run(scenario)
