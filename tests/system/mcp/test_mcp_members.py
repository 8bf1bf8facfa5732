"""The MCP server's side of outside members: `swarm mcp serve --as NAME` plays a member that was
registered but never started (`swarm team add NAME`, or `Team.add_member`), and a client's
SIGINT/SIGTERM at the end of its session is a normal exit (`swarm status`: exited, not "ended by
signal"). Real `swarm` processes, driven by the official MCP client SDK.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import anyio
import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.agent_fixtures import agent_processes, error_lines
from tests.support.cli_runner import run_swarm
from tests.support.helpers import wait_until
from tests.system.mcp.test_mcp_serve import SWARM, ok, run, served


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "server.log"


def _serve_as_bob_reads_and_sends(team: Team, log: Path) -> str:
    team.send("bob", "please review x.py", summary="review x.py")

    async def scenario() -> str:
        async with served("--team", team.name, "--as", "bob", log=log) as bob:
            inbox = await ok(bob, "ReadInbox")
            await ok(bob, "SendMessage", to=LEAD_NAME, message="x.py looks fine",
                     summary="reviewed")
        return inbox

    return run(scenario)


def test_a_member_registered_with_add_member_but_never_started_can_be_served(log: Path) -> None:
    team = Team.create("alpha")
    team.add_member("bob")  # registered, never started: no pid, no state, no backend
    inbox = _serve_as_bob_reads_and_sends(team, log)
    assert "please review x.py" in inbox
    [message] = Team("alpha").inbox(LEAD_NAME, checked=False).unread()
    assert message.sender == "bob" and message.text == "x.py looks fine"


def test_swarm_team_add_registers_an_outside_member_that_status_does_not_call_dead(
        log: Path) -> None:
    Team.create("alpha")
    added = run_swarm("team", "add", "bob", "--team", "alpha")
    assert added.returncode == 0, added.stderr
    member = Team("alpha").config().member("bob")
    assert member is not None and member.model is None and member.backend is None
    assert member.agent_type == "external"
    status = run_swarm("status", "--team", "alpha", "--json")
    [row] = [m for m in json.loads(status.stdout) if m["name"] == "bob"]
    assert row["state"] not in ("dead", "starting"), row
    # a second add of the same name is one clear line, and nothing changes
    again = run_swarm("team", "add", "bob", "--team", "alpha")
    assert again.returncode != 0 and len(error_lines(again)) == 1
    assert "already a member" in again.stderr
    inbox = _serve_as_bob_reads_and_sends(Team("alpha"), log)
    assert "please review x.py" in inbox
    state = read_state("alpha", "bob")
    assert state is not None and state.state == "exited"
    assert "signal" not in (state.detail or "")


def test_team_add_refuses_the_lead_name_and_a_bad_name() -> None:
    Team.create("alpha")
    for name in (LEAD_NAME, "bad name!"):
        proc = run_swarm("team", "add", name, "--team", "alpha")
        assert proc.returncode != 0 and len(error_lines(proc)) == 1, proc.stderr
    assert [m.name for m in Team("alpha").members()] == [LEAD_NAME]


def test_a_running_served_member_is_still_refused_a_second_server(log: Path) -> None:
    team = Team.create("alpha")
    run_swarm("team", "add", "bob", "--team", "alpha")

    async def scenario() -> subprocess.CompletedProcess[str]:
        async with served("--team", "alpha", "--as", "bob", log=log):
            return await anyio.to_thread.run_sync(
                lambda: run_swarm("mcp", "serve", "--team", "alpha", "--as", "bob"))

    proc = run(scenario)
    assert proc.returncode == 2 and "is a running member" in proc.stderr
    assert team.config().member("bob") is not None


def _started(*args: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([SWARM, "mcp", "serve", "--team", "alpha", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=os.environ.copy())
    name = args[-1] if args else LEAD_NAME
    wait_until(lambda: (s := read_state("alpha", name)) and s.pid == proc.pid
               and s.state == "idle", 30, message="the server to register")
    return proc


@pytest.mark.parametrize(("signum", "args"), [
    (signal.SIGINT, ()),  # Claude Code ends its servers with SIGINT
    (signal.SIGTERM, ()),  # Codex with SIGTERM
    (signal.SIGTERM, ("--as", "bob")),  # a member's server too
])
def test_a_clients_sigint_or_sigterm_is_a_normal_exit(signum: int, args: tuple[str, ...]) -> None:
    Team.create("alpha")
    if args:
        run_swarm("team", "add", "bob", "--team", "alpha")
    proc = _started(*args)
    proc.send_signal(signum)
    code = proc.wait(timeout=30)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    proc.stdin.close()
    proc.stdout.close()
    with proc.stderr:
        errors = proc.stderr.read().decode(errors="replace")
    assert code == 0, errors
    name = args[-1] if args else LEAD_NAME
    state = read_state("alpha", name)
    assert state is not None and state.state == "exited"
    assert "signal" not in (state.detail or "") and "the MCP client ended" in (state.detail or "")
    if args:  # `swarm status` shows teammates (the lead has its own row only while it runs)
        status = run_swarm("status", "--team", "alpha")
        line = next(x for x in status.stdout.splitlines() if x.split() and x.split()[0] == name)
        assert "signal" not in line and "exited" in line, line


def test_a_member_an_mcp_client_plays_is_never_started_as_a_swarm_agent(
        log: Path, swarm_home: Path) -> None:
    """Messages to it wait in its mailbox (the lead's SendMessage and `send --wake` wake an
    exited teammate by starting its process: this one has none of swarm's), and respawn says
    what starts it instead."""
    team = Team.create("alpha")
    run_swarm("team", "add", "bob", "--team", "alpha")

    async def join_as_carol() -> None:  # joins without `team add`: recorded as external too
        async with served("--team", "alpha", "--as", "carol", log=log) as carol:
            await ok(carol, "TeamStatus")

    run(join_as_carol)
    carol = team.config().member("carol")
    assert carol is not None and carol.agent_type == "external" and carol.model is None
    for name in ("bob", "carol"):
        sent = run_swarm("send", name, "are you there?", "--wake", "--team", "alpha")
        assert sent.returncode == 0, sent.stderr
        respawned = run_swarm("respawn", name, "--team", "alpha")
        assert respawned.returncode != 0 and len(error_lines(respawned)) == 1, respawned.stderr
        assert f"swarm mcp serve --team alpha --as {name}" in respawned.stderr

    async def lead_sends() -> str:
        async with served("--team", "alpha", log=log) as lead:
            return await ok(lead, "SendMessage", to="bob", message="and now?", summary="now")

    run(lead_sends)
    assert agent_processes(swarm_home) == []
    assert [m.text for m in Team("alpha").inbox("bob", checked=False).unread()] == ["are you there?", "and now?"]
    for name in ("bob", "carol"):
        state = read_state("alpha", name)
        assert state is not None and state.state == "exited"
