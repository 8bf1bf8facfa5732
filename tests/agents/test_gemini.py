"""A teammate that is Gemini CLI: the real `gemini --acp`, driven by
`swarm agent` over the Agent Client Protocol (JSON-RPC on its stdio), pointed at the fake Gemini
API, with swarm's MCP server (`swarm mcp serve --as NAME`) as its team tools and its permission
requests decided by swarm (and the lead)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.agents.test_claude_code import TEAM, lead_messages, ok
from tests.support.agent_clis import cli_home, cli_path
from tests.support.cli_runner import run_swarm
from tests.support.cli_teammate_steps import (
    answers_a_message,
    end_members,
    first_task_done,
    kill_then_resume,
    script_first_task,
    shutdown_ends_it,
)
from tests.support.fake_gemini import FakeGemini
from tests.support.helpers import child_named, children_with, process_gone, wait_until

MODEL = "gemini-2.5-flash"  # a named model: `auto` would ask the fake to route first


def gemini_processes(pid: int, recursive: bool = True) -> list[psutil.Process]:
    return children_with(pid, lambda argv: "gemini" in " ".join(argv[:3]), recursive=recursive)


@pytest.fixture
def gemini_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    """The real `gemini` on PATH, a private HOME that picks API-key auth, the fake API."""
    exe = cli_path("gemini")
    home = cli_home(tmp_path, "gemini")
    (home / ".gemini").mkdir(exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(json.dumps(
        {"security": {"auth": {"selectedType": "gemini-api-key"}}}))
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("SWARM_TEAM", TEAM)
    with FakeGemini() as api:
        monkeypatch.setenv("GEMINI_API_KEY", "test-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", api.base_url)
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        ok("team", "create", TEAM)
        yield api
        end_members(TEAM, gemini_processes)


def requests_with(api: FakeGemini, text: str) -> list[dict[str, Any]]:
    return [b for b in api.generate_requests() if text in json.dumps(b.get("contents"))]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [d.get("name", "") for t in body.get("tools") or []
            for d in t.get("functionDeclarations") or []]


def answered(name: str, count: int = 1) -> bool:
    return len([m for m in lead_messages("idle_notification") if m["sender"] == name]) >= count


def prompts(name: str = "gm") -> list[dict[str, Any]]:
    """What Gemini CLI asked and swarm answered, from the member's transcript."""
    from swarm.core.store import paths
    from swarm.core.team.transcript import Transcript

    return [e for e in Transcript(paths.agent_transcript(TEAM, name)).entries()
            if e.get("event") == "permission_prompt"]


def spawn(*extra: str) -> str:
    return ok("spawn", "gm", "--agent", "gemini", "--model", MODEL, "--backend", "hidden",
              *extra)


def test_a_gemini_teammate_works_through_swarms_tools(
        gemini_env: FakeGemini, tmp_path: Path) -> None:
    api = gemini_env
    script_first_task(api, lambda n: f"mcp_swarm_{n}")
    spawned = spawn("--json")
    assert json.loads(spawned)["agent"] == "gemini"
    assert Team(TEAM).member("gm").agent == "gemini"

    first_task_done(TEAM, "gm", 120)
    first = api.generate_requests()[0]
    names = tool_names(first)
    assert {"mcp_swarm_SendMessage", "mcp_swarm_TaskUpdate", "mcp_swarm_TaskList"} <= set(names)
    assert "<task-assignment" in json.dumps(first["contents"])
    # swarm's part of the prompt (not the MCP server's instructions: the team's server on the
    # host names no member in them)
    assert "You are `gm`" in json.dumps(first["contents"])
    assert lead_messages("permission_request") == []  # swarm's own tools are never asked
    # One node process: Gemini CLI's launcher, which would start a second only to raise its
    # heap limit (about a second of CPU and a process more per teammate), is skipped.
    state = read_state(TEAM, "gm")
    assert state is not None and state.pid is not None
    assert len(gemini_processes(state.pid)) == 1

    # A message to the idle teammate is a new turn of the same session.
    answers_a_message(TEAM, "gm", api, requests_with)

    # Its turns and tokens from Gemini CLI's own prompt result.
    rows = {r["name"]: r for r in json.loads(ok("status", "--json"))}
    assert rows["gm"]["state"] == "idle"
    assert rows["gm"]["turns"] == 2 and rows["gm"]["tokens"] >= 2 * (12 + 7)
    state = read_state(TEAM, "gm")
    assert state is not None and state.turns == 2 and state.usage.output_tokens >= 2 * 7

    # A shell command reaches the lead with the real command; a denial stops it.
    out = tmp_path / "never.txt"
    api.push_tool_use("run_shell_command", {"command": f"echo secret > {out}",
                                            "description": "write"})
    api.push_text("It was denied.")
    ok("send", "gm", "please write the file")
    asks = wait_until(lambda: lead_messages("permission_request"), 60)
    assert asks[0]["tool_name"] == "Bash"
    assert asks[0]["input"]["command"] == f"echo secret > {out}"
    ok("permissions", "deny", asks[0]["request_id"][:8], "--reason", "not that file")
    wait_until(lambda: answered("gm", 3), 60)
    assert not out.exists()
    assert [(p["tool"], p["decision"]) for p in prompts()] == [("Bash", "deny")]
    assert "not that file" in prompts()[0]["reason"]
    assert requests_with(api, "canceled"), "the model saw the refusal"

    # Killed, then respawned: the same Gemini session, loaded again.
    kill_then_resume(TEAM, "gm", api, gemini_processes, requests_with, "what is 2+2?")

    # Shutdown is negotiated: the model approves through swarm's SendMessage, then it exits.
    wait_until(lambda: answered("gm", 4), 60)
    shutdown_ends_it(TEAM, "gm", api, gemini_processes, "mcp_swarm_SendMessage")


def test_interrupt_ends_the_turn_and_an_allow_rule_answers_its_question(
        gemini_env: FakeGemini) -> None:
    """`--allow 'Bash(tail:*)'` answers Gemini CLI's permission request without the lead;
    `swarm interrupt` ends the turn (the command too), the process lives on for the next."""
    api = gemini_env
    api.push_tool_use("run_shell_command", {"command": "tail -f /dev/null",
                                            "description": "wait"})
    spawn("--allow", "Bash(tail:*)", "--prompt", "wait a while")
    pid = wait_until(lambda: (s := read_state(TEAM, "gm")) is not None and s.pid, 30)
    sleeper = child_named(pid, "tail", 90, message="the command runs (allowed, not asked)")
    assert lead_messages("permission_request") == []
    assert [(p["tool"], p["decision"]) for p in prompts()] == [("Bash", "allow")]
    gemini = gemini_processes(pid, recursive=False)
    ok("interrupt", "gm")
    idle = wait_until(lambda: lead_messages("idle_notification"), 30)
    assert idle[-1]["idle_reason"] == "interrupted"
    wait_until(lambda: process_gone(sleeper), 20)
    assert gemini and gemini_processes(pid, recursive=False) == gemini  # the same one goes on
    api.push_text("Still here.")
    ok("send", "gm", "still there?")
    wait_until(lambda: answered("gm", 2), 60)
    assert lead_messages("idle_notification")[-1]["summary"] == "Still here."


def test_accept_edits_writes_in_its_directory_without_the_lead(
        gemini_env: FakeGemini, tmp_path: Path) -> None:
    """swarm's acceptEdits decides Gemini CLI's edit request (Gemini runs in its default)."""
    work = tmp_path / "work"
    work.mkdir()
    out = work / "made.txt"
    gemini_env.push_tool_use("write_file", {"file_path": str(out), "content": "made\n"})
    gemini_env.push_text("Made it.")
    spawn("--permission-mode", "acceptEdits", "--cwd", str(work), "--prompt", "make the file")
    wait_until(lambda: answered("gm"), 90)
    assert out.read_text() == "made\n"
    assert lead_messages("permission_request") == []
    assert [(p["tool"], p["decision"]) for p in prompts()] == [("Write", "allow")]


def test_a_definition_and_the_leads_spawnteammate_make_a_gemini_teammate(
        gemini_env: FakeGemini, swarm_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm.mcp_server.host import ServedHost, ServeOptions

    agents = swarm_home / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "coder.md").write_text(f"---\nname: coder\ndescription: codes\nagent: gemini\n"
                                     f"model: {MODEL}\n---\nYou write code.\n")
    gemini_env.push_text("Ready to code.")
    ok("spawn", "gm", "--agent-type", "coder", "--backend", "hidden", "--prompt", "hello")
    assert Team(TEAM).member("gm").agent == "gemini"
    wait_until(lambda: answered("gm"), 90, message="the coder answered")
    assert lead_messages("idle_notification")[-1]["summary"] == "Ready to code."

    monkeypatch.setenv("SWARM_BACKEND", "hidden")
    host = ServedHost(ServeOptions(team=TEAM))
    host.start()
    try:
        gemini_env.push_text("Hello, lead.")
        result = host.call("SpawnTeammate", {"name": "gx", "prompt": "say hello",
                                             "agent": "gemini", "model": MODEL})
        assert not result.is_error, result.content
        assert Team(TEAM).member("gx").agent == "gemini"
        wait_until(lambda: answered("gx"), 90, message="the spawned Gemini CLI answered")
        assert "say hello" in json.dumps(gemini_env.generate_requests()[-1]["contents"])
    finally:
        host.close("test over")


def test_an_interrupt_ends_a_wait_for_the_lead(gemini_env: FakeGemini, tmp_path: Path) -> None:
    """While its question waits for the lead the teammate shows it; `swarm interrupt` ends the
    wait (the question withdrawn, the command never run) and the turn."""
    out = tmp_path / "never.txt"
    gemini_env.push_tool_use("run_shell_command", {"command": f"echo x > {out}",
                                                   "description": "write"})
    spawn("--prompt", "write it")
    asks = wait_until(lambda: lead_messages("permission_request"), 90)
    assert asks[0]["input"]["command"] == f"echo x > {out}"
    wait_until(lambda: getattr(read_state(TEAM, "gm"), "state", "") == "waiting_permission", 10)
    ok("interrupt", "gm")
    idle = wait_until(lambda: lead_messages("idle_notification"), 30)
    assert idle[-1]["idle_reason"] == "interrupted"
    assert not out.exists()
    assert run_swarm("permissions", "approve", asks[0]["request_id"][:8]).returncode != 0
    assert [(p["tool"], p["decision"]) for p in prompts()] == [("Bash", "deny")]


def test_a_mode_change_reaches_its_next_question(gemini_env: FakeGemini, tmp_path: Path) -> None:
    """`swarm mode gm acceptEdits` on a default-mode teammate: its next write is not asked."""
    work = tmp_path / "work"
    work.mkdir()
    out = work / "later.txt"
    gemini_env.push_text("Ready.")
    spawn("--cwd", str(work), "--prompt", "get ready")
    wait_until(lambda: answered("gm"), 90)
    ok("mode", "gm", "acceptEdits")
    gemini_env.push_tool_use("write_file", {"file_path": str(out), "content": "later\n"})
    gemini_env.push_text("Written.")
    ok("send", "gm", "write it now")
    wait_until(lambda: answered("gm", 2), 60)
    assert lead_messages("permission_request") == []
    assert out.read_text() == "later\n"
    assert [(p["tool"], p["decision"]) for p in prompts()] == [("Write", "allow")]
    assert getattr(read_state(TEAM, "gm"), "mode", None) == "acceptEdits"


def test_gemini_credentials_reach_its_teammate_not_its_commands(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """spawn passes Gemini CLI's variables to a Gemini teammate's process (its kind's, from the
    registry of teammate kinds), never to another kind's; a Bash command (swarm's or a hook's)
    never sees its key."""
    from swarm.core.records.names import agent_id
    from swarm.core.records.team_config import Member
    from swarm.core.trust.secrets import without_secrets
    from swarm.ops.member.spawner import agent_env

    monkeypatch.setenv("GEMINI_API_KEY", "gk-1")
    monkeypatch.setenv("GOOGLE_API_KEY", "gg-1")
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:1")
    env = agent_env(TEAM, Member(name="gm", agent_id=agent_id("gm", TEAM), agent="gemini"))
    assert env["GEMINI_API_KEY"] == "gk-1" and env["GOOGLE_API_KEY"] == "gg-1"
    own_loop = agent_env(TEAM, Member(name="w", agent_id=agent_id("w", TEAM)))
    assert "GEMINI_API_KEY" not in own_loop and "GOOGLE_API_KEY" not in own_loop
    clean = without_secrets(env)
    assert "GEMINI_API_KEY" not in clean and "GOOGLE_API_KEY" not in clean
    assert clean["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:1"


def test_file_scopes_hold_in_bypass_mode(gemini_env: FakeGemini, tmp_path: Path) -> None:
    """bypassPermissions: Gemini CLI still asks (its default mode) and swarm answers: a write
    outside its task's file scope is refused, one inside is made, a command runs unasked."""
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    ok("tasks", "add", "docs", "--description", "write docs", "--files", "docs/**")
    api = gemini_env
    api.push_tool_use("write_file", {"file_path": str(work / "src.py"), "content": "x = 1\n"})
    api.push_tool_use("write_file", {"file_path": str(work / "docs" / "a.md"), "content": "# A\n"})
    api.push_tool_use("run_shell_command", {"command": f"echo ran > {work / 'docs' / 'ran.txt'}",
                                            "description": "run"})
    api.push_text("Docs written.")
    spawn("--cwd", str(work), "--permission-mode", "bypassPermissions")
    wait_until(lambda: answered("gm"), 90)
    assert not (work / "src.py").exists()
    assert (work / "docs" / "a.md").read_text() == "# A\n"
    assert (work / "docs" / "ran.txt").read_text() == "ran\n"
    decided = [(p["tool"], p["decision"]) for p in prompts()]
    assert decided == [("Write", "deny"), ("Write", "allow"), ("Bash", "allow")]
    assert "scope" in prompts()[0]["reason"]
    assert lead_messages("permission_request") == []


def test_a_gemini_cli_without_credentials_is_a_death_that_says_why(
        gemini_env: FakeGemini, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    spawn("--prompt", "hello")
    state = wait_until(lambda: (s := read_state(TEAM, "gm")) is not None and s.state == "dead"
                       and s, 60, message="the teammate records why it could not start")
    assert "gemini did not start" in (state.detail or "")
    assert "API key" in (state.detail or "")
