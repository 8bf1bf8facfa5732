"""`swarm mcp serve`, driven by the official MCP client SDK (`stdio_client` +
`ClientSession`) against the real `swarm mcp serve` executable: the tool lists, a lead that runs
a real `shell` teammate (hidden backend) through two tasks, ReadInbox and WaitForTeam, a member's
server, the mode cap, and the end of the server (stdin closed: clean exit, the orphan rule).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.store.liveness import is_alive
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.mcp_server.host import ServedHost, ServeOptions
from tests.support.agent_fixtures import agent_processes, error_lines, stop_tree
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until

if TYPE_CHECKING:
    from mcp import ClientSession

SWARM = str(Path(sys.executable).with_name("swarm"))
T = TypeVar("T")
LEAD_TOOLS = {"TeamCreate", "TeamDelete", "SpawnTeammate", "SendMessage", "ReadInbox", "TaskCreate",
              "TaskList", "TaskGet", "TaskUpdate", "TeamStatus", "AnswerPermission",
              "AnswerPlan", "WaitForTeam"}
MEMBER_TOOLS = {"SendMessage", "ReadInbox", "TaskCreate", "TaskList", "TaskGet", "TaskUpdate",
                "TeamStatus", "WaitForTeam"}


@asynccontextmanager
async def served(*args: str, log: Path, env: dict[str, str] | None = None
                 ) -> AsyncIterator[ClientSession]:
    """A `swarm mcp serve` subprocess and an initialized client session on it."""
    # Imported here, not at the top: the SDK takes a second of CPU to import, and every xdist
    # worker imports this module to collect it.
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    passed = {k: v for k, v in os.environ.items() if k.startswith("SWARM_")}
    params = StdioServerParameters(command=SWARM, args=["mcp", "serve", *args],
                                   env={**passed, **(env or {})}, cwd=str(log.parent))
    with log.open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


def run(scenario: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(scenario)


async def call(session: ClientSession, tool: str, /, **args: Any) -> tuple[str, bool]:
    result = await session.call_tool(tool, args)
    text = "".join(getattr(block, "text", "") for block in result.content)
    return text, bool(result.is_error)


async def ok(session: ClientSession, tool: str, /, **args: Any) -> str:
    text, error = await call(session, tool, **args)
    assert not error, f"{tool} failed: {text}"
    return text


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "server.log"


def test_the_tool_lists_are_the_definitions_swarm_lead_and_teammates_use(log: Path) -> None:
    Team.create("alpha")
    expected = {name: tool for name, tool in ServedHost(ServeOptions(team="alpha")).tools.items()}

    async def scenario() -> tuple[dict[str, Any], set[str]]:
        async with served("--team", "alpha", log=log) as lead:
            tools = {t.name: t for t in (await lead.list_tools()).tools}
        async with served("--team", "alpha", "--as", "bob", log=log) as member:
            member_tools = {t.name for t in (await member.list_tools()).tools}
        return tools, member_tools

    tools, member_tools = run(scenario)
    assert set(tools) == LEAD_TOOLS and member_tools == MEMBER_TOOLS
    for name, tool in tools.items():  # one source: the definitions' own schemas and texts
        assert tool.input_schema == expected[name].input_schema, name
        assert tool.description == expected[name].description, name
    assert tools["WaitForTeam"].input_schema["properties"]["timeout_s"]["type"] == "number"


def test_a_lead_runs_a_shell_teammate_through_two_tasks_then_leaves_it_to_the_orphan_rule(
        log: Path, tmp_path: Path, swarm_home: Path) -> None:
    reports: list[str] = []
    answered: list[str] = []

    async def scenario() -> tuple[str, int]:
        env = {"SWARM_ORPHAN_GRACE": "1", "SWARM_BACKEND": "hidden"}
        async with served("--team", "crew", log=log, env=env) as lead:
            text, error = await call(lead, "TaskList")
            assert error and "call TeamCreate first" in text
            created = await ok(lead, "TeamCreate", description="two echoes")
            team = re.search(r"created team (\S+);", created)
            assert team is not None
            for word in ("first", "second"):
                await ok(lead, "TaskCreate", subject=f"echo {word}",
                         description=f"$ echo {word}-task-done")
            spawned = await ok(lead, "SpawnTeammate", name="worker", model="shell",
                               prompt="Take the tasks from the task list, one by one.")
            assert "permission mode default, backend hidden" in spawned
            tasks = Team(team.group(1)).tasks
            deadline = time.monotonic() + 60
            while not all(t.status == "completed" for t in tasks.list()):
                assert time.monotonic() < deadline, f"tasks: {tasks.list()}"
                woke = await ok(lead, "WaitForTeam", timeout_s=10)
                assert woke.startswith("woke: ")
                inbox = await ok(lead, "ReadInbox")
                reports.append(inbox)
                for request_id in re.findall(r'<permission-request request_id="([^"]+)"', inbox):
                    answered.append(await ok(lead, "AnswerPermission", request_id=request_id,
                                             approve=True))
            config = Team(team.group(1)).config()
            assert config.lead_pid is not None and is_alive(config.lead_pid,
                                                            config.lead_started_at)
            return team.group(1), config.lead_pid

    name, server_pid = run(scenario)
    joined = "\n".join(reports)
    assert "first-task-done" in joined and "second-task-done" in joined
    assert '<teammate-message from="worker"' in joined and answered
    # stdin closed: the server exited on its own (a kill would say "ended by signal").
    wait_until(lambda: not is_alive(server_pid), 10, message="the server to exit")
    lead_state = read_state(name, LEAD_NAME)
    assert lead_state is not None and lead_state.state == "exited"
    assert lead_state.detail == "the MCP client closed the connection"
    assert Team(name).config().lead_pid == server_pid  # still the record teammates check
    # Its teammate was left running, and leaves by the orphan rule.
    worker = wait_until(lambda: (s := read_state(name, "worker")) and s.state == "exited" and s,
                        20, message="the worker to leave as an orphan")
    assert worker.detail and worker.detail.startswith("lead_gone")
    for proc in agent_processes(swarm_home):
        stop_tree(proc.pid)


def test_read_inbox_returns_a_message_once_and_wait_for_team_wakes_early_or_times_out(
        log: Path) -> None:
    team = Team.create("alpha")
    team.add_member("alice")
    text = 'done: <b>&</b> "quoted"'

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with served("--team", "alpha", log=log) as lead:
            start = time.monotonic()
            out["timeout"] = await ok(lead, "WaitForTeam", timeout_s=0.5)
            out["timeout_s"] = time.monotonic() - start
            out["bad"] = await call(lead, "WaitForTeam", timeout_s=-1)
            out["nan"] = await call(lead, "WaitForTeam", timeout_s="soon")
            async with anyio.create_task_group() as group:
                async def wait() -> None:
                    began = time.monotonic()
                    out["early"] = await ok(lead, "WaitForTeam", timeout_s=60)
                    out["early_s"] = time.monotonic() - began
                group.start_soon(wait)
                sent = await anyio.to_thread.run_sync(lambda: run_swarm(
                    "send", LEAD_NAME, text, "--from", "alice", "--summary", "the <report>",
                    "--team", "alpha"))
                assert sent.returncode == 0, sent.stderr
            out["first"] = await ok(lead, "ReadInbox")
            out["second"] = await ok(lead, "ReadInbox")
        return out

    out = run(scenario)
    assert out["timeout"].startswith("woke: timeout") and out["timeout_s"] >= 0.5
    assert out["bad"][1] and out["bad"][0] == ("Invalid input for WaitForTeam: timeout_s: Input"
                                               " should be greater than or equal to 0")
    assert out["nan"][1] and "timeout_s: Input should be a valid number" in out["nan"][0]
    assert out["early"].startswith("woke: message") and out["early_s"] < 30
    assert "from alice: the &lt;report&gt;" in out["early"] and "ReadInbox" in out["early"]
    rendered = ('<teammate-message from="alice" color="blue" summary="the &lt;report&gt;">'
                "done: &lt;b&gt;&amp;&lt;/b&gt; \"quoted\"</teammate-message>")
    assert rendered in out["first"]
    assert "teammate-message" not in out["second"] and "(no unread messages)" in out["second"]
    assert Team("alpha").inbox(LEAD_NAME, checked=False).unread() == []


def test_a_member_server_speaks_as_its_member_and_answers_nothing(log: Path) -> None:
    team = Team.create("alpha")
    team.add_member("alice")

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with served("--team", "alpha", "--as", "bob", log=log) as bob:
            out["state"] = read_state("alpha", "bob")
            out["sent"] = await ok(bob, "SendMessage", to=LEAD_NAME, message="review done",
                                   summary="review done")
            out["answer"] = await call(bob, "AnswerPermission", request_id="x", approve=True)
            out["shutdown"] = await call(bob, "SendMessage", to="alice",
                                         message={"type": "shutdown_request", "reason": "go"})
            await anyio.to_thread.run_sync(lambda: team.send("bob", "please look at x.py",
                                                             summary="look at x.py"))
            out["woke"] = await ok(bob, "WaitForTeam", timeout_s=30)
            out["inbox"] = await ok(bob, "ReadInbox")
        return out

    out = run(scenario)
    assert out["state"] is not None and out["state"].state == "idle"
    [message] = Team("alpha").inbox(LEAD_NAME, checked=False).unread()
    assert message.sender == "bob" and message.text == "review done"
    text, error = out["answer"]
    assert error and "AnswerPermission is the lead's" in text
    text, error = out["shutdown"]
    assert error and text == "bob may not send shutdown_request: only team-lead sends it"
    assert Team("alpha").inbox("alice", checked=False).unread() == []
    assert out["woke"].startswith("woke: message (1 unread)")
    assert '<teammate-message from="team-lead"' in out["inbox"] and "please look at x.py" in out[
        "inbox"]
    state = read_state("alpha", "bob")
    assert state is not None and state.state == "exited"


def test_the_served_lead_grants_at_most_its_permission_mode(log: Path) -> None:
    Team.create("alpha")

    async def scenario() -> list[tuple[str, bool]]:
        async with served("--team", "alpha", log=log) as lead:
            return [await call(lead, "SpawnTeammate", name="w", prompt="x", model="shell",
                               permission_mode=mode) for mode in ("acceptEdits",
                                                                  "bypassPermissions")] + [
                await call(lead, "AnswerPlan", name="w", approve=True,
                           permission_mode="acceptEdits")]

    for text, error in run(scenario):
        assert error and "is above the lead's own (default): a member grants at most" in text, text
    assert [m.name for m in Team("alpha").members()] == [LEAD_NAME]


def test_bad_tool_input_is_one_error_result_and_an_unknown_field_is_ignored(log: Path) -> None:
    """The served tools validate like an agent's: a missing field or a wrong type is one error
    result naming each problem (the server goes on); an unknown field is ignored."""
    Team.create("alpha")

    async def scenario() -> list[tuple[str, bool]]:
        async with served("--team", "alpha", log=log) as lead:
            return [await call(lead, "TaskCreate", description="no subject"),
                    await call(lead, "TaskCreate", subject=["a", "list"], blocked_by="1"),
                    await call(lead, "TaskCreate", subject="kept", colour="red")]

    missing, wrong, extra = run(scenario)
    assert missing == ("Invalid input for TaskCreate: subject: Field required", True)
    assert wrong == ("Invalid input for TaskCreate: subject: Input should be a valid string;"
                     " blocked_by: Input should be a valid list", True)
    assert not extra[1] and extra[0].startswith("created task #1: kept")
    assert [t.subject for t in Team("alpha").tasks.list()] == ["kept"]


def test_bad_invocations_fail_in_one_line_before_serving(tmp_path: Path) -> None:
    Team.create("alpha")
    cases = [(("--as", "bob"), "--as NAME joins a team"),
             (("--team", "nope", "--as", "bob"), "no team named 'nope'"),
             (("--team", "Bad Name!"), "invalid team name"),
             (("--permission-mode", "yolo"), "Invalid value for '--permission-mode'")]
    for args, expected in cases:
        proc = run_swarm("mcp", "serve", *args, timeout=60)
        assert proc.returncode == 2, (args, proc.stderr)
        [line] = error_lines(proc)
        assert line.startswith("swarm: error: ") and expected in line, line


def test_a_second_lead_for_a_led_team_is_refused(log: Path) -> None:
    Team.create("alpha")

    async def scenario() -> Any:
        async with served("--team", "alpha", log=log):
            return await anyio.to_thread.run_sync(
                lambda: run_swarm("mcp", "serve", "--team", "alpha", timeout=60))

    proc = run(scenario)
    assert proc.returncode == 2
    [line] = error_lines(proc)
    assert "is led by a running lead process" in line


def test_the_server_exits_cleanly_when_stdin_closes_and_on_sighup() -> None:
    Team.create("alpha")

    def started() -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([SWARM, "mcp", "serve", "--team", "alpha"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=os.environ.copy())
        wait_until(lambda: (s := read_state("alpha", LEAD_NAME)) and s.pid == proc.pid
                   and s.state == "idle", 30, message="the server to register as the lead")
        return proc

    proc = started()
    assert proc.stdin is not None
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0, proc.stderr.read() if proc.stderr else ""
    state = read_state("alpha", LEAD_NAME)
    assert state is not None and state.state == "exited"
    assert state.detail == "the MCP client closed the connection"
    assert Team("alpha").config().lead_pid == proc.pid  # kept: the orphan rule's record

    proc = started()
    proc.send_signal(signal.SIGHUP)  # SIGINT/SIGTERM end a session normally (test_mcp_members)
    assert proc.wait(timeout=30) == 128 + signal.SIGHUP
    state = read_state("alpha", LEAD_NAME)
    assert state is not None and state.detail == f"ended by signal {int(signal.SIGHUP)}"
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
