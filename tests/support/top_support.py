"""Helpers for the `swarm top` tests: drive the app with Textual's Pilot from a sync test, wait
for exact conditions inside the app's loop (never a sleep, never the sync `wait_until`, which
would block the loop that handles the feed's messages), read what the screen shows, and
compare SVG screenshots with files under tests/data/snapshots/top/."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.css.query import NoMatches
from textual.pilot import Pilot
from textual.widgets import OptionList, Static

from swarm.cli.top_app import TopApp
from swarm.core import kinds
from swarm.core.records.names import LEAD_NAME
from swarm.core.records.protocol import PermissionRequest
from swarm.core.records.state import AgentState, Usage
from swarm.core.store.liveness import process_start_time
from swarm.core.team.state import write_state
from swarm.core.team.team import Team

CLI_KIND = kinds.agent_clis()[0].name  # an agent CLI teammate (no test spells a kind's name)
SNAPSHOTS = Path(__file__).resolve().parents[1] / "data" / "snapshots" / "top"


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(scenario())  # type: ignore[arg-type]


async def until(pilot: Pilot[Any], predicate: Callable[[], object], timeout: float = 10.0,
                what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; the screen:\n"
                                 + _shown(pilot.app))
        await pilot.pause(0.02)


def _shown(app: Any) -> str:
    try:
        return "\n".join(line for line in screen_text(app).splitlines() if line.strip())
    except NoMatches:  # a dialog is up
        return f"(a dialog: {type(app.screen).__name__})"


async def select(pilot: Pilot[Any], app: TopApp, name: str) -> None:
    """Move the selection to `name` with the keys a person uses (k to the top, then j)."""
    for key in ("k", "j"):
        for _ in range(len(member_lines(app))):
            if app.selected() == name:
                return
            before = app.selected()
            await pilot.press(key)
            if app.selected() == before:
                break
    assert app.selected() == name, (app.selected(), member_lines(app))


def static_text(app: TopApp, selector: str) -> str:
    content = app.query_one(selector, Static).content
    return content.plain if isinstance(content, Text) else str(content)


def member_lines(app: TopApp) -> list[str]:
    """The members list as shown: group headings and rows."""
    widget = app.query_one("#members", OptionList)
    out = []
    for index in range(widget.option_count):
        prompt = widget.get_option_at_index(index).prompt
        out.append(prompt.plain if isinstance(prompt, Text) else str(prompt))
    return out


def groups(app: TopApp) -> dict[str, list[str]]:
    """Heading -> the names of its members (the first word of each row)."""
    found: dict[str, list[str]] = {}
    current = ""
    for line in member_lines(app):
        if not line.startswith("  "):
            current = line.rsplit(" (", 1)[0]
            found[current] = []
        else:
            found[current].append(line.split()[0])
    return found


def screen_text(app: TopApp) -> str:
    return "\n".join([static_text(app, "#head"), *member_lines(app), static_text(app, "#bar"),
                      static_text(app, "#line")])


async def settled_svg(pilot: Pilot[Any]) -> str:
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    return pilot.app.export_screenshot(simplify=True)


def compare_svg(name: str, svg: str, path: Path | None = None) -> None:
    """The screenshot equals tests/data/snapshots/top/NAME.svg, or `path` (SWARM_UPDATE_SNAPSHOTS=1
    rewrites it). On a mismatch the new one is written beside it as NAME.new.svg to look at."""
    path = path or SNAPSHOTS / f"{name}.svg"
    if os.environ.get("SWARM_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        if os.environ.get("SWARM_UPDATE_SNAPSHOTS") != "1":
            raise AssertionError(f"no snapshot {path}: run with SWARM_UPDATE_SNAPSHOTS=1")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(svg)
        return
    if path.read_text() != svg:
        path.with_suffix(".new.svg").write_text(svg)
        raise AssertionError(f"{name}: the screen differs from {path} (see {name}.new.svg)")


# -- a fixed team for screenshots and the text view: states and requests written directly ----
FIXED = 1_800_000_000.0  # the frozen clock (2027-01-15 08:00 UTC)
THREE_MINUTES_BEFORE = datetime.fromtimestamp(FIXED - 180, UTC).isoformat()


def fixed_team(name: str = "alpha") -> Team:
    """Four members, one of each group, with fixed times (no process but this one: the live
    ones carry this test's pid, so they count as alive); ada asks to run `make test`."""
    team = Team.create(name)
    me = os.getpid()
    started = process_start_time(me)
    team.add_member("ada", model="shell", backend="hidden", permission_mode="default")
    team.add_member("bob", model="sonnet", backend="hidden")
    team.add_member("cy", model="shell", agent=CLI_KIND, backend="hidden")
    team.add_member("dee", model="haiku", backend="hidden")
    task = team.tasks.add("fix the parser", "the parser drops the last line", owner="bob")
    team.tasks.update(task.id, status="in_progress")
    usage = Usage(input_tokens=9000, output_tokens=3345, cost_usd=0.0421)
    write_state(name, "ada", AgentState(state="waiting_permission", pid=me, started_at=started,
                                        mode="default", detail="asks: Bash: make test",
                                        turns=2, activity='Bash "make test"',
                                        activity_since=FIXED - 12))
    write_state(name, "bob", AgentState(state="working", pid=me, started_at=started,
                                        current_task=task.id, turns=7, usage=usage,
                                        mode="bypassPermissions", activity='Bash "pytest -q"',
                                        activity_since=FIXED - 65))
    write_state(name, "cy", AgentState(state="idle", pid=me, started_at=started, turns=1,
                                       last_activity=THREE_MINUTES_BEFORE))
    write_state(name, "dee", AgentState(state="exited", detail="shut down", turns=3))
    request = PermissionRequest(request_id="3f2a9c1d-fixed", agent_id=f"ada@{name}",
                                tool_name="Bash", description="run the tests",
                                input={"command": "make test"})
    team.send(LEAD_NAME, request, sender="ada")  # type: ignore[arg-type]
    return team
