"""Steps every agent CLI teammate's main test takes the same way (Claude Code, Codex, Gemini
CLI): killed then respawned into the same CLI session, and a negotiated shutdown that ends the
CLI. Each test passes what differs: how its CLI's processes are found, how its fake model is
asked, how its model names swarm's SendMessage."""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from typing import Any

import psutil

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.cli_runner import run_swarm
from tests.support.fake_anthropic import Scripted, reply
from tests.support.helpers import process_gone, wait_until

Processes = Callable[[int], list[psutil.Process]]
REQUEST_ID = re.compile(r'request_id[\\"]*:\s*[\\"]*([0-9a-f-]{8,})')


def _ok(*args: str, timeout: float = 60.0) -> None:
    proc = run_swarm(*args, timeout=timeout)
    assert proc.returncode == 0, f"swarm {' '.join(args)}: {proc.stderr}"


def gone(procs: list[psutil.Process]) -> bool:
    return all(process_gone(p) for p in procs)


def kill_then_resume(team: str, name: str, api: Any, processes: Processes,
                     requests_with: Callable[[Any, str], list[dict[str, Any]]],
                     earlier: str) -> None:
    """`swarm kill` ends the agent and its CLI; `swarm respawn` resumes the same CLI session,
    whose next request still holds `earlier` (a message of a turn before the kill)."""
    state = read_state(team, name)
    assert state is not None and state.pid is not None and processes(state.pid)
    agent_pid, session = state.pid, state.cli_session
    assert session
    old = processes(agent_pid)
    _ok("kill", name)
    wait_until(lambda: process_gone(agent_pid), 20)
    wait_until(lambda: gone(old), 20, message=f"{name}'s CLI ended with it")
    _ok("respawn", name)
    wait_until(lambda: (s := read_state(team, name)) is not None and s.pid != agent_pid
               and s.state == "idle", 60)
    api.push_text("Back again.")
    _ok("send", name, "are you back?")
    resumed = wait_until(lambda: requests_with(api, "are you back?"), 60)[0]
    assert earlier in json.dumps(resumed)
    assert read_state(team, name).cli_session == session  # type: ignore[union-attr]


def approve_shutdown(send_tool: str,
                     text_of: Callable[[dict[str, Any]], str] = json.dumps,
                     ) -> Callable[[dict[str, Any]], Scripted]:
    """A scripted reply approving the newest shutdown request in the request through swarm's
    SendMessage (named `send_tool` by that CLI)."""
    def approve(body: dict[str, Any]) -> Scripted:
        found = REQUEST_ID.findall(text_of(body))
        assert found, text_of(body)[-2000:]
        return reply(tool_uses=[(send_tool, {"to": "team-lead", "message": {
            "type": "shutdown_response", "request_id": found[-1], "approve": True}})])
    return approve


def shutdown_ends_it(team: str, name: str, api: Any, processes: Processes,
                     send_tool: str, text_of: Callable[[dict[str, Any]], str] = json.dumps,
                     ) -> None:
    """`swarm shutdown` is a turn its model approves; then the agent and its CLI exit."""
    api.push(approve_shutdown(send_tool, text_of))
    api.push_text("Bye.")
    state = read_state(team, name)
    assert state is not None and state.pid is not None
    running = processes(state.pid)
    _ok("shutdown", name, "--timeout", "60", timeout=90)
    wait_until(lambda: read_state(team, name).state == "exited", 30)  # type: ignore[union-attr]
    wait_until(lambda: gone(running), 20, message=f"{name}'s CLI ended")


def notes(team: str, kind: str) -> list[dict[str, Any]]:
    """The lead's structured messages of one kind, with their senders."""
    found = []
    for message in Team(team).inbox("team-lead", checked=False).messages(include_archive=True):
        structured = message.structured()
        if structured is not None and structured.type == kind:
            found.append({"sender": message.sender, **json.loads(message.text)})
    return found


def script_first_task(api: Any, tool: Callable[[str], str]) -> None:
    """Task 1 on the list, and the model's script for it: list the tasks, complete task 1,
    tell the lead, end the turn (`tool(NAME)`: how this CLI's model names swarm's tool)."""
    _ok("tasks", "add", "write hello", "--description", "say hello")
    api.push_tool_use(tool("TaskList"), {})
    api.push_tool_use(tool("TaskUpdate"), {"task_id": "1", "status": "completed",
                                           "result": "hello written"})
    api.push_tool_use(tool("SendMessage"), {"to": "team-lead", "message": "task 1 done",
                                            "summary": "done"})
    api.push_text("All done with task 1.")


def first_task_done(team: str, name: str, timeout: float = 90) -> None:
    """Task 1 completed by `name` through swarm's tools, the lead told, its idle note sent."""
    wait_until(lambda: Team(team).tasks.get("1").status == "completed", timeout,
               message=f"task 1 completed by {name}")
    task = Team(team).tasks.get("1")
    assert task.owner == name and task.result == "hello written"
    wait_until(lambda: any(m.text == "task 1 done" and m.sender == name for m in
                           Team(team).inbox("team-lead", checked=False).messages(include_archive=True)), 30)
    idle = wait_until(lambda: notes(team, "idle_notification"), 30)
    assert idle[-1]["sender"] == name and idle[-1]["completed_task_id"] == "1"
    assert idle[-1]["summary"] == "All done with task 1."


def answers_a_message(team: str, name: str, api: Any,
                      requests_with: Callable[[Any, str], list[dict[str, Any]]]) -> None:
    """A message to the idle teammate is a new turn of the same CLI session."""
    api.push_text("Four.")
    _ok("send", name, "what is 2+2?")
    wait_until(lambda: len([n for n in notes(team, "idle_notification")
                            if n["sender"] == name]) >= 2, 60)
    assert notes(team, "idle_notification")[-1]["summary"] == "Four."
    asked = requests_with(api, "what is 2+2?")[0]
    assert "hello written" in json.dumps(asked)  # the earlier turn is there
    assert Team(team).inbox(name, checked=False).unread() == []


def end_members(team: str, processes: Processes) -> None:
    """A fixture's teardown: whatever a test left running ends (the agents and their CLIs)."""
    for member in Team(team).config().members:
        state = read_state(team, member.name)
        if (state is not None and state.pid and state.pid != os.getpid()
                and psutil.pid_exists(state.pid)):
            for proc in [*processes(state.pid), psutil.Process(state.pid)]:
                with contextlib.suppress(psutil.NoSuchProcess):
                    proc.kill()
