"""An ACP agent as a teammate, on swarm's one ACP driver (runtime.clis.acp_driver, the official
SDK's client side): a fake agent of our own on the SDK's agent side (tests/support/fake_acp_agent.py),
registered as a kind, driven by real `swarm` processes through swarm's real MCP server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from tests.support.acp_support import (
    FAKE_KIND,
    answered,
    fake_log,
    fake_processes,
    fake_team,
    lead_notes,
    ok,
    prompts,
    script,
)
from tests.support.cli_runner import run_swarm
from tests.support.cli_teammate_steps import end_members, gone
from tests.support.helpers import process_gone, wait_until

TEAM = "alpha"


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    yield fake_team(tmp_path, monkeypatch, TEAM)
    end_members(TEAM, fake_processes)


def first_task_turn(command: str) -> list[dict[str, object]]:
    return [
        {"mcp": "TaskList"},
        {"run": command},
        {"usage": [100, 7]}, {"usage": [200, 9]},
        {"mcp": "TaskUpdate", "args": {"task_id": "1", "status": "completed",
                                       "result": "hello written"}},
        {"mcp": "SendMessage", "args": {"to": "team-lead", "message": "task 1 done",
                                        "summary": "done"}},
        {"say": "All done with task 1."},
    ]


def test_an_acp_agent_works_a_task_asks_the_lead_resumes_and_shuts_down(
        fake: dict[str, str]) -> None:
    project = Path.cwd()
    script(fake, [
        first_task_turn("echo hello > hello.txt"),
        [{"say": "Four."}],
        [{"run": f"echo secret > {project / 'never.txt'}"}, {"say": "not reached"}],
        [{"say": "Back again."}],
        [{"approve_shutdown": True}, {"say": "Bye."}],
    ])
    ok("tasks", "add", "write hello", "--description", "say hello")
    spawned = json.loads(ok("spawn", "fa", "--agent", FAKE_KIND, "--backend", "hidden",
                            "--allow", "Bash(echo hello > hello.txt)", "--json"))
    assert spawned["agent"] == FAKE_KIND

    # Spawned with a task: it claims it, runs the command a rule allows, completes, reports.
    wait_until(lambda: Team(TEAM).tasks.get("1").status == "completed", 60)
    assert Team(TEAM).tasks.get("1").owner == "fa"
    assert (project / "hello.txt").read_text() == "hello\n"
    wait_until(lambda: answered(TEAM, "fa"), 30)
    assert lead_notes(TEAM, "idle_notification")[-1]["summary"] == "All done with task 1."
    assert any(m.text == "task 1 done" and m.sender == "fa" for m in
               Team(TEAM).inbox("team-lead", checked=False).messages(include_archive=True))
    # Put in its asking mode (it starts in one that asks nothing), swarm's MCP server given.
    assert [e["mode"] for e in fake_log(fake, "session/set_mode")] == ["default"]
    assert fake_log(fake, "session/new")[0]["mcp"] == ["swarm"]
    assert fake_log(fake, "session/new")[0]["cwd"] == str(project)
    first = fake_log(fake, "session/prompt")[0]
    assert "You are `fa`" in first["text"] and "<task-assignment" in first["text"]
    # Asked with the real command, allowed by the rule, answered with the one-time option.
    assert [(p["tool"], p["decision"]) for p in prompts(TEAM, "fa")] == [("Bash", "allow")]
    assert [e["option"] for e in fake_log(fake, "permission")] == ["once"]
    state = read_state(TEAM, "fa")
    assert state is not None and state.turns == 1
    assert (state.usage.input_tokens, state.usage.output_tokens) == (300, 16)  # summed chunks

    # A second message is a second turn of the same session, in the same process.
    ok("send", "fa", "what is 2+2?")
    wait_until(lambda: answered(TEAM, "fa", 2), 30)
    turns = fake_log(fake, "session/prompt")
    assert turns[1]["session"] == turns[0]["session"] and turns[1]["turn_in_session"] == 2
    assert turns[1]["pid"] == turns[0]["pid"]
    assert "what is 2+2?" in turns[1]["text"]

    # A command no rule allows reaches the lead with the real command; a denial stops it.
    ok("send", "fa", "please write the file")
    asks = wait_until(lambda: lead_notes(TEAM, "permission_request"), 30)
    assert asks[0]["tool_name"] == "Bash"
    assert asks[0]["input"]["command"] == f"echo secret > {project / 'never.txt'}"
    ok("permissions", "deny", asks[0]["request_id"][:8], "--reason", "not that file")
    wait_until(lambda: answered(TEAM, "fa", 3), 30)
    assert not (project / "never.txt").exists()
    assert [e["option"] for e in fake_log(fake, "permission")] == ["once", "no"]
    assert "not that file" in prompts(TEAM, "fa")[-1]["reason"]

    # Killed, then respawned: the same session, loaded again in a new agent process.
    state = read_state(TEAM, "fa")
    assert state is not None and state.pid is not None
    agent_pid, session, old = state.pid, state.cli_session, fake_processes(state.pid)
    assert old and session == turns[0]["session"]
    ok("kill", "fa")
    wait_until(lambda: process_gone(agent_pid) and gone(old), 20)
    ok("respawn", "fa")
    wait_until(lambda: (s := read_state(TEAM, "fa")) is not None and s.pid != agent_pid
               and s.state == "idle", 60)
    ok("send", "fa", "are you back?")
    wait_until(lambda: answered(TEAM, "fa", 4), 30)
    assert [e["session"] for e in fake_log(fake, "session/load")] == [session]
    back = fake_log(fake, "session/prompt")[-1]
    assert back["session"] == session and back["turn_in_session"] == 4
    assert back["pid"] != turns[0]["pid"]
    assert len(fake_log(fake, "session/set_mode")) == 2  # its mode set again after the load

    # Shutdown is negotiated: the agent approves through swarm's SendMessage; nothing is left.
    state = read_state(TEAM, "fa")
    assert state is not None and state.pid is not None
    running = [*fake_processes(state.pid)]
    assert running
    ok("shutdown", "fa", "--timeout", "60", timeout=90)
    wait_until(lambda: read_state(TEAM, "fa").state == "exited", 30)  # type: ignore[union-attr]
    wait_until(lambda: gone(running), 20)
    assert fake_log(fake, "session/close")
    # Never an `*_always` answer: the agent keeps asking swarm.
    assert not {e["option"] for e in fake_log(fake, "permission")} & {"always", "never"}


def test_a_read_is_decided_from_the_calls_earlier_update_and_a_deny_rule_holds(
        fake: dict[str, str]) -> None:
    """OpenCode's read request has no input: the path is in the call's update before it."""
    project = Path.cwd()
    (project / "secret.txt").write_text("s3cret\n")
    script(fake, [[{"read": str(project / "secret.txt")}, {"say": "read it"}]])
    ok("spawn", "fa", "--agent", FAKE_KIND, "--backend", "hidden",
       "--deny", f"Read({project / 'secret.txt'})", "--prompt", "read the secret")
    wait_until(lambda: answered(TEAM, "fa"), 60)
    assert [(p["tool"], p["decision"]) for p in prompts(TEAM, "fa")] == [("Read", "deny")]
    assert [e["option"] for e in fake_log(fake, "permission")] == ["no"]
    assert lead_notes(TEAM, "permission_request") == []  # a rule said no: nobody asked


def test_an_interrupt_cancels_the_turn(fake: dict[str, str]) -> None:
    script(fake, [[{"say": "thinking"}, {"wait": True}], [{"say": "after"}]])
    ok("spawn", "fa", "--agent", FAKE_KIND, "--backend", "hidden", "--prompt", "think long")
    wait_until(lambda: fake_log(fake, "session/prompt"), 60)
    wait_until(lambda: read_state(TEAM, "fa").state == "working", 30)  # type: ignore[union-attr]
    ok("interrupt", "fa")
    wait_until(lambda: fake_log(fake, "session/cancel"), 30)
    wait_until(lambda: read_state(TEAM, "fa").state == "idle", 30)  # type: ignore[union-attr]
    ok("send", "fa", "and now?")
    wait_until(lambda: len(fake_log(fake, "session/prompt")) == 2, 30)


def test_an_agent_that_needs_a_login_fails_the_spawn_with_its_sign_in_step(
        fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_ACP_NEEDS_LOGIN", "1")
    ok("spawn", "fa", "--agent", FAKE_KIND, "--backend", "hidden", "--prompt", "hi")
    wait_until(lambda: (s := read_state(TEAM, "fa")) is not None and s.state == "dead", 60)
    state = read_state(TEAM, "fa")
    assert state is not None
    assert "Fake ACP agent needs a login: run `fake-acp login`" in str(state.detail)


def test_an_untrusted_checkout_with_the_agents_files_refuses_the_spawn(
        fake: dict[str, str]) -> None:
    project = Path.cwd()
    (project / ".fake-acp").mkdir()
    (project / ".fake-acp" / "settings.json").write_text('{"hooks": "touch PWNED"}')
    proc = run_swarm("spawn", "fa", "--agent", FAKE_KIND, "--backend", "hidden",
                     "--prompt", "hi")
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("swarm: error: ")
    assert "untrusted" in lines[0] and "swarm trust" in lines[0]
    assert fake_log(fake) == []  # the agent never started
    assert all(m.name != "fa" for m in Team(TEAM).config().members)


def test_any_other_acp_agent_runs_by_its_command_only_where_trusted_for_it(
        fake: dict[str, str]) -> None:
    """`--agent acp -- CMD ARGS`: an agent swarm knows nothing about. It may read anything of
    the checkout, so even one with no configuration swarm knows needs --trust-project."""
    script(fake, [[{"say": "hello from an agent swarm does not know"}]])
    refused = run_swarm("spawn", "anon", "--agent", "acp", "--backend", "hidden",
                        "--prompt", "hi", "--", "fake-acp", "--some-flag")
    assert refused.returncode != 0
    lines = refused.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("swarm: error: --agent acp -- CMD runs")
    assert "--trust-project" in lines[0]
    missing = run_swarm("spawn", "anon", "--agent", "acp", "--backend", "hidden",
                        "--trust-project")
    assert missing.returncode != 0 and "needs the agent's command after `--`" in missing.stderr
    assert fake_log(fake) == []  # nothing started

    ok("spawn", "anon", "--agent", "acp", "--backend", "hidden", "--trust-project",
       "--prompt", "hi", "--", "fake-acp", "--some-flag")
    wait_until(lambda: answered(TEAM, "anon"), 60)
    summary = lead_notes(TEAM, "idle_notification")[-1]["summary"]
    assert summary == "hello from an agent swarm does not know"
    member = Team(TEAM).member("anon")
    assert member.agent == "acp" and member.agent_command == ["fake-acp", "--some-flag"]
    state = read_state(TEAM, "anon")
    assert state is not None and state.pid is not None
    assert any("--some-flag" in p.cmdline() for p in fake_processes(state.pid))


def test_a_mode_the_agent_cannot_be_put_in_is_refused(
        fake: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Never run with fewer questions than the mode asks: plan (no plan for the lead) is refused
    at spawn; an agent that offers no asking mode fails its start, naming its modes."""
    plan = run_swarm("spawn", "fa", "--agent", FAKE_KIND, "--backend", "hidden",
                     "--plan-mode-required", "--prompt", "hi")
    assert plan.returncode != 0
    assert plan.stderr.startswith("swarm: error: --agent acp:fake-acp: plan mode needs a plan")
    monkeypatch.setenv("FAKE_ACP_MODES", "yolo,auto")
    ok("spawn", "fa", "--agent", FAKE_KIND, "--backend", "hidden", "--prompt", "hi")
    wait_until(lambda: (s := read_state(TEAM, "fa")) is not None and s.state == "dead", 60)
    detail = str(read_state(TEAM, "fa").detail)  # type: ignore[union-attr]
    assert "it offers no mode 'default' (its modes: auto, yolo)" in detail
    assert fake_log(fake, "session/prompt") == []  # it never ran a turn


def test_doctor_asks_an_acp_agent_initialize_and_shows_what_it_says(
        fake: dict[str, str]) -> None:
    out = run_swarm("doctor").stdout
    line = next(x for x in out.splitlines() if f"agent CLI {FAKE_KIND}" in x)
    assert "initialize: fake-acp 0" in line
    assert fake_log(fake) == []  # a private environment: not the teammate's state


def test_an_acp_table_in_config_toml_is_a_kind_with_its_command_env_and_modes(
        fake: dict[str, str]) -> None:
    home = Path(os.environ["SWARM_HOME"])
    (home / "config.toml").write_text(
        '[acp.my-agent]\ncommand = "fake-acp"\nargs = ["--from-config"]\n'
        'env = { FAKE_ACP_MODES = "ask,yolo" }\nmodes = { default = "ask" }\n')
    script(fake, [[{"say": "configured and running"}]])
    ok("spawn", "mine", "--agent", "acp:my-agent", "--backend", "hidden", "--prompt", "hi")
    wait_until(lambda: answered(TEAM, "mine"), 60)
    assert lead_notes(TEAM, "idle_notification")[-1]["summary"] == "configured and running"
    assert [e["mode"] for e in fake_log(fake, "session/set_mode")] == ["ask"]
    state = read_state(TEAM, "mine")
    assert state is not None and state.pid is not None
    assert any("--from-config" in p.cmdline() for p in fake_processes(state.pid))
    doctor = run_swarm("doctor").stdout
    assert any("agent CLI acp:my-agent" in line for line in doctor.splitlines())


def test_a_bad_acp_table_is_named_when_its_kind_is_asked_for(fake: dict[str, str]) -> None:
    home = Path(os.environ["SWARM_HOME"])
    (home / "config.toml").write_text('[acp.broken]\nargs = ["x"]\n')
    proc = run_swarm("doctor")
    assert proc.returncode in (0, 1) and "acp:broken" not in proc.stdout
    from swarm.core import kinds

    with pytest.raises(Exception, match=r"\[acp.broken\] needs command"):
        kinds.configured()
        kinds.agent_cli("acp:broken")


def test_a_definition_names_an_acp_agent_with_agent(fake: dict[str, str]) -> None:
    """`agent: acp:ID` in an agent definition (the user's own: a checkout's would make it
    untrusted, and an ACP agent is refused there)."""
    agents = Path(os.environ["SWARM_HOME"]) / "agents"
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "helper.md").write_text(f"---\nname: helper\ndescription: helps\nagent: {FAKE_KIND}\n"
                                      "---\nYou help.\n")
    script(fake, [[{"say": "helping"}]])
    ok("spawn", "fa", "--agent-type", "helper", "--backend", "hidden", "--prompt", "hi")
    wait_until(lambda: answered(TEAM, "fa"), 60)
    assert Team(TEAM).member("fa").agent == FAKE_KIND
    assert lead_notes(TEAM, "idle_notification")[-1]["summary"] == "helping"


def test_an_agent_that_dies_mid_turn_fails_the_turn_and_starts_again(
        fake: dict[str, str]) -> None:
    script(fake, [[{"say": "thinking"}, {"wait": True}], [{"say": "alive again"}]])
    ok("spawn", "fa", "--agent", FAKE_KIND, "--backend", "hidden", "--prompt", "think long")
    wait_until(lambda: fake_log(fake, "session/prompt"), 60)
    state = read_state(TEAM, "fa")
    assert state is not None and state.pid is not None
    first = fake_processes(state.pid)
    assert len(first) == 1
    first[0].kill()
    wait_until(lambda: answered(TEAM, "fa"), 30)
    note = lead_notes(TEAM, "idle_notification")[-1]
    assert "exited during the turn" in json.dumps(note)
    ok("send", "fa", "still there?")
    wait_until(lambda: answered(TEAM, "fa", 2), 60)
    assert lead_notes(TEAM, "idle_notification")[-1]["summary"] == "alive again"
    assert [e["session"] for e in fake_log(fake, "session/load")]  # the session, loaded again
