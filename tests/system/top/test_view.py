"""What `swarm top` shows, without its screen: ops.top's view of a team on both stores (groups,
each request's real input, the feed reading only on a change), and `swarm top --once`/`--json`
through the real CLI."""

from __future__ import annotations

import json
import threading
import time

import pytest

from swarm.core.records.protocol import PermissionRequest
from swarm.core.team.team import Team
from swarm.ops.top import Feed, TeamView, snapshot
from tests.support.agent_fixtures import Crew
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until
from tests.support.top_support import CLI_KIND, fixed_team


def test_members_are_grouped_by_what_they_need_with_each_request_s_real_input(
        store: str) -> None:
    view = snapshot(fixed_team())
    assert [(m.name, m.group) for m in view.members] == [
        ("ada", "needs"), ("bob", "working"), ("cy", "idle"), ("dee", "gone")]
    kinds = {m.name: m.kind for m in view.members}
    assert kinds == {"ada": "shell", "bob": "sonnet", "cy": CLI_KIND, "dee": "haiku"}
    bob = view.member("bob")
    assert bob is not None and bob.task_subject == "fix the parser" and bob.tokens == 12345
    (request,) = view.requests
    assert (request.sender, request.tool, request.input, request.command, request.mode) == (
        "ada", "Bash", {"command": "make test"}, "make test", "default")
    assert request.what == "Bash: make test" and request.description == "run the tests"
    assert (view.tasks_done, view.tasks_total, view.lead_state) == (0, 1, None)
    assert view.busy == ["ada", "bob"]  # not idle: their state writes are watched


def test_a_member_with_a_request_waiting_is_in_needs_you_whatever_its_state_says() -> None:
    team = fixed_team()
    team.send("team-lead", PermissionRequest(agent_id="cy@alpha", tool_name="Bash",  # type: ignore[arg-type]
                                             input={"command": "rm x"}), sender="cy")
    view = snapshot(team)
    assert [m.name for m in view.members if m.group == "needs"] == ["ada", "cy"]
    assert [r.command for r in view.requests] == ["make test", "rm x"]


def test_once_prints_the_grouped_view_and_json_every_member_and_request() -> None:
    fixed_team()
    once = run_swarm("top", "--team", "alpha", "--once")
    assert once.returncode == 0, once.stderr
    lines = once.stdout.splitlines()
    assert lines[0].startswith("team alpha · lead a person · tasks 0/1 done")
    assert "1 waiting for you" in lines[0]
    headings = [ln for ln in lines if not ln.startswith(" ") and "(" in ln and ")" in ln
                and ln.split(" (")[0] in ("Needs you", "Working", "Idle", "Exited / Dead")]
    assert headings == ["Needs you (1)", "Working (1)", "Idle (1)", "Exited / Dead (1)"]
    assert any("ada (default mode) asks: Bash: make test" in ln for ln in lines)
    data = json.loads(run_swarm("top", "--team", "alpha", "--json").stdout)
    assert [m["name"] for m in data["members"]] == ["ada", "bob", "cy", "dee"]
    assert data["requests"][0]["tool"] == "Bash"
    assert data["requests"][0]["command"] == "make test"
    assert data["requests"][0]["input"] == {"command": "make test"}


def test_team_data_is_shown_escaped_in_the_text_view() -> None:
    team = fixed_team()
    evil = "A\x1b]0;PWNED\x07B\x1b[2JC\u202eD"
    team.tasks.update("1", subject=evil)
    team.send("team-lead", PermissionRequest(agent_id="cy@alpha", tool_name="Bash",  # type: ignore[arg-type]
                                             input={"command": evil}), sender="cy")
    out = run_swarm("top", "--team", "alpha", "--once", env={"COLUMNS": "300"}).stdout
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\x1b]0;PWNED" in out and "\\u202e" in out


def test_top_without_a_terminal_says_so_in_one_line() -> None:
    fixed_team()
    proc = run_swarm("top", "--team", "alpha")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "swarm: error: swarm top draws on a terminal: use `swarm top --once` or "
        "`swarm top --json` for a pipe or a file"]


def test_the_feed_reads_once_while_idle_and_at_once_on_a_request(
        store: str, crew: Crew, monkeypatch: pytest.MonkeyPatch) -> None:
    """On both stores: after its first read, heartbeats of idle teammates wake no read; a
    request is read at once (well inside the 200 ms goal, bounded here at 5 s)."""
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.5")  # more heartbeats, in less time
    crew.spawn("w1")
    crew.spawn("w2")
    crew.wait_state("w1", "idle")
    crew.wait_state("w2", "idle")
    views: list[TeamView] = []
    feed = Feed(Team(crew.team.name), lambda v: views.append(v) is None)
    thread = threading.Thread(target=feed.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: views and views[-1].busy == [], 10, message="a quiet view")
        reads = feed.reads
        beat = crew.state("w1").heartbeat  # type: ignore[union-attr]
        # Five heartbeats of each (2.5 s: more than a 2 s pid check of the feed's too).
        wait_until(lambda: crew.state("w1").heartbeat >= beat + 2.5, 15,  # type: ignore[union-attr]
                   message="five heartbeats")
        assert feed.reads == reads, "the team was read while idle"
        crew.spawn("w3", prompt="$ echo x > f.txt", permission_mode="default")
        wait_until(lambda: any(r.command == "echo x > f.txt" for r in views[-1].requests), 15,
                   message="the request in the view")
    finally:
        feed.stop()
        thread.join(5)
    assert not thread.is_alive()


def test_the_feed_stops_when_its_reader_says_so() -> None:
    fixed_team()
    seen: list[float] = []
    feed = Feed(Team("alpha"), lambda v: seen.append(time.monotonic()) is None and False)
    thread = threading.Thread(target=feed.run, daemon=True)
    thread.start()
    thread.join(5)
    assert not thread.is_alive() and len(seen) == 1


def test_a_member_added_without_a_prompt_shows_at_once(store: str) -> None:
    """It writes no mail and no task: only the team file changes (watched on both stores)."""
    team = fixed_team()
    views: list[TeamView] = []
    feed = Feed(Team(team.name), lambda v: views.append(v) is None)
    thread = threading.Thread(target=feed.run, daemon=True)
    thread.start()
    try:
        wait_until(lambda: views, 10, message="the first view")
        team.add_member("eve", model="shell", backend="hidden")
        wait_until(lambda: views[-1].member("eve") is not None, 5, message="eve in the view")
    finally:
        feed.stop()
        thread.join(5)
