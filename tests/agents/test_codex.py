"""A teammate that is the real Codex CLI: `swarm agent` drives `codex
app-server` over its JSON-RPC interface (threads, turns, approval requests sent to swarm),
pointed at the fake Responses API, with swarm's MCP server (`swarm mcp serve --as NAME`) as its
team tools. No screen is read: everything below comes from the protocol."""

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
from tests.agents.test_claude_code import TEAM, answered, lead_messages, ok, prompts
from tests.support.agent_clis import cli_home, cli_path
from tests.support.cli_teammate_steps import (
    answers_a_message,
    end_members,
    first_task_done,
    gone,
    kill_then_resume,
    script_first_task,
    shutdown_ends_it,
)
from tests.support.fake_responses import FakeResponses
from tests.support.helpers import child_named, children_with, wait_until


def tool(name: str) -> str:
    """How the fake model names swarm's tool NAME: Codex offers an MCP server's tools in a
    namespace (tests/support/fake_responses.py)."""
    return f"mcp__swarm/{name}"


@pytest.fixture
def codex_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeResponses]:
    """The real `codex` on PATH, a private HOME whose Codex config points at the fake API."""
    exe = cli_path("codex")
    home = cli_home(tmp_path, "codex")
    with FakeResponses() as api:
        (home / ".codex").mkdir(exist_ok=True)
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-fake"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
            f'name = "fake"\nbase_url = "{api.api_url}"\nwire_api = "responses"\n'
            'env_key = "OPENAI_API_KEY"\n')
        monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("CODEX_HOME", raising=False)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a teammate inherits it
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
        monkeypatch.setenv("SWARM_TEAM", TEAM)
        ok("team", "create", TEAM)
        yield api
        end_members(TEAM, codex_processes)


def codex_processes(pid: int) -> list[psutil.Process]:
    return children_with(pid, lambda argv: "codex" in " ".join(argv[:2]))


def requests_with(api: FakeResponses, text: str) -> list[dict[str, Any]]:
    return [b for b in api.responses_requests() if text in json.dumps(b.get("input"))]


def outputs(body: dict[str, Any]) -> list[str]:
    """The tool results a request hands the model, as JSON text."""
    return [json.dumps(i) for i in body.get("input", []) if i.get("type") ==
            "function_call_output"]


def test_a_codex_teammate_works_through_swarms_tools(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    api = codex_env
    script_first_task(api, tool)
    spawned = ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--json")
    assert json.loads(spawned)["agent"] == "codex"
    assert Team(TEAM).member("cx").agent == "codex"

    first_task_done(TEAM, "cx")
    first = api.responses_requests()[0]
    assert "mcp__swarm" in json.dumps(first.get("tools")), "swarm's tools at the first request"
    assert "<task-assignment" in json.dumps(first["input"])
    assert "team-lead" in json.dumps(first)  # swarm's team protocol is in its instructions

    # A message to the idle teammate is a new turn of the same session.
    answers_a_message(TEAM, "cx", api, requests_with)

    # Its turns and tokens from Codex's own token usage.
    rows = {r["name"]: r for r in json.loads(ok("status", "--json"))}
    assert rows["cx"]["state"] == "idle"
    assert rows["cx"]["turns"] == 2 and rows["cx"]["tokens"] >= 5 * (12 + 7)
    state = read_state(TEAM, "cx")
    assert state is not None and state.turns == 2 and state.usage.output_tokens >= 5 * 7

    # A command in default mode reaches the lead as Codex asked it; a denial stops it.
    out = tmp_path / "never.txt"
    api.push_tool_use("exec_command", {"cmd": f"echo secret > {out}"})
    api.push_text("It was denied.")
    ok("send", "cx", "please write the file")
    asks = wait_until(lambda: lead_messages("permission_request"), 60)
    assert asks[0]["tool_name"] == "Bash"
    assert asks[0]["input"]["command"] == f"echo secret > {out}"
    ok("permissions", "deny", asks[0]["request_id"][:8], "--reason", "not that file")
    wait_until(lambda: len(lead_messages("idle_notification")) >= 3, 60)
    assert not out.exists()
    assert [(p["tool"], p["decision"]) for p in prompts("cx")] == [("Bash", "deny")]
    assert "not that file" in prompts("cx")[0]["reason"]
    told = requests_with(api, "please write the file")[-1]
    assert outputs(told) and "not that file" in json.dumps(told["input"]), "the model knows why"

    # Killed, then respawned: the same Codex thread, resumed.
    kill_then_resume(TEAM, "cx", api, codex_processes, requests_with, "what is 2+2?")

    # Shutdown is negotiated: the model approves through swarm's SendMessage, then it exits.
    wait_until(lambda: len(lead_messages("idle_notification")) >= 4, 60)
    shutdown_ends_it(TEAM, "cx", api, codex_processes, tool("SendMessage"))


def test_interrupt_ends_the_codex_turn_and_an_allow_rule_answers_its_approval(
        codex_env: FakeResponses) -> None:
    """`--allow 'Bash(tail:*)'` answers Codex's approval request without the lead; `swarm
    interrupt` ends the turn (the command too), the app-server lives on for the next."""
    api = codex_env
    api.push_tool_use("exec_command", {"cmd": "tail -f /dev/null"})
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--allow", "Bash(tail:*)",
       "--prompt", "wait a while")
    pid: int = wait_until(lambda: (s := read_state(TEAM, "cx")) is not None and s.pid or 0, 30)
    sleeper = child_named(pid, "tail", 60, message="the command runs (allowed, not asked)")
    assert lead_messages("permission_request") == []
    assert [(p["tool"], p["decision"]) for p in prompts("cx")] == [("Bash", "allow")]
    codex = codex_processes(pid)
    ok("interrupt", "cx")
    idle = wait_until(lambda: lead_messages("idle_notification"), 30)
    assert idle[-1]["idle_reason"] == "interrupted"
    wait_until(lambda: gone([sleeper]), 20, message="the command ended with the turn")
    assert codex_processes(pid) == codex  # the same Codex process goes on
    api.push_text("Still here.")
    ok("send", "cx", "still there?")
    wait_until(lambda: len(lead_messages("idle_notification")) >= 2, 60)
    assert lead_messages("idle_notification")[-1]["summary"] == "Still here."


def patch(path: str, text: str) -> dict[str, Any]:
    """Codex's own way to edit files: `apply_patch` through its command tool (it intercepts
    the call and asks for a file change, not a command)."""
    return {"cmd": f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: {path}\n+{text}\n"
                   "*** End Patch\nEOF"}


def test_swarms_mode_and_file_scopes_decide_codexs_approvals(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    """bypassPermissions in swarm: a patch outside its task's file scope is declined, one
    inside is made, a command runs unasked; swarm decided each, the lead was never asked."""
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    ok("tasks", "add", "docs", "--description", "write docs", "--files", "docs/**")
    api = codex_env
    api.push_tool_use("exec_command", patch("src.py", "x = 1"))
    api.push_tool_use("exec_command", patch("docs/a.md", "# A"))
    api.push_tool_use("exec_command", {"cmd": f"echo ran > {work / 'docs' / 'ran.txt'}"})
    api.push_text("Docs written.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(work),
       "--permission-mode", "bypassPermissions")
    wait_until(lambda: answered("cx"), 90)
    assert not (work / "src.py").exists()
    assert (work / "docs" / "a.md").read_text() == "# A\n"
    assert (work / "docs" / "ran.txt").read_text() == "ran\n"
    decided = [(p["tool"], p["decision"]) for p in prompts("cx")]
    assert decided == [("Write", "deny"), ("Write", "allow"), ("Bash", "allow")]
    assert "scope" in prompts("cx")[0]["reason"]
    assert lead_messages("permission_request") == []
    # The decline's reason went in with the decline: one request after it carries both, and
    # none was dropped and asked again (a late steer did that; its response was lost).
    bodies = [json.dumps(body) for body in api.responses_requests()]
    assert len(bodies) == 4, bodies
    assert "patch rejected" in bodies[1] and "(swarm) Not run" in bodies[1]


def test_a_patch_in_default_mode_asks_the_lead_with_the_file(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    codex_env.push_tool_use("exec_command", patch("notes.md", "hello"))
    codex_env.push_text("Noted.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(work),
       "--prompt", "take notes")
    asks = wait_until(lambda: lead_messages("permission_request"), 60)
    assert asks[0]["tool_name"] == "Write"
    assert asks[0]["input"]["file_path"] == str(work / "notes.md")
    assert "hello" in asks[0]["input"]["content"]
    ok("permissions", "approve", asks[0]["request_id"][:8])
    wait_until(lambda: answered("cx"), 60)
    assert (work / "notes.md").read_text() == "hello\n"


def test_a_definition_and_the_leads_spawnteammate_make_a_codex_teammate(
        codex_env: FakeResponses, swarm_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm.mcp_server.host import ServedHost, ServeOptions

    agents = swarm_home / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "coder.md").write_text("---\nname: coder\ndescription: codes\nagent: codex\n"
                                     "---\nYou write code.\n")
    codex_env.push_text("Ready to code.")
    ok("spawn", "cx", "--agent-type", "coder", "--backend", "hidden", "--prompt", "hello")
    assert Team(TEAM).member("cx").agent == "codex"
    wait_until(lambda: answered("cx"), 60, message="the coder answered")
    assert (s := read_state(TEAM, "cx")) is not None and s.cli_session  # Codex's thread

    monkeypatch.setenv("SWARM_BACKEND", "hidden")
    host = ServedHost(ServeOptions(team=TEAM))
    host.start()
    try:
        codex_env.push_text("Hello, lead.")
        result = host.call("SpawnTeammate", {"name": "cy", "prompt": "say hello",
                                             "agent": "codex"})
        assert not result.is_error, result.content
        assert Team(TEAM).member("cy").agent == "codex"
        wait_until(lambda: answered("cy"), 60, message="the spawned Codex answered")
        assert "say hello" in json.dumps(codex_env.responses_requests()[-1]["input"])
    finally:
        host.close("test over")


def test_a_mode_change_reaches_the_running_codex(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    """`swarm mode cx acceptEdits` on a default-mode Codex teammate: its next patch in its
    directory is made without asking the lead (swarm answers with the mode it has now)."""
    work = tmp_path / "work"
    work.mkdir()
    codex_env.push_text("Ready.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(work),
       "--prompt", "get ready")
    wait_until(lambda: answered("cx"), 60)
    ok("mode", "cx", "acceptEdits")
    codex_env.push_tool_use("exec_command", patch("later.txt", "later"))
    codex_env.push_text("Written.")
    ok("send", "cx", "write it now")
    wait_until(lambda: len(lead_messages("idle_notification")) >= 2, 60)
    assert lead_messages("permission_request") == []
    assert (work / "later.txt").read_text() == "later\n"
    assert [(p["tool"], p["decision"]) for p in prompts("cx")] == [("Write", "allow")]
    assert read_state(TEAM, "cx").mode == "acceptEdits"  # type: ignore[union-attr]


def test_an_interrupt_withdraws_the_question_the_lead_has_not_answered(
        codex_env: FakeResponses, tmp_path: Path) -> None:
    out = tmp_path / "never.txt"
    codex_env.push_tool_use("exec_command", {"cmd": f"echo x > {out}"})
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--prompt", "write it")
    asks = wait_until(lambda: lead_messages("permission_request"), 60)
    assert asks[0]["input"]["command"] == f"echo x > {out}"
    ok("interrupt", "cx")
    idle = wait_until(lambda: lead_messages("idle_notification"), 30)
    assert idle[-1]["idle_reason"] == "interrupted"
    wait_until(lambda: Team(TEAM).inbox("team-lead", checked=False).unread() == [] or all(
        m.structured() is None or m.structured().type != "permission_request"  # type: ignore[union-attr]
        for m in Team(TEAM).inbox("team-lead", checked=False).unread()), 30, message="the request withdrawn")
    assert not out.exists()


def test_every_command_is_swarms_to_decide_even_a_read(
        codex_env: FakeResponses, swarm_home: Path, tmp_path: Path) -> None:
    """Codex asks about every command in the policy swarm gives it (measured: even `ls`), so
    swarm's rules see reads too: `ls` is allowed by a rule, reading the lead's key is forbidden
    whatever the rules say (nobody is asked)."""
    key = swarm_home / "teams" / TEAM / "lead.key"
    codex_env.push_tool_use("exec_command", {"cmd": "ls"})
    codex_env.push_tool_use("exec_command", {"cmd": f"cat {key}"})
    codex_env.push_text("Tried.")
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--cwd", str(tmp_path),
       "--allow", "Bash(ls:*)", "--allow", "Bash(cat:*)", "--prompt", "look around")
    wait_until(lambda: answered("cx"), 60)
    assert lead_messages("permission_request") == []
    decided = [(p["tool"], p["decision"]) for p in prompts("cx")]
    assert decided == [("Bash", "allow"), ("Bash", "deny")]
    assert "forbidden" in prompts("cx")[1]["reason"]


def test_a_kill_mid_command_ends_codex_and_its_command(codex_env: FakeResponses) -> None:
    codex_env.push_tool_use("exec_command", {"cmd": "tail -f /dev/null"})
    ok("spawn", "cx", "--agent", "codex", "--backend", "hidden", "--allow", "Bash(tail:*)",
       "--prompt", "wait a while")
    pid: int = wait_until(lambda: (s := read_state(TEAM, "cx")) is not None and s.pid or 0, 30)
    sleeper = child_named(pid, "tail", 60, message="the command runs")
    codex = codex_processes(pid)
    ok("kill", "cx")
    wait_until(lambda: gone(codex), 30, message="its Codex ended")
    wait_until(lambda: gone([sleeper]), 30, message="the command ended with it")
    assert read_state(TEAM, "cx").state == "exited"  # type: ignore[union-attr]
