"""One team of four kinds: the real Claude Code, Codex and Gemini CLI as teammates
beside a shell teammate, each against its own fake model server on loopback, finish a task list
together through swarm's mailboxes and task list. Nothing reads a screen: `status --json` and
the lead's mailbox say what happened."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.agents.test_claude_code import TEAM, lead_messages, ok
from tests.support.agent_clis import cli_home, cli_path
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_responses import FakeResponses
from tests.support.helpers import wait_until
from tests.support.hub_client import hubs, registered_hashes, serve_children, tokens_in_files

# Each CLI names swarm's MCP tools its own way.
CLAUDE, CODEX, GEMINI = "mcp__swarm__", "mcp__swarm/", "mcp_swarm_"


class Servers:
    def __init__(self, claude: FakeAnthropic, codex: FakeResponses, gemini: FakeGemini) -> None:
        self.claude, self.codex, self.gemini = claude, codex, gemini


@pytest.fixture
def servers(tmp_path: Path, fake_api: FakeAnthropic,
            monkeypatch: pytest.MonkeyPatch) -> Iterator[Servers]:
    """The three CLIs on PATH, one private HOME holding each one's settings, three fakes."""
    exes = [cli_path(name) for name in ("claude", "codex", "gemini")]
    home = cli_home(tmp_path, "mixed")
    with FakeResponses() as codex, FakeGemini() as gemini:
        (home / ".codex").mkdir()
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-fake"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
            f'name = "fake"\nbase_url = "{codex.api_url}"\nwire_api = "responses"\n'
            'env_key = "OPENAI_API_KEY"\n')
        (home / ".gemini").mkdir()
        (home / ".gemini" / "settings.json").write_text(json.dumps(
            {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
        path = os.pathsep.join(str(exe.parent) for exe in exes)
        monkeypatch.setenv("PATH", f"{path}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("CODEX_HOME", raising=False)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("GEMINI_API_KEY", "test-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", gemini.base_url)
        monkeypatch.setenv("SWARM_TEAM", TEAM)
        ok("team", "create", TEAM)
        yield Servers(fake_api, codex, gemini)
        for member in Team(TEAM).config().members:  # whatever the test left running ends
            state = read_state(TEAM, member.name)
            if (state is not None and state.pid and state.pid != os.getpid()
                    and psutil.pid_exists(state.pid)):
                with contextlib.suppress(psutil.NoSuchProcess):
                    agent = psutil.Process(state.pid)
                    for proc in [*agent.children(recursive=True), agent]:
                        with contextlib.suppress(psutil.NoSuchProcess):
                            proc.kill()


def script_task(server: FakeAnthropic | FakeResponses | FakeGemini, prefix: str, task: str,
                who: str) -> None:
    """Its model completes task `task` with swarm's tools and tells the lead."""
    server.push_tool_use(f"{prefix}TaskUpdate", {"task_id": task, "status": "completed",
                                                 "result": f"{who} did {task}"})
    server.push_tool_use(f"{prefix}SendMessage", {"to": "team-lead", "message": f"{task} done",
                                                  "summary": "done"})
    server.push_text(f"Finished task {task}.")


def test_claude_code_codex_gemini_and_a_shell_teammate_finish_a_task_list(
        servers: Servers) -> None:
    script_task(servers.claude, CLAUDE, "1", "cc")
    script_task(servers.codex, CODEX, "2", "cx")
    script_task(servers.gemini, GEMINI, "3", "gm")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden")
    ok("spawn", "gm", "--agent", "gemini", "--model", "gemini-2.5-flash", "--backend", "hidden")
    ok("spawn", "sh", "--model", "shell", "--allow", "Bash(echo:*)", "--backend", "hidden")
    names = ("cc", "cx", "gm", "sh")
    wait_until(lambda: all((s := read_state(TEAM, n)) is not None and s.state == "idle"
                           for n in names), 120, message="four teammates up and idle")
    # Their team tools: the team's one MCP server on this host, no `mcp serve` child each.
    assert len(hubs()) == 1
    for name in ("cc", "cx", "gm"):
        state = read_state(TEAM, name)
        assert state is not None and state.pid and serve_children(state.pid) == [], name

    # The lead hands each one its task: the assignment wakes it (no polling model).
    for subject, owner in (("review", "cc"), ("refactor", "cx"), ("docs", "gm")):
        ok("tasks", "add", subject, "--owner", owner)
    ok("tasks", "add", "build", "--owner", "sh", "--description", "$ echo built")
    wait_until(lambda: all(t.status == "completed" for t in Team(TEAM).tasks.list()), 180,
               message="the four teammates complete the task list")
    tasks = {t.id: t for t in Team(TEAM).tasks.list()}
    assert [(tasks[i].owner, tasks[i].result) for i in ("1", "2", "3")] == [
        ("cc", "cc did 1"), ("cx", "cx did 2"), ("gm", "gm did 3")]
    assert tasks["4"].owner == "sh" and "built" in (tasks["4"].result or "")
    def told() -> set[tuple[str, str]]:
        return {(m.sender, m.text) for m in Team(TEAM).inbox("team-lead", checked=False).messages(
            include_archive=True)}
    wait_until(lambda: {("cc", "1 done"), ("cx", "2 done"), ("gm", "3 done")} <= told(), 60,
               message="each CLI teammate tells the lead through swarm's SendMessage")

    # Each reports idle with the task it completed; status shows each one's turns and tokens.
    def finished() -> set[tuple[str, str]]:
        return {(n["sender"], n.get("completed_task_id") or "")
                for n in lead_messages("idle_notification")}
    wait_until(lambda: {("cc", "1"), ("cx", "2"), ("gm", "3"), ("sh", "4")} <= finished(), 60)
    rows = {r["name"]: r for r in json.loads(ok("status", "--json"))}
    for name in ("cc", "cx", "gm"):
        assert rows[name]["state"] == "idle" and rows[name]["turns"] >= 1, rows[name]
        assert rows[name]["tokens"] > 0, rows[name]
    assert lead_messages("permission_request") == []  # swarm's own tools are never asked
    # The members' tokens reached their CLIs over pipes: no CLI wrote one into a file (its
    # sessions, logs, settings), nor did swarm.
    hashes = registered_hashes(TEAM)
    assert len(hashes) == 3
    assert tokens_in_files(Path(os.environ["HOME"]).parent, hashes) == []
