"""The team's MCP server on a host (`swarm mcp hub`) with real teammates: two ACP teammates
(the fake agent of tests/support/fake_acp_agent.py, offline) get their team tools from one hub
and no `mcp serve` child each; a process that sees everything the second teammate's shell can
see cannot act as the first or as the lead; the hub goes away with its teammates and with its
team, and a run file left by a dead hub is replaced."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.core.store import paths
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.runtime.clis import team_server
from tests.support import hub_client as mcp
from tests.support.acp_support import FAKE_KIND, answered, fake_log, fake_team, ok, script
from tests.support.helpers import process_gone, wait_until
from tests.support.hub_client import hubs, serve_children

TEAM = "alpha"
# Anything that could be a token: a run of URL-safe characters, as long as the shortest one.
WORD = re.compile(rb"[A-Za-z0-9_\-]{16,}")


def tree(pid: int) -> list[psutil.Process]:
    try:
        root = psutil.Process(pid)
        return [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def driver(name: str) -> int:
    state = read_state(TEAM, name)
    assert state is not None and state.pid
    return state.pid


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    monkeypatch.setenv("SWARM_MCP_HUB_GRACE", "1")
    env = fake_team(tmp_path, monkeypatch, TEAM)
    seen: list[psutil.Process] = []
    yield env
    for name in ("a", "b"):
        state = read_state(TEAM, name)
        if state is not None and state.pid:
            seen += tree(state.pid)
    for proc in [*seen, *hubs()]:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()


def spawn_two(env: dict[str, str]) -> None:
    script(env, [[{"mcp": "TaskList"}, {"say": "ready"}]] * 2)
    for name in ("a", "b"):
        ok("spawn", name, "--agent", FAKE_KIND, "--backend", "hidden", "-p", "say ready")
    wait_until(lambda: answered(TEAM, "a") and answered(TEAM, "b"), 60)
    calls = fake_log(env, "mcp")
    assert len(calls) >= 2 and not [c for c in calls if c["result"].startswith("error")], calls


def mail() -> dict[str, list[tuple[str, str]]]:
    team = Team(TEAM)
    return {n: [(m.sender, m.text) for m in team.inbox(n, checked=False)
                .messages(include_archive=True)] for n in ("team-lead", "a", "b")}


def what_bs_shell_sees(env: dict[str, str]) -> set[str]:
    """Every word B's shell could read: the environment of B's agent process (its commands'),
    every file under SWARM_HOME (the hub's run file and the hash files too), and the environment
    and command line of every process of the team (this test runs as the same user, or root:
    it reads at least as much as B's shell)."""
    texts: list[bytes] = []
    for path in paths.home().rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                texts.append(path.read_bytes())
    values: set[str] = set()  # whole values of the variables the team's processes have
    processes = [p for name in ("a", "b") for p in tree(driver(name))] + hubs()
    for proc in processes:
        for part in ("environ", "cmdline"):
            with contextlib.suppress(OSError):
                data = Path(f"/proc/{proc.pid}/{part}").read_bytes()
                texts.append(data)
                values |= {v.partition(b"=")[2].decode("utf-8", "replace")
                           for v in data.split(b"\0") if part == "environ"}
    words = {w.decode() for text in texts for w in WORD.findall(text)}
    words |= {v for v in values if v and v.isprintable() and not any(c.isspace() for c in v)}
    return words


def test_a_shell_that_sees_everything_cannot_act_as_another_member_or_the_lead(
        fake: dict[str, str]) -> None:
    ok("tasks", "add", "guarded", "--description", "nobody but its owner")
    spawn_two(fake)
    # One server for the team; no `mcp serve` child in either teammate's tree.
    assert len(hubs()) == 1
    for name in ("a", "b"):
        assert serve_children(driver(name)) == [], name
    assert {e["transports"][0] for e in fake_log(fake, "session/new")} == {"HttpMcpServer"}
    run = team_server.read_run(TEAM)
    assert run is not None and run.pid == hubs()[0].pid
    before, tasks_before = mail(), [(t.id, t.status, t.owner, t.result) for t in Team(TEAM).tasks.list()]

    words = what_bs_shell_sees(fake)
    hashes = {json.loads(p.read_text())["sha256"]
              for p in paths.mcp_hub_members(TEAM).glob("*.json")}
    assert len(hashes) == 2 and hashes <= words  # it read the hub's files too
    tried = 0
    for word in sorted(words | {"", "made-up", "Bearer"}):
        opened = mcp.initialize(run.url, word)
        assert opened.status == 401 and opened.session is None, word
        for tool, args in (("SendMessage", {"to": "team-lead", "message": "as a",
                                            "summary": "forged"}),
                           ("TaskUpdate", {"task_id": "1", "status": "completed"})):
            assert mcp.call(run.url, word, None, tool, args).status == 401
        tried += 1
    assert mcp.initialize(run.url, None).status == 401  # no token at all
    assert tried == len(words | {"", "made-up", "Bearer"})
    assert mail() == before
    assert [(t.id, t.status, t.owner, t.result) for t in Team(TEAM).tasks.list()] == tasks_before


def test_the_hub_ends_when_its_teammates_are_killed(fake: dict[str, str]) -> None:
    spawn_two(fake)
    hub = wait_until(hubs, 10)[0]
    for name in ("a", "b"):
        os.kill(driver(name), signal.SIGKILL)
    wait_until(lambda: process_gone(hub), 30)
    wait_until(lambda: not paths.mcp_hub_run(TEAM).exists(), 10)


def test_the_hub_ends_when_its_team_is_deleted(fake: dict[str, str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_MCP_HUB_GRACE", "600")  # only the team's end can end it
    monkeypatch.setenv("SWARM_TEAM_GONE_GRACE", "1")
    spawn_two(fake)
    hub = wait_until(hubs, 10)[0]
    ok("team", "delete", TEAM, "--force")
    wait_until(lambda: process_gone(hub), 30)


def test_a_run_file_left_by_a_dead_hub_is_replaced(fake: dict[str, str]) -> None:
    dead = psutil.Popen(["true"])
    dead.wait()
    run_file = paths.mcp_hub_run(TEAM)
    run_file.parent.mkdir(parents=True, exist_ok=True)
    run_file.write_text(json.dumps({"pid": dead.pid, "started_at": 1.0, "port": 9}))
    spawn_two(fake)
    run = team_server.read_run(TEAM)
    assert run is not None and run.pid != dead.pid and run.port != 9
    assert [p.pid for p in hubs()] == [run.pid]


def test_an_acp_agent_without_http_keeps_its_own_stdio_server(
        fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_ACP_NO_HTTP", "1")
    script(fake, [[{"mcp": "TaskList"}, {"say": "ready"}]])
    ok("spawn", "a", "--agent", FAKE_KIND, "--backend", "hidden", "-p", "say ready")
    wait_until(lambda: answered(TEAM, "a"), 60)
    assert [e["transports"] for e in fake_log(fake, "session/new")] == [["McpServerStdio"]]
    assert not fake_log(fake, "mcp")[0]["result"].startswith("error")
    assert serve_children(driver("a"))
