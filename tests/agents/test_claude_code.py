"""Teammates that are another agent CLI: the real Claude Code, driven by
`swarm agent` over its stream-json interface, pointed at the fake Anthropic API, with swarm's
MCP server (`swarm mcp serve --as NAME`) as its team tools and its permission-prompt tool."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.agent_clis import cli_home, cli_path
from tests.support.cli_runner import run_swarm
from tests.support.cli_teammate_steps import (
    answers_a_message,
    end_members,
    first_task_done,
    kill_then_resume,
    notes,
    script_first_task,
    shutdown_ends_it,
)
from tests.support.fake_anthropic import FakeAnthropic, last_user_text
from tests.support.helpers import child_named, children_with, process_gone, wait_until
from tests.support.hub_client import hubs, serve_children

TEAM = "alpha"


def ok(*args: str, timeout: float = 60.0) -> str:
    proc = run_swarm(*args, timeout=timeout)
    assert proc.returncode == 0, f"swarm {' '.join(args)}: {proc.stderr}"
    return proc.stdout


@pytest.fixture
def claude_env(tmp_path: Path, fake_api: FakeAnthropic,
               monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The real `claude` on PATH, a private HOME, the fake API; team alpha."""
    exe = cli_path("claude")
    monkeypatch.setenv("PATH", f"{exe.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(cli_home(tmp_path, "claude")))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    monkeypatch.setenv("SWARM_TEAM", TEAM)
    ok("team", "create", TEAM)
    yield fake_api
    end_members(TEAM, claude_processes)


def lead_messages(kind: str) -> list[dict[str, Any]]:
    return notes(TEAM, kind)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t.get("name", "") for t in body.get("tools") or []]


def requests_with(api: FakeAnthropic, text: str) -> list[dict[str, Any]]:
    return [b for b in api.messages_requests() if text in json.dumps(b.get("messages"))]


def claude_processes(pid: int) -> list[psutil.Process]:
    return children_with(pid, lambda argv: "claude" in " ".join(argv[:2]))


def test_a_claude_code_teammate_works_through_swarms_tools(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    api = claude_env
    script_first_task(api, lambda n: f"mcp__swarm__{n}")
    spawned = ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--json")
    assert json.loads(spawned)["agent"] == "claude-code"
    assert Team(TEAM).member("cc").agent == "claude-code"

    first_task_done(TEAM, "cc")
    first = api.messages_requests()[0]
    names = tool_names(first)
    # swarm's tools were there at the first request; Claude Code's own team tools were not.
    # (Claude Code may defer MCP tools' schemas behind its ToolSearch: named in the request.)
    assert all(f"mcp__swarm__{n}" in json.dumps(first) for n in ("SendMessage", "TaskUpdate",
                                                                "TaskList")), names
    assert "SendMessage" not in names and "TaskCreate" not in names
    assert "<task-assignment" in json.dumps(first["messages"])

    # A message to the idle teammate is a new turn of the same session.
    answers_a_message(TEAM, "cc", api, requests_with)

    # Its turns and tokens from Claude Code's own result JSON.
    rows = {r["name"]: r for r in json.loads(ok("status", "--json"))}
    assert rows["cc"]["state"] == "idle"
    assert rows["cc"]["turns"] == 2 and rows["cc"]["tokens"] >= 2 * (12 + 7)
    assert rows["cc"]["cost_usd"] > 0
    state = read_state(TEAM, "cc")
    assert state is not None and state.turns == 2
    assert state.usage.output_tokens >= 2 * 7 and state.usage.cost_usd > 0

    # A Bash call in default mode reaches the lead with the real command; deny stops it.
    out = tmp_path / "never.txt"
    api.push_tool_use("Bash", {"command": f"echo secret > {out}", "description": "write"})
    api.push_text("It was denied.")
    ok("send", "cc", "please write the file")
    asks = wait_until(lambda: lead_messages("permission_request"), 60)
    assert asks[0]["tool_name"] == "Bash"
    assert asks[0]["input"]["command"] == f"echo secret > {out}"
    ok("permissions", "deny", asks[0]["request_id"][:8], "--reason", "not that file")
    wait_until(lambda: len(lead_messages("idle_notification")) >= 3, 60)
    assert not out.exists()
    assert [(p["tool"], p["decision"]) for p in prompts()] == [("Bash", "deny")]
    assert "not that file" in prompts()[0]["reason"]
    denied = requests_with(api, "It was denied") or requests_with(api, "the lead denied it")
    assert denied, "the model saw the denial"

    # Killed, then respawned: the same Claude Code session, resumed.
    kill_then_resume(TEAM, "cc", api, claude_processes, requests_with, "what is 2+2?")

    # Shutdown is negotiated: the model approves through swarm's SendMessage, then it exits.
    wait_until(lambda: len(lead_messages("idle_notification")) >= 4, 60)
    shutdown_ends_it(TEAM, "cc", api, claude_processes, "mcp__swarm__SendMessage",
                     last_user_text)


def test_spawn_refuses_a_cli_that_is_not_installed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    python = Path(shutil.which("python3") or "/usr/bin/python3")
    (bare / "python3").symlink_to(python)
    monkeypatch.setenv("PATH", str(bare))
    monkeypatch.setenv("SWARM_TEAM", TEAM)
    ok("team", "create", TEAM)
    proc = run_swarm("spawn", "cc", "--agent", "claude-code", "--backend", "hidden")
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert lines == ["swarm: error: --agent claude-code needs the `claude` CLI, which is not"
                     " on PATH (install it: npm install -g @anthropic-ai/claude-code)"]
    assert Team(TEAM).config().member("cc") is None  # nothing registered
    unknown = run_swarm("spawn", "cc", "--agent", "cursor", "--backend", "hidden")
    assert unknown.returncode == 2 and "cursor" in unknown.stderr


def prompts(name: str = "cc") -> list[dict[str, Any]]:
    """What the CLI asked swarm's PermissionPrompt, from the member's transcript."""
    from swarm.core.store import paths
    from swarm.core.team.transcript import Transcript

    return [e for e in Transcript(paths.agent_transcript(TEAM, name)).entries()
            if e.get("event") == "permission_prompt"]


def answered(name: str) -> bool:
    return any(m["sender"] == name for m in lead_messages("idle_notification"))


def test_a_definitions_agent_field_makes_the_teammate_that_cli(
        claude_env: FakeAnthropic, swarm_home: Path) -> None:
    agents = swarm_home / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "coder.md").write_text("---\nname: coder\ndescription: codes\nagent: claude-code\n"
                                     "---\nYou write code.\n")
    claude_env.push_text("Ready to code.")
    ok("spawn", "cc", "--agent-type", "coder", "--backend", "hidden", "--prompt", "hello")
    assert Team(TEAM).member("cc").agent == "claude-code"
    wait_until(lambda: answered("cc"), 60, message="the coder answered")
    state = read_state(TEAM, "cc")
    assert state is not None and state.cli_session  # it is Claude Code's session
    assert lead_messages("idle_notification")[-1]["summary"] == "Ready to code."


def test_the_leads_spawnteammate_takes_an_agent(
        claude_env: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    from swarm.mcp_server.host import ServedHost, ServeOptions

    monkeypatch.setenv("SWARM_BACKEND", "hidden")
    host = ServedHost(ServeOptions(team=TEAM))
    host.start()
    try:
        claude_env.push_text("Hello, lead.")
        result = host.call("SpawnTeammate", {"name": "cc", "prompt": "say hello",
                                             "agent": "claude-code"})
        assert not result.is_error, result.content
        assert Team(TEAM).member("cc").agent == "claude-code"
        wait_until(lambda: answered("cc"), 60, message="the spawned CLI answered")
        assert "say hello" in json.dumps(claude_env.messages_requests()[-1]["messages"])
        bad = host.call("SpawnTeammate", {"name": "cx", "prompt": "x", "agent": "cursor"})
        assert bad.is_error and "agent: Input should be one of claude-code" in bad.content
    finally:
        host.close("test over")


def test_spawn_teammate_offers_the_registrys_agent_clis() -> None:
    """SpawnTeammate's schema names every agent CLI of the registry of teammate kinds but one
    whose command a person gives (`--agent acp -- CMD`)."""
    from swarm.core.kinds import agent_clis
    from swarm.lead.lead_tools import SpawnTeammate

    schema = SpawnTeammate().spec()["input_schema"]["properties"]["agent"]
    assert schema["enum"] == [k.name for k in agent_clis() if not k.needs_command]
    assert "acp" not in schema["enum"]


def test_interrupt_ends_the_clis_turn_and_an_allow_rule_answers_its_question(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    """`--allow 'Bash(tail:*)'` answers Claude Code's permission prompt without the lead;
    `swarm interrupt` ends the turn (the command too), the process lives on for the next."""
    api = claude_env
    # (Claude Code blocks a sleep of its own accord: a command that waits for nothing.)
    api.push_tool_use("Bash", {"command": "tail -f /dev/null", "description": "wait"})
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--allow",
       "Bash(tail:*)", "--prompt", "wait a while")
    pid = wait_until(lambda: (s := read_state(TEAM, "cc")) is not None and s.pid, 30)
    sleeper = child_named(pid, "tail", 60, message="the command runs (allowed, not asked)")
    assert lead_messages("permission_request") == []
    claude = claude_processes(pid)
    ok("interrupt", "cc")
    idle = wait_until(lambda: lead_messages("idle_notification"), 30)
    assert idle[-1]["idle_reason"] == "interrupted"
    wait_until(lambda: process_gone(sleeper), 20)
    assert claude_processes(pid) == claude  # the same Claude Code process goes on
    api.push_text("Still here.")
    ok("send", "cc", "still there?")
    wait_until(lambda: len(lead_messages("idle_notification")) >= 2, 60)
    assert lead_messages("idle_notification")[-1]["summary"] == "Still here."


def test_swarms_mode_is_the_clis_mode(claude_env: FakeAnthropic, tmp_path: Path) -> None:
    """acceptEdits in swarm: Claude Code writes in its directory without asking the lead;
    swarm's PermissionPrompt allowed it by swarm's mode (Claude Code runs in its default)."""
    work = tmp_path / "work"
    work.mkdir()
    out = work / "made.txt"
    claude_env.push_tool_use("Write", {"file_path": str(out), "content": "made\n"})
    claude_env.push_text("Made it.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--permission-mode",
       "acceptEdits", "--cwd", str(work), "--prompt", "make the file")
    wait_until(lambda: answered("cc"), 60)
    assert out.read_text() == "made\n"
    assert lead_messages("permission_request") == []
    pid = read_state(TEAM, "cc").pid  # type: ignore[union-attr]
    assert pid is not None
    assert [(p["tool"], p["decision"]) for p in prompts()] == [("Write", "allow")]
    assert "acceptEdits" not in " ".join(claude_processes(pid)[0].cmdline())


def test_a_mode_change_reaches_the_running_cli(claude_env: FakeAnthropic, tmp_path: Path) -> None:
    """`swarm mode cc acceptEdits` on a default-mode teammate: its next Write is not asked."""
    work = tmp_path / "work"
    work.mkdir()
    out = work / "later.txt"
    claude_env.push_text("Ready.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(work),
       "--prompt", "get ready")
    wait_until(lambda: answered("cc"), 60)
    ok("mode", "cc", "acceptEdits")
    claude_env.push_tool_use("Write", {"file_path": str(out), "content": "later\n"})
    claude_env.push_text("Written.")
    ok("send", "cc", "write it now")
    wait_until(lambda: len(lead_messages("idle_notification")) >= 2, 60)
    assert lead_messages("permission_request") == []
    assert out.read_text() == "later\n"
    assert [(p["tool"], p["decision"]) for p in prompts()] == [("Write", "allow")]
    assert read_state(TEAM, "cc").mode == "acceptEdits"  # type: ignore[union-attr]


def test_file_scopes_hold_for_a_cli_teammate_in_bypass_mode(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    """bypassPermissions (which Claude Code refuses to root: swarm decides it instead): a Write
    outside its task's file scope is denied, one inside is made, a command runs unasked."""
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    ok("tasks", "add", "docs", "--description", "write docs", "--files", "docs/**")
    api = claude_env
    api.push_tool_use("Write", {"file_path": str(work / "src.py"), "content": "x = 1\n"})
    api.push_tool_use("Write", {"file_path": str(work / "docs" / "a.md"), "content": "# A\n"})
    api.push_tool_use("Bash", {"command": f"echo ran > {work / 'docs' / 'ran.txt'}",
                               "description": "run"})
    api.push_text("Docs written.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(work),
       "--permission-mode", "bypassPermissions")
    wait_until(lambda: answered("cc"), 60)
    assert not (work / "src.py").exists()
    assert (work / "docs" / "a.md").read_text() == "# A\n"
    assert (work / "docs" / "ran.txt").read_text() == "ran\n"
    decided = [(p["tool"], p["decision"]) for p in prompts()]
    assert decided[0] == ("Write", "deny") and ("Write", "allow") in decided
    assert "scope" in prompts()[0]["reason"]
    assert lead_messages("permission_request") == []


def test_a_cli_teammate_works_in_its_worktree(claude_env: FakeAnthropic, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "README.md").write_text("hi\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    claude_env.push_tool_use("Write", {"file_path": "notes.txt", "content": "in the tree\n"})
    claude_env.push_text("Noted.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--cwd", str(repo),
       "--worktree", "--permission-mode", "acceptEdits", "--prompt", "take notes")
    wait_until(lambda: answered("cc"), 60)
    tree = Team(TEAM).member("cc").worktree_path
    assert tree and Path(tree) != repo
    assert (Path(tree) / "notes.txt").read_text() == "in the tree\n"
    assert not (repo / "notes.txt").exists()


def plan_requests() -> list[dict[str, Any]]:
    return lead_messages("plan_approval_request")


def test_an_approved_plan_lets_the_cli_teammate_work(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    """`--plan-mode-required`: Claude Code runs in its plan mode; its ExitPlanMode is swarm's
    plan_approval_request with the plan; `swarm plans approve` lets it out (acceptEdits, its
    working mode: its Write is not asked) and the running CLI is told its new mode."""
    work = tmp_path / "work"
    work.mkdir()
    out = work / "made.txt"
    api = claude_env
    api.push_tool_use("ExitPlanMode", {"plan": "1. write made.txt\n2. report"})
    api.push_tool_use("Write", {"file_path": str(out), "content": "made\n"})
    api.push_text("Plan carried out.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--plan-mode-required",
       "--cwd", str(work), "--prompt", "plan, then make the file")
    pid = wait_until(lambda: (s := read_state(TEAM, "cc")) is not None and s.pid, 30)
    plans = wait_until(plan_requests, 60, message="the plan reached the lead")
    assert plans[0]["sender"] == "cc" and "write made.txt" in plans[0]["plan"]
    assert "--permission-mode plan" in " ".join(claude_processes(pid)[0].cmdline())
    rows = {r["name"]: r for r in json.loads(ok("status", "--json"))}
    assert rows["cc"]["state"] == "awaiting_plan"
    assert not out.exists()
    ok("plans", "approve", "cc")
    wait_until(lambda: answered("cc"), 60, message="the teammate carried out its plan")
    assert out.read_text() == "made\n"
    assert lead_messages("idle_notification")[-1]["summary"] == "Plan carried out."
    assert lead_messages("permission_request") == []
    assert read_state(TEAM, "cc").mode == "acceptEdits"  # type: ignore[union-attr]
    decided = [(p["tool"], p["decision"]) for p in prompts()]
    assert decided == [("ExitPlanMode", "allow"), ("Write", "allow")]
    assert [(e["previous"], e["mode"]) for e in events("cc", "mode_changed")] == [
        ("plan", "acceptEdits")]


def test_a_rejected_plan_keeps_the_cli_teammate_planning(
        claude_env: FakeAnthropic, tmp_path: Path) -> None:
    """`swarm plans reject --feedback`: the CLI's ExitPlanMode is denied with the lead's
    feedback, which its model sees; it stays in plan mode and edits nothing."""
    work = tmp_path / "work"
    work.mkdir()
    out = work / "made.txt"
    api = claude_env
    api.push_tool_use("ExitPlanMode", {"plan": "1. delete everything"})
    api.push_tool_use("Write", {"file_path": str(out), "content": "made\n"})
    api.push_text("I will revise the plan.")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--permission-mode",
       "plan", "--cwd", str(work), "--prompt", "plan the cleanup")
    wait_until(plan_requests, 60, message="the plan reached the lead")
    ok("plans", "reject", "cc", "--feedback", "keep the tests, remove only build output")
    wait_until(lambda: answered("cc"), 60)
    assert not out.exists()
    assert requests_with(api, "keep the tests, remove only build output"), \
        "the model saw the lead's feedback"
    assert read_state(TEAM, "cc").mode == "plan"  # type: ignore[union-attr]
    assert lead_messages("permission_request") == []
    assert prompts()[0]["tool"] == "ExitPlanMode" and prompts()[0]["decision"] == "deny"


def events(name: str, kind: str) -> list[dict[str, Any]]:
    from swarm.core.store import paths
    from swarm.core.team.transcript import Transcript

    return [e for e in Transcript(paths.agent_transcript(TEAM, name)).entries()
            if e.get("event") == kind]


def test_a_plan_wait_ends_with_the_cli_that_asked(claude_env: FakeAnthropic,
                                                   tmp_path: Path) -> None:
    """A plan has no timeout: if its Claude Code dies while the lead has not answered, the
    team's MCP server (waiting in PermissionPrompt) stops waiting and the plan leaves the
    pending list."""
    claude_env.push_tool_use("ExitPlanMode", {"plan": "1. wait"})
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden", "--plan-mode-required",
       "--cwd", str(tmp_path), "--prompt", "plan")
    pid = wait_until(lambda: (s := read_state(TEAM, "cc")) is not None and s.pid, 30)
    wait_until(plan_requests, 60, message="the plan reached the lead")
    claude = claude_processes(pid)[0]
    assert serve_children(pid) == [] and len(hubs()) == 1  # the team's server, not its own
    claude.kill()
    wait_until(lambda: ok("plans", "list").strip() == "(no plans waiting)", 20,
               message="the wait ended with the CLI")
    assert hubs()  # the server goes on serving the team


@pytest.mark.parametrize("agent", ["codex", "gemini"])
def test_plan_mode_is_refused_for_a_cli_with_no_plan_to_put_to_the_lead(
        agent: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Codex and Gemini CLI have no ExitPlanMode swarm can put to the lead: spawn says so,
    rather than start a teammate that could leave plan mode only by `swarm mode`."""
    from tests.support.helpers import run_cli

    Team.create(TEAM)
    for flags in (["--plan-mode-required"], ["--permission-mode", "plan"]):
        code, _, err = run_cli(capsys, "spawn", "x", "--team", TEAM, "--agent", agent,
                               "--backend", "hidden", *flags)
        assert code == 2  # bad input
        assert err.strip() == (f"swarm: error: --agent {agent}: plan mode needs a plan to put to"
                               " the lead, which only claude-code gives (spawn it in default or"
                               " acceptEdits; `swarm mode` changes it later)")
        assert Team(TEAM).config().member("x") is None


def test_swarm_mode_will_not_put_a_codex_teammate_in_plan_mode(
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.helpers import run_cli

    team = Team.create(TEAM)
    team.add_member("cx", agent="codex")
    code, _, err = run_cli(capsys, "mode", "cx", "plan", "--team", TEAM)
    assert code == 2
    assert err.strip() == ("swarm: error: --agent codex: plan mode needs a plan to put to the"
                           " lead, which only claude-code gives (give it default or acceptEdits)")
    assert Team(TEAM).inbox("cx", checked=False).unread() == []  # no mode_change was sent
    code, out, _ = run_cli(capsys, "mode", "cx", "acceptEdits", "--team", TEAM)
    assert code == 0 and "acceptEdits" in out
