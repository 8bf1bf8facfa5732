"""Outside members with the REAL agent CLIs (tests/support/agent_clis.py): Claude Code, Codex and Gemini
CLI, each configured with exactly the text `swarm mcp snippet CLIENT` prints (what
docs/guide/mcp.md shows), run headless (`claude -p`, `codex exec --json`, `gemini -p`) against a
fake model server of our own on loopback, whose scripted model calls swarm's tools.

As lead the CLI creates the team and reads it back (the tool results reach the model); as
member `--as bob` of a member registered with `swarm team add bob` (never started) it reads its
inbox and sends the lead a message. After the client ends, swarm records a normal exit (the
CLIs end their servers with SIGINT or SIGTERM), not "ended by signal".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.names import LEAD_NAME
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.agent_clis import cli_home, cli_path
from tests.support.cli_runner import run_swarm
from tests.support.fake_anthropic import FakeAnthropic, Scripted, reply
from tests.support.fake_gemini import FakeGemini
from tests.support.fake_responses import FakeResponses
from tests.support.helpers import wait_until

VENV_BIN = str(Path(sys.executable).parent)  # where `swarm` is
Plan = list[tuple[str, dict[str, Any]]]


@dataclass
class Client:
    """One CLI: how its model names swarm's tools and hands back their results, and how it is
    configured (from the snippet) and run."""

    name: str
    marker: str  # in a request body only when swarm's tools were offered

    def tool(self, name: str) -> str:
        return {"claude": f"mcp__swarm__{name}", "codex": f"mcp__swarm/{name}",
                "gemini": f"mcp_swarm_{name}"}[self.name]

    def results(self, body: dict[str, Any]) -> list[str]:
        """The tool results the request hands the model, oldest first, as JSON text."""
        if self.name == "claude":
            found = [b for m in body.get("messages", []) if isinstance(m.get("content"), list)
                     for b in m["content"] if b.get("type") == "tool_result"]
        elif self.name == "codex":
            found = [i for i in body.get("input", []) if i.get("type") == "function_call_output"]
        else:
            found = [p["functionResponse"] for c in body.get("contents", [])
                     for p in c.get("parts", []) if "functionResponse" in p]
        return [json.dumps(item) for item in found]


CLIENTS = {"claude": Client("claude", "mcp__swarm__"), "codex": Client("codex", "mcp__swarm"),
           "gemini": Client("gemini", "mcp_swarm_")}


def scripted(client: Client, plan: Plan, seen: list[dict[str, Any]]
             ) -> Callable[[dict[str, Any]], Scripted]:
    """The fake model: once swarm's tools are offered, call each planned tool in turn, then
    end; without them it says so (and the test fails on what did not happen)."""

    def respond(body: dict[str, Any]) -> Scripted:
        if client.marker not in json.dumps(body):
            return reply("swarm's tools were not offered")
        seen.append(body)
        done = len(client.results(body))
        if done < len(plan):
            name, args = plan[done]
            return reply(tool_uses=[(client.tool(name), args)])
        return reply("all done")

    return respond


def run_client(client: Client, tmp_path: Path, team: str, member: str | None, plan: Plan,
               prompt: str, swarm_bin: str = VENV_BIN) -> list[dict[str, Any]]:
    """Configure the CLI from `swarm mcp snippet`, run it headless once, return the model
    requests that offered swarm's tools. `swarm_bin`: where the CLI finds `swarm`."""
    exe = cli_path(client.name)
    home = cli_home(tmp_path, client.name)
    work = tmp_path / "project"
    work.mkdir(exist_ok=True)
    seen: list[dict[str, Any]] = []
    env = {"PATH": os.pathsep.join([str(exe.parent), swarm_bin, "/usr/local/bin", "/usr/bin",
                                    "/bin"]),
           "HOME": str(home), "SWARM_HOME": os.environ["SWARM_HOME"],
           "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
    as_member = ["--as", member] if member else []
    snippet = run_swarm("mcp", "snippet", client.name, "--team", team, *as_member)
    assert snippet.returncode == 0, snippet.stderr
    fake: FakeAnthropic | FakeResponses | FakeGemini
    if client.name == "claude":
        fake = FakeAnthropic()
        env |= {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "sk-test",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
                # A busy machine: swarm mcp serve may start slowly, and `claude -p` sends its
                # first request without a server still connecting unless told to wait.
                "MCP_TIMEOUT": "120000", "MCP_CONNECTION_NONBLOCKING": "0"}
        # the snippet's lines as they are, then the headless run its last line shows
        command = ["bash", "-ec", snippet.stdout + f"\nclaude -p {json.dumps(prompt)}"
                   " --allowedTools mcp__swarm --output-format json\n"]
    elif client.name == "codex":
        fake = FakeResponses()
        env |= {"FAKE_KEY": "sk-test"}
        (home / ".codex").mkdir(exist_ok=True)
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-fake"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
            f'name = "fake"\nbase_url = "{fake.api_url}"\nwire_api = "responses"\n'
            'env_key = "FAKE_KEY"\n\n' + snippet.stdout)
        command = ["codex", "exec", "--json", "--skip-git-repo-check", prompt]
    else:
        fake = FakeGemini()
        env |= {"GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": fake.base_url,
                "GEMINI_CLI_TRUST_WORKSPACE": "true"}
        (home / ".gemini").mkdir(exist_ok=True)
        settings = {"security": {"auth": {"selectedType": "gemini-api-key"}},
                    **json.loads(snippet.stdout)}
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
        command = ["gemini", "-p", prompt, "--output-format", "json", "-m", "gemini-2.5-flash"]
    with fake:
        fake.fallback = scripted(client, plan, seen)
        proc = subprocess.run(command, env=env, cwd=work, capture_output=True, text=True,
                              timeout=240, stdin=subprocess.DEVNULL, check=False)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    return seen


def ended_normally(team: str, name: str) -> str:
    """Once the client has ended its server: the member's recorded end, and its status line."""
    state = wait_until(lambda: (s := read_state(team, name)) and s.state == "exited" and s,
                       30, message=f"{name}'s server to record its end")
    status = run_swarm("status", "--team", team)
    line = next(x for x in status.stdout.splitlines() if x.split() and x.split()[0] == name)
    assert "exited" in line and "signal" not in line, line
    return state.detail or ""


@pytest.mark.parametrize("name", list(CLIENTS))
def test_the_cli_leads_a_team_through_the_readme_snippet(name: str, tmp_path: Path) -> None:
    client = CLIENTS[name]
    plan: Plan = [("TeamCreate", {"team_name": "alpha", "description": "the parser"}),
                  ("TaskCreate", {"subject": "rewrite the lexer", "description": "in lexer.py"}),
                  ("TaskList", {})]
    seen = run_client(client, tmp_path, "alpha", None, plan, "create team alpha")
    team = Team("alpha")
    assert team.exists() and team.config().description == "the parser"
    assert [t.subject for t in team.tasks.list()] == ["rewrite the lexer"]
    results = client.results(seen[-1])
    assert len(results) == 3  # each call's result came back to the model
    assert "created team alpha" in results[0] and "rewrite the lexer" in results[2]
    detail = ended_normally("alpha", LEAD_NAME)
    assert "the MCP client" in detail


@pytest.mark.parametrize("name", list(CLIENTS))
def test_the_cli_plays_a_member_registered_with_team_add(name: str, tmp_path: Path) -> None:
    client = CLIENTS[name]
    team = Team.create("alpha")
    added = run_swarm("team", "add", "bob", "--team", "alpha")
    assert added.returncode == 0, added.stderr
    team.send("bob", "please review x.py", summary="review x.py")
    plan: Plan = [("ReadInbox", {}),
                  ("SendMessage", {"to": LEAD_NAME, "message": "x.py looks fine",
                                   "summary": "reviewed x.py"})]
    seen = run_client(client, tmp_path, "alpha", "bob", plan, "do your work as bob")
    results = client.results(seen[-1])
    assert len(results) == 2 and "please review x.py" in results[0]
    [message] = Team("alpha").inbox(LEAD_NAME, checked=False).unread()
    assert message.sender == "bob" and message.text == "x.py looks fine"
    assert Team("alpha").inbox("bob", checked=False).unread() == []  # handed over once, marked read
    detail = ended_normally("alpha", "bob")
    assert "the MCP client" in detail


def test_claude_code_waits_for_a_server_slow_to_start(tmp_path: Path) -> None:
    """A busy machine: `swarm mcp serve` took 9-12 s to start at load 12, longer than Claude
    Code waits on its own (a few seconds, even with MCP_CONNECTION_NONBLOCKING=0), and `claude
    -p` went on without swarm's tools. The snippet's MCP_CONNECT_TIMEOUT_MS makes it wait: here
    `swarm` on its PATH starts 12 s late."""
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    (slow / "swarm").write_text(f"#!/bin/sh\nsleep 12\nexec {VENV_BIN}/swarm \"$@\"\n")
    (slow / "swarm").chmod(0o755)
    Team.create("alpha")
    assert run_swarm("team", "add", "bob", "--team", "alpha").returncode == 0
    plan: Plan = [("SendMessage", {"to": LEAD_NAME, "message": "here", "summary": "here"})]
    seen = run_client(CLIENTS["claude"], tmp_path, "alpha", "bob", plan, "say you are here",
                      swarm_bin=str(slow))
    assert seen, "claude -p sent its request without swarm's tools"
    [message] = Team("alpha").inbox(LEAD_NAME, checked=False).unread()
    assert message.sender == "bob" and message.text == "here"
